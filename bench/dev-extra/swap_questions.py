"""Same-topic unanswerable questions for the SQuAD dev library, made by swapping one name.

SQuAD v2's unanswerable questions are written about the very article: they look answerable
and share its words, but ask about something it does not say. The commonest kind is an
*entity swap*: "When did the Beatles first play Hamburg?" asked of an article about the
Rolling Stones. The bench's own unanswerable SQuAD questions are about articles that are not
in the library at all, which is the easy case. This builds the hard case mechanically, so
the confidence model can be fit and judged on it:

for each answerable ``squad-dev`` question, the name or number of the question that its
gold article mentions and that is rarest there is replaced by a name (or a year, a number)
of the same shape that the gold article never mentions, drawn with a fixed seed from the
other articles of ``squad-dev`` and ``squad-distractors``. Questions without such a word are
skipped. Output: ``squad-swapped.jsonl`` beside this file (``answerable: false``,
``unanswerable_reason: "entity_swapped"``, and the swap, for reading).

Run: ``uv run python bench/dev-extra/swap_questions.py``.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parents[2] / "shared" / "bench"
SEED = 26
NAME = re.compile(r"\b[A-Z][a-z]{2,}\b")
NUMBER = re.compile(r"\b\d{2,4}\b")
COMMON = {"The", "What", "When", "Where", "Which", "Who", "Whom", "Whose", "How", "Why",
          "Along", "During", "After", "Before", "In", "On", "For", "From", "With", "About",
          "Did", "Does", "Was", "Were", "Are", "Is", "Can", "This", "That", "These", "Those",
          "According", "Besides", "Other", "Many", "Most", "Some", "Name", "Give", "Paragraph"}


def words(pattern: re.Pattern[str], text: str) -> set[str]:
    return {w for w in pattern.findall(text) if w not in COMMON}


def main() -> int:
    articles = {p.name: p.read_text(encoding="utf-8")
                for folder in ("squad-dev/corpus", "squad-distractors")
                for p in sorted((BENCH / folder).glob("*.md"))}
    pool_names = sorted(set().union(*(words(NAME, t) for t in articles.values())))
    pool_numbers = sorted(set().union(*(words(NUMBER, t) for t in articles.values())))
    rng = random.Random(SEED)
    out: list[dict[str, object]] = []
    for line in (BENCH / "squad-dev" / "questions.jsonl").read_text(encoding="utf-8").splitlines():
        q = json.loads(line)
        if not q.get("answerable", True):
            continue
        article = articles[Path(q["gold_file"]).name]
        present = [(article.count(w), w, NAME if NAME.fullmatch(w) else NUMBER)
                   for w in words(NAME, q["question"]) | words(NUMBER, q["question"])
                   if w in article and not q["question"].startswith(w)]
        if not present:
            continue
        _, old, shape = min(present)
        pool = pool_names if shape is NAME else pool_numbers
        choices = [w for w in pool if w not in article
                   and (shape is NAME or len(w) == len(old))]
        if not choices:
            continue
        new = rng.choice(choices)
        question = re.sub(rf"\b{re.escape(old)}\b", new, q["question"])
        out.append({"id": f"sq-swap-{len(out) + 1:04d}", "split": "dev", "question": question,
                    "answerable": False, "gold_file": None, "gold_doc": None,
                    "gold_section": None, "answers": [], "gold_anchor": None,
                    "unanswerable_reason": "entity_swapped", "about_doc": q["gold_doc"],
                    "swapped": [old, new], "from_id": q["id"]})
    target = HERE / "squad-swapped.jsonl"
    target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out),
                      encoding="utf-8")
    print(f"{len(out)} questions -> {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
