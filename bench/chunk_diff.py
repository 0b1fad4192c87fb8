"""Which dev files' chunks a change re-cuts: every chunk of every file, hashed, no model run.

Run: ``uv run python bench/chunk_diff.py [--sets books,markdown,squad] --out FILE.json
[--against OTHER.json]``. Each file of the sets (``retrieval_eval.dev_sets``) is parsed and
cut exactly as ``ingest`` would with the embedded model (its tokenizer only: the model is
not loaded), and the file's chunks — breadcrumb, text, character span, pages and lines —
are hashed. ``--against`` a dump written by another checkout (run this script with that
checkout's environment: ``cd OTHER && uv run python THIS/bench/chunk_diff.py``) prints
each file whose chunks differ and how many files are byte-identical, so a change meant for
one kind of file can show that it left the others untouched.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from grimoire_beholder.config import Config, config_from_mapping
from grimoire_beholder.ingest.build import build_book, file_info, piece_limit
from grimoire_beholder.models import make_embedder
from grimoire_beholder.parse import parse_file
from grimoire_beholder.structure.piece_limit import PieceLimit
from retrieval_eval import dev_sets


def file_chunks(path: Path, config: Config, limit: PieceLimit | None) -> tuple[int, str]:
    """(number of chunks, sha256 of all of them) for one file as ingest would cut it."""
    book = build_book(parse_file(path), slug="x", name="x", info=file_info(path),
                      config=config, limit=limit)
    digest = hashlib.sha256()
    count = 0
    for chapter in book.chapters:
        for section in chapter.sections:
            for c in section.chunks:
                count += 1
                digest.update(json.dumps([section.breadcrumb, c.text, c.char_start, c.char_end,
                                          c.page_start, c.page_end, c.line_start, c.line_end],
                                         ensure_ascii=False).encode())
    return count, digest.hexdigest()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", default="books,markdown,squad")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--against", type=Path, default=None)
    args = ap.parse_args()
    config = config_from_mapping({"embedding_backend": "embedded", "llm_backend": "none"},
                                 base_dir=str(args.out.parent))
    limit = piece_limit(make_embedder(config))
    known = dev_sets()
    dump: dict[str, list[object]] = {}
    for name in [s.strip() for s in args.sets.split(",") if s.strip()]:
        for path in known[name].files:
            dump[f"{name}/{path.name}"] = list(file_chunks(path, config, limit))
    args.out.write_text(json.dumps(dump, indent=1), encoding="utf-8")
    if args.against is None:
        return 0
    other = json.loads(args.against.read_text(encoding="utf-8"))
    same = 0
    for key, (count, digest) in dump.items():
        if key not in other:
            print(f"{key}: not in {args.against.name}")
        elif other[key][1] == digest:
            same += 1
        else:
            print(f"{key}: {other[key][0]} → {count} chunks, re-cut")
    print(f"{same} of {len(dump)} files cut into byte-identical chunks", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
