"""Retrieval evaluation: ask a question set through :meth:`Library.search` and score it.

Why it lives in the core: a user tuning ``chunk_size`` or ``fusion`` on their own books needs
numbers, not impressions, and must not depend on the bench's ``score.py`` (which users do not
have). The formats are the bench's, so runs written here can also be scored there:

* a question is a JSON object with ``id``, ``question``, ``answerable`` and the gold fields
  (``gold_file``; SQuAD-style: ``gold_section``, ``answers``, ``gold_anchor``; book-style:
  ``evidence`` plus ``gold_page`` for PDFs or ``gold_chapter``/``gold_section`` otherwise);
* a run record is ``{"id", "abstained", "results": [{"file", "chapter", "section",
  "page_start", "page_end", "text"}, ...]}``, best first.

A result is *relevant* ("hit") when it comes from the gold file and either its text holds
the gold evidence (the *strict* rule) or it cites the gold location (section, page or
chapter). Unanswerable questions are left out of recall and MRR. Text is compared after
:func:`normalize` (NFKC, lower case, every run of non-word characters → one space), so
punctuation, quotes and line breaks never decide a match.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grimoire_beholder.errors import GrimoireError
from grimoire_beholder.text import plural

if TYPE_CHECKING:
    from grimoire_beholder import SearchHit
    from grimoire_beholder.library import Library

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
BREADCRUMB_SEPARATOR = " › "
# A chunk boundary may cut through the evidence phrase: its first or last 60% still counts.
EVIDENCE_SHARE = 0.6
_MIN_EVIDENCE_WORDS = 3
_NON_WORD = re.compile(r"[\W_]+")
# "Chapter 3 ", "2.1 ", "A " ... in front of a title (after normalisation dots are spaces).
_NUMBER_PREFIX = re.compile(
    r"^(?:chapter|section|part|appendix)?\s*(?:\d+|[a-z])(?:\s\d+)*\s+(?=\S)")


def normalize(text: str) -> str:
    """Text reduced to lower-case words separated by single spaces, for robust comparison."""
    folded = unicodedata.normalize("NFKC", text).lower()
    return _NON_WORD.sub(" ", folded).strip()


def same_title(cited: str | None, gold: str | None) -> bool:
    """Whether two headings name the same thing, ignoring case, punctuation and numbering.

    Numbering is ignored because outlines disagree about it ("2.1 Imports" vs "Imports").
    """
    if not cited or not gold:
        return False
    a, b = normalize(cited), normalize(gold)
    if a == b:
        return True
    bare_a, bare_b = _NUMBER_PREFIX.sub("", a), _NUMBER_PREFIX.sub("", b)
    return bool(bare_a) and bare_a == bare_b


def holds_evidence(text: str, evidence: str) -> bool:
    """Whether ``text`` contains ``evidence``, or its first or last 60% of words."""
    haystack, needle = normalize(text), normalize(evidence)
    if not needle:
        return False
    if needle in haystack:
        return True
    words = needle.split()
    share = max(_MIN_EVIDENCE_WORDS, round(len(words) * EVIDENCE_SHARE))
    if len(words) <= share:
        return False
    return " ".join(words[:share]) in haystack or " ".join(words[-share:]) in haystack


def _page_span(result: Mapping[str, Any]) -> tuple[int, int] | None:
    start = result.get("page_start")
    if start is None:
        page = result.get("page")
        return (int(page), int(page)) if isinstance(page, int) else None
    end = result.get("page_end")
    return int(start), int(start if end is None else end)


def judge(question: Mapping[str, Any], result: Mapping[str, Any]) -> tuple[bool, bool]:
    """(hit, strict) for one result of one answerable question.

    ``strict`` is the text rule alone; ``hit`` also accepts a cited gold location.
    """
    cited_file = result.get("file") or ""
    gold_file = question.get("gold_file") or ""
    if not cited_file or os.path.basename(cited_file) != os.path.basename(gold_file):
        return False, False
    text = normalize(result.get("text") or "")
    if question.get("gold_anchor") is not None:  # SQuAD-style: a paragraph is the gold
        section_ok = same_title(result.get("section"), question.get("gold_section"))
        answer_in = any(normalize(a) and normalize(a) in text
                        for a in question.get("answers") or [])
        strict = bool(text) and (normalize(question["gold_anchor"]) in text
                                 or (answer_in and section_ok))
        return strict or section_ok, strict
    strict = bool(text) and holds_evidence(text, question.get("evidence") or "")
    if question.get("gold_page") is not None:
        span = _page_span(result)
        located = span is not None and span[0] <= int(question["gold_page"]) <= span[1]
    else:
        gold_section = question.get("gold_section")
        section_ok = gold_section is None or same_title(result.get("section"), gold_section)
        if not section_ok and gold_section and "gold_line" in question:
            # Markdown gold sections are heading paths; citing the deepest heading suffices.
            last = gold_section.split(BREADCRUMB_SEPARATOR)[-1]
            section_ok = same_title(result.get("section"), last)
        located = same_title(result.get("chapter"), question.get("gold_chapter")) and section_ok
    return strict or located, strict


# -- questions and runs --------------------------------------------------------------------

def load_questions(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The questions of a JSONL file (blank lines skipped); errors name the line. A UTF-8
    byte order mark (Windows editors write one) is skipped, and lines end at ``\n`` (or
    ``\r\n``) only: a JSON string may hold U+2028 or U+0085 as written, which
    ``splitlines`` took for line ends."""
    source = Path(path)
    try:
        lines = source.read_text(encoding="utf-8-sig").split("\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise GrimoireError(f"cannot read questions file {source}: {exc}") from exc
    questions: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GrimoireError(f"{source}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(item, dict):
            raise GrimoireError(f"{source}:{number}: a question must be a JSON object")
        missing = [k for k in ("id", "question") if not isinstance(item.get(k), str)]
        if missing:
            raise GrimoireError(
                f"{source}:{number}: missing {' and '.join(missing)} (every line needs the "
                f'strings "id" and "question"; see "Evaluating on your own questions" in the '
                "README)")
        item.setdefault("answerable", True)
        questions.append(item)
    return questions


# Answerable questions need the gold file and one of these, or no result can ever count.
GOLD_KEYS = ("evidence", "gold_page", "gold_chapter", "gold_anchor")


def scorable(question: Mapping[str, Any]) -> bool:
    """Whether a search can score on ``question``: an unanswerable one always (by abstaining);
    an answerable one when it names ``gold_file`` and one of :data:`GOLD_KEYS` (see
    :func:`judge`: ``gold_section`` alone, or ``answers`` alone, can never match)."""
    if not question.get("answerable", True):
        return True
    return bool(question.get("gold_file")) and any(
        question.get(key) not in (None, "") for key in GOLD_KEYS)


def scorable_questions(questions: Sequence[dict[str, Any]], source: str | os.PathLike[str]
                       ) -> tuple[list[dict[str, Any]], list[str]]:
    """(the questions that can be scored, the ids of those that cannot); a set with none
    that can is refused rather than scored 0.000."""
    kept = [q for q in questions if scorable(q)]
    if not kept:
        raise GrimoireError(
            f"no question in {source} can be scored ({plural(len(questions), 'question')} "
            "read): an answerable "
            'question needs "gold_file" and one of "evidence", "gold_page", "gold_chapter" or '
            '"gold_anchor" (an unanswerable one, "answerable": false, needs nothing more)')
    return kept, [q["id"] for q in questions if not scorable(q)]


def section_title(breadcrumb: str, chapter: str) -> str:
    """A section's own title: the breadcrumb's last element (the chapter for a lead-in)."""
    last = breadcrumb.split(BREADCRUMB_SEPARATOR)[-1].strip() if breadcrumb else ""
    return last or chapter


def result_record(hit: SearchHit) -> dict[str, Any]:
    """One search hit in the bench run format."""
    return {
        "file": os.path.basename(hit.source_path),
        "chapter": hit.chapter,
        "section": section_title(hit.section, hit.chapter),
        "page_start": hit.page_start,
        "page_end": hit.page_end,
        "text": hit.text,
        "role": hit.role,  # not scored; shows how much back matter a run returns
    }


def run_questions(lib: Library, questions: Iterable[Mapping[str, Any]],
                  mode: str | None = None, top_k: int = 10) -> list[dict[str, Any]]:
    """Search every question (unfiltered, as a user would) and return the run records.

    ``abstained`` is the search's ``low_confidence`` flag (confidence below
    ``min_confidence``, or no hit at all); the results are kept either way, as the bench's
    format expects.
    """
    run = []
    for question in questions:
        found = lib.search(question["question"], top_k=top_k, mode=mode)
        run.append({"id": question["id"], "abstained": bool(found.low_confidence),
                    "results": [result_record(hit) for hit in found.hits]})
    return run


# -- scoring -------------------------------------------------------------------------------

def _group(question_id: str) -> str:
    """The question set an id belongs to: everything before its last ``-`` part."""
    return question_id.rsplit("-", 1)[0]


def _metrics(questions: Sequence[Mapping[str, Any]], by_id: Mapping[str, Mapping[str, Any]],
             ks: Sequence[int], retrieved: int | None = None) -> dict[str, Any]:
    answerable = [q for q in questions if q.get("answerable", True)]
    out: dict[str, Any] = {
        "n_answerable": len(answerable),
        "n_unanswerable": len(questions) - len(answerable),
        "missing_in_run": sum(q["id"] not in by_id for q in questions),
    }
    depth = max(ks)
    for kind, prefix in ((0, ""), (1, "strict_")):
        first_hits: list[int | None] = []
        for question in answerable:
            record = by_id.get(question["id"])
            results = record.get("results", []) if record else []
            first_hits.append(next((i for i, r in enumerate(results)
                                    if judge(question, r)[kind]), None))
        total = len(answerable)
        measured = total and (retrieved is None or depth <= retrieved)
        for k in ks:
            found = sum(1 for f in first_hits if f is not None and f < k)
            out[f"{prefix}recall@{k}"] = (round(found / total, 4) if total and (
                retrieved is None or k <= retrieved) else None)
        reciprocal = sum(1.0 / (f + 1) for f in first_hits if f is not None and f < depth)
        out[f"{prefix}mrr@{depth}"] = round(reciprocal / total, 4) if measured else None
    return out


def score_run(questions: Sequence[Mapping[str, Any]], run: Iterable[Mapping[str, Any]],
              ks: Sequence[int] = DEFAULT_KS, *, retrieved: int | None = None
              ) -> dict[str, Any]:
    """Recall@k and MRR@max(k), by the hit rule and the strict (text-only) rule.

    ``retrieved``: how many hits a question was searched for; a recall or MRR deeper than
    that is not measured (None) rather than counted from the fewer hits there are.

    Returns the metrics over all questions plus ``groups``: the same per question set (the
    id without its last ``-`` part, e.g. ``bk-dev-rdata``), so books are reported apart.
    A question absent from the run counts as a miss (and in ``missing_in_run``).
    """
    if not ks or min(ks) < 1:
        raise GrimoireError("k values must be positive")
    by_id = {record["id"]: record for record in run}
    out = _metrics(questions, by_id, ks, retrieved)
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for question in questions:
        groups.setdefault(_group(question["id"]), []).append(question)
    out["groups"] = {name: _metrics(members, by_id, ks, retrieved)
                     for name, members in groups.items()}
    return out


def abstention(questions: Sequence[Mapping[str, Any]],
               run: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """How often the run abstained on unanswerable vs answerable questions.

    The first should be high (the library does not hold those answers), the second low.
    """
    abstained = {r["id"] for r in run if r.get("abstained")}
    unanswerable = [q["id"] for q in questions if not q.get("answerable", True)]
    answerable = [q["id"] for q in questions if q.get("answerable", True)]

    def share(ids: list[str]) -> float | None:
        return round(sum(i in abstained for i in ids) / len(ids), 4) if ids else None

    return {"unanswerable": len(unanswerable),
            "unanswerable_abstained": sum(i in abstained for i in unanswerable),
            "unanswerable_abstained_rate": share(unanswerable),
            "answerable": len(answerable),
            "answerable_abstained": sum(i in abstained for i in answerable),
            "answerable_abstained_rate": share(answerable)}
