"""How much the web page adds to a search: ``GET /search?q=…`` against ``Library.search``.

Builds (or reuses) a library of the two books-dev books (R-data.pdf and the Calibre quick
start EPUB), starts ``grimoire-beholder web --no-browser`` on it as a subprocess and, for each
of their dev-set questions, times the search itself (``Library.search`` in this process) and
the whole search page over HTTP (the server's search, finding each hit's part in its section,
rendering the template, the round trip), alternating the two, warm. Also times the round
trip of the smallest file (the stylesheet), a section page and a PDF page image. Prints a
markdown table of medians.

    uv run python bench/web_latency.py                       # fake embedder: fast to build
    uv run python bench/web_latency.py --embedding embedded  # the real default model
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "shared" / "bench"
BOOKS = (BENCH / "books-dev" / "R-data.pdf", BENCH / "books-dev" / "calibre-quick-start-guide.epub")
QUESTIONS = BENCH / "books-dev" / "questions.jsonl"


def build_library(directory: Path, embedding: str) -> Path:
    """Ingest the books once (a re-run reuses the library); the config's path."""
    from grimoire_beholder.library import Library

    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "config.toml"
    config.write_text(f'[grimoire-beholder]\ndb_path = "book.db"\n'
                      f'embedding_backend = "{embedding}"\nllm_backend = "none"\n',
                      encoding="utf-8")
    with Library.open(config) as lib:
        for book in BOOKS:
            lib.ingest(book)
    return config


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedding", default="fake", choices=["fake", "embedded"])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/grimoire-web-bench"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import httpx

    from grimoire_beholder.library import Library

    config = build_library(args.dir / args.embedding, args.embedding)
    questions = [json.loads(line)["question"] for line in
                 QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    lib = Library.open(config, read_only=True)
    server = subprocess.Popen([sys.executable, "-m", "grimoire_beholder", "web",
                               "--no-browser", "--config", str(config)],
                              stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    url = server.stdout.readline().strip()  # http://127.0.0.1:P/?token=…
    client = httpx.Client(base_url=url.split("/?")[0], timeout=60)
    client.get(url)  # the cookie
    lib.warm_up()
    client.get("/search", params={"q": "warm up"})
    search: list[float] = []
    page: list[float] = []
    served: list[float] = []  # the server's own page time less its search (Server-Timing)
    for _ in range(args.rounds):
        for q in questions:
            started = time.perf_counter()
            lib.search(q)
            search.append(time.perf_counter() - started)
            started = time.perf_counter()
            response = client.get("/search", params={"q": q})
            page.append(time.perf_counter() - started)
            timing = dict(part.strip().split(";dur=")
                          for part in response.headers["server-timing"].split(","))
            served.append((float(timing["page"]) - float(timing["search"])) / 1000)
    pdf = next(b for b in lib.list_books() if b.source_type == "pdf")
    section, image, static = [], [], []
    for _ in range(20):
        started = time.perf_counter()
        assert client.get("/static/style.css").status_code == 200
        static.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert client.get(f"/book/{pdf.slug}/1/0").status_code == 200
        section.append(time.perf_counter() - started)
        started = time.perf_counter()
        assert client.get(f"/book/{pdf.slug}/page/7.png",
                          params={"highlight": "awk and perl"}).status_code == 200
        image.append(time.perf_counter() - started)
    extra = [p - s for p, s in zip(page, search, strict=True)]
    print(f"{len(questions)} questions × {args.rounds} rounds, {args.embedding} embedder, "
          f"load average {os.getloadavg()[0]:.2f}")
    print("| what | median ms |\n| --- | --- |")
    print(f"| `Library.search` | {median_ms(search):.1f} |")
    print(f"| `GET /search?q=…` (the whole page) | {median_ms(page):.1f} |")
    print(f"| `GET /static/style.css` (the round trip alone) | {median_ms(static):.1f} |")
    print(f"| the page's own share (page − search, per question) | {median_ms(extra):.1f} |")
    print(f"| the page's own share inside the server (`Server-Timing`: page − search) | "
          f"{median_ms(served):.1f} |")
    print(f"| `GET /book/SLUG/1/0` (a section) | {median_ms(section):.1f} |")
    print(f"| `GET /book/SLUG/page/7.png` (highlighted) | {median_ms(image):.1f} |")
    server.terminate()
    server.wait(timeout=30)
    client.close()
    lib.close()


if __name__ == "__main__":
    main()
