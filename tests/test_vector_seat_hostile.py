"""The vector arm's seat (``ranking.seat``) under hostile settings: where it must not act."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from fakes import FakeEmbedder
from grimoire_beholder.library import Library
from helpers import fake_config, write_markdown_book


class SynonymEmbedder(FakeEmbedder):
    """The fake bag of words, reading 'wyrmbane' as 'antidote' (a meaning BM25 misses)."""

    def _one(self, text: str) -> np.ndarray:
        return super()._one(text.lower().replace("wyrmbane", "antidote"))


FILLER = ("The keepers of the hall kept lamps, ledgers, brooms and bells in good order, "
          "and wrote down every visitor who came through the northern gate. ")
SHARERS = {f"Hall {n}": f"Hall {n} stores the basilisk antidote ledger. " + FILLER * 3
           for n in range(1, 9)}
ANSWER = ("Wyrmbane brewed from moonwort is the only wyrmbane that works; drink the wyrmbane "
          "warm. ") + FILLER


def _book(tmp_path: Path) -> Path:
    return write_markdown_book(tmp_path / "halls.md", "Halls",
                               {"Halls": {**SHARERS, "Remedies": ANSWER}})


def test_convex_fusion_at_alpha_zero_seats_nothing(tmp_path: Path) -> None:
    # fusion_alpha 0 is documented as "keyword only": a chunk no keyword matches (fused
    # score 0) must not be lifted above the keyword matches by the vector arm's seat
    config = fake_config(tmp_path, fusion_alpha=0.0)
    with Library.open(config=config, embedder=SynonymEmbedder()) as lib:
        lib.ingest(_book(tmp_path))
        assert "moonwort" in lib.search("basilisk antidote", mode="vector", top_k=1).hits[0].text
        hits = lib.search("basilisk antidote", mode="hybrid", top_k=8).hits
    assert len(hits) == 8
    assert all(hit.ranks["keyword"] is not None for hit in hits), [h.ranks for h in hits]
