"""``grimoire-beholder eval``: run files with abstention, metrics per mode, JSON output."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from grimoire_beholder.cli.entry import app


def _setup(tmp_path: Path, sample_book: Path) -> tuple[Path, Path]:
    config = tmp_path / "config.toml"
    config.write_text('db_path = "lib.db"\nembedding_backend = "fake"\nchunk_size = 120\n'
                      'chunk_overlap = 20\n')
    result = CliRunner().invoke(app, ["ingest", str(sample_book), "--quiet", "-c", str(config)])
    assert result.exit_code == 0, result.output
    questions = tmp_path / "questions.jsonl"
    rows = [
        {"id": "g-1", "question": "copper tape and beer traps protect lettuce from slugs",
         "answerable": True, "gold_file": "garden.md", "gold_chapter": "Pests",
         "gold_section": "Slugs", "evidence": "copper tape and beer traps"},
        {"id": "g-2", "question": "ladybirds keep aphids down", "answerable": True,
         "gold_file": "garden.md", "gold_chapter": "Pests", "gold_section": "Aphids",
         "evidence": "Ladybirds and a jet of water"},
        {"id": "g-3", "question": "who won the 1966 world cup final", "answerable": False},
    ]
    questions.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return config, questions


def test_eval_all_modes_json_and_run_files(tmp_path: Path, sample_book: Path) -> None:
    config, questions = _setup(tmp_path, sample_book)
    run_out = tmp_path / "run.jsonl"
    result = CliRunner().invoke(app, ["eval", str(questions), "--mode", "all", "--run-out",
                                      str(run_out), "--json", "-c", str(config)])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) == {"hybrid", "vector", "keyword"}
    keyword = data["keyword"]
    assert keyword["recall@1"] == 1.0 and keyword["mrr@10"] == 1.0
    assert keyword["abstention"]["unanswerable"] == 1
    assert keyword["abstention"]["answerable"] == 2
    for mode in data:
        records = [json.loads(line) for line in
                   (tmp_path / f"run-{mode}.jsonl").read_text().splitlines()]
        assert [r["id"] for r in records] == ["g-1", "g-2", "g-3"]
        assert all(isinstance(r["abstained"], bool) for r in records)
        assert records[0]["results"]
    assert keyword["abstention"]["unanswerable_abstained"] == 1  # no keyword hit at all
    assert not (tmp_path / "lib.stats.db").exists()  # evaluation is not counted as usage


def test_eval_table_and_bad_mode(tmp_path: Path, sample_book: Path) -> None:
    config, questions = _setup(tmp_path, sample_book)
    result = CliRunner().invoke(app, ["eval", str(questions), "--mode", "keyword",
                                      "--top-k", "3", "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "| keyword | 1.000 |" in result.stdout and "/1 |" in result.stdout
    bad = CliRunner().invoke(app, ["eval", str(questions), "--mode", "semantic",
                                   "-c", str(config)])
    assert bad.exit_code != 0 and "'semantic' is not one of" in bad.output


def test_eval_says_which_fields_count(tmp_path: Path, sample_book: Path) -> None:
    """The formats a new user tries first: no id is named as such; a set no answer could
    match is refused instead of scoring a silent 0.000; unmatchable questions are named."""
    config, _ = _setup(tmp_path, sample_book)
    guesses = tmp_path / "guess.jsonl"
    guesses.write_text('{"question": "what keeps slugs away?", "answers": ["copper"]}\n')
    result = CliRunner().invoke(app, ["eval", str(guesses), "-c", str(config)])
    assert result.exit_code == 1 and "missing id" in result.stderr
    assert '"id" and "question"' in result.stderr

    guesses.write_text('{"id": "q1", "question": "what keeps slugs away?", '
                       '"gold_section": "Slugs"}\n')
    result = CliRunner().invoke(app, ["eval", str(guesses), "-c", str(config)])
    assert result.exit_code == 1 and result.stdout == ""
    assert "no question in" in result.stderr and "(1 question read)" in result.stderr
    assert '"gold_file"' in result.stderr

    guesses.write_text(
        '{"id": "q1", "question": "what keeps slugs away?", "gold_section": "Slugs"}\n'
        '{"id": "q2", "question": "copper tape and beer traps", "gold_file": "garden.md", '
        '"evidence": "copper tape and beer traps"}\n')
    result = CliRunner().invoke(app, ["eval", str(guesses), "--mode", "keyword", "--json",
                                      "-c", str(config)])
    assert result.exit_code == 0, result.output
    assert "left out 1 answerable question" in result.stderr and "q1" in result.stderr
    scores = json.loads(result.stdout)["keyword"]
    assert scores["n_answerable"] == 1 and scores["recall@1"] == 1.0


def test_eval_does_not_report_recall_deeper_than_the_hits_it_searched_for(
        tmp_path: Path, sample_book: Path) -> None:
    """With --top-k 1 a question has one hit: R@5, R@10 and MRR@10 were counted from it (a
    gold at rank 2 counted as missed at 5 and 10); now they are not measured (— and null)."""
    config, questions = _setup(tmp_path, sample_book)
    args = ["eval", str(questions), "--mode", "keyword", "-c", str(config)]
    deep = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)["keyword"]
    one = CliRunner().invoke(app, [*args, "--json", "--top-k", "1"])
    assert one.exit_code == 0, one.output
    shallow = json.loads(one.stdout)["keyword"]
    assert shallow["recall@1"] == deep["recall@1"]
    for key in ("recall@5", "recall@10", "mrr@10", "strict_recall@10", "strict_mrr@10"):
        assert deep[key] is not None and shallow[key] is None, key
        assert all(group[key] is None for group in shallow["groups"].values()), key
    table = CliRunner().invoke(app, [*args, "--top-k", "5"]).stdout
    row = next(line for line in table.splitlines() if line.startswith("| keyword |"))
    assert row.split(" | ")[1:5] == [f"{deep['recall@1']:.3f}", f"{deep['recall@5']:.3f}",
                                      "—", "—"]


def test_eval_reads_a_windows_saved_file_and_line_separators_inside_strings(
        tmp_path: Path, sample_book: Path) -> None:
    """A questions file saved by a Windows editor (a UTF-8 byte order mark, CRLF) was
    'not valid JSON (Unexpected UTF-8 BOM …)'; a question holding U+2028 or U+0085 as
    written (json.dumps(…, ensure_ascii=False) keeps them) was cut in two at it."""
    config, questions = _setup(tmp_path, sample_book)
    rows = [json.loads(line) for line in questions.read_text().splitlines()]
    rows[2]["question"] = "who won the 1966\u2028world cup\u0085final"
    text = "\r\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\r\n"
    questions.write_bytes(b"\xef\xbb\xbf" + text.encode())
    result = CliRunner().invoke(app, ["eval", str(questions), "--mode", "keyword", "--json",
                                      "-c", str(config)])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)["keyword"]
    assert scores["recall@1"] == 1.0 and scores["abstention"]["unanswerable"] == 1
