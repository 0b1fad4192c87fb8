"""The plain-Python WordPiece tokenizer gives the ids the ``tokenizers`` package gives.

``tokenizers`` is a dev dependency only; the runtime reads ``tokenizer.json`` with
``models/wordpiece.py``. Compared on real prose (the sample, and the bench's Markdown when
``../shared`` is present), on text made to be awkward, and on every BMP character.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from tokenizers import Tokenizer

from grimoire_beholder.errors import ModelError
from grimoire_beholder.models.minilm_files import find_model_dir
from grimoire_beholder.models.rerank_onnx import OnnxReranker
from grimoire_beholder.models.wordpiece import WordPieceTokenizer
from helpers import BENCH

SAMPLE = Path(__file__).resolve().parent.parent / "samples" / "lighthouse-keepers-handbook.md"
AWKWARD = [
    "Naïve café façade — Ångström, Øresund, Straße, İstanbul, ΣΟΦΙΑ σοφός, Ξ",
    "ﬁsh ﬂour œuvre Æsir ½ ² ℃ ™ Ⅻ ｆｕｌｌ－ｗｉｄｔｈ　ｓｐａｃｅ",
    "中文分词：你好，世界！日本語のテキストと한국어 텍스트. 𠀀𪜀 丽",
    "tabs\tnew\nlines\r\nnbsp\xa0zwsp\u200bbom\ufeffnul\x00vt\x0bnel\x85fffd\ufffd end",
    "[CLS] literal [SEP] tokens [MASK] inside [PAD] text [UNK]; [sep] lower is plain",
    "e\u0301 a\u0308 o\u0303\u0304 combining, emoji 😀🥰👍🏽 and ☃ ♥ ✓",
    "x" * 101 + " " + "y" * 100 + " antidisestablishmentarianism's re-entrant co-op",
    "$100.00 (approx.) — “quoted” ‘single’ «guillemets» [brackets] {braces} <angle> @#%^&*_~`|\\/",
    "",
]


@pytest.fixture(scope="module")
def tokenizers() -> tuple[Tokenizer, WordPieceTokenizer]:
    path = find_model_dir() / "tokenizer.json"
    reference = Tokenizer.from_file(str(path))
    reference.no_truncation()
    reference.no_padding()
    return reference, WordPieceTokenizer.from_file(path)


def _real_texts() -> list[str]:
    texts = SAMPLE.read_text(encoding="utf-8").split("\n\n")
    for path in sorted((BENCH / "markdown-dev").rglob("*.md"))[:40]:  # absent: sample only
        texts += path.read_text(encoding="utf-8").split("\n\n")
    return texts


@pytest.mark.slow  # every BMP character / the real vocabulary against tokenizers
@pytest.mark.parametrize("source", ["real", "awkward"])
def test_ids_match_tokenizers(tokenizers: tuple[Tokenizer, WordPieceTokenizer],
                              source: str) -> None:
    reference, ours = tokenizers
    texts = _real_texts() if source == "real" else AWKWARD
    expected = [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]
    assert [ours.encode(t) for t in texts] == expected


@pytest.mark.slow  # every BMP character / the real vocabulary against tokenizers
def test_every_bmp_character_reads_as_tokenizers_reads_it(
        tokenizers: tuple[Tokenizer, WordPieceTokenizer]) -> None:
    """Up to Unicode's later additions: tokenizers' character tables predate them."""
    reference, ours = tokenizers
    chars = [chr(c) for c in range(0x10000) if not 0xD800 <= c <= 0xDFFF]
    texts = [f"a{c}b {c}Ä{c}" for c in chars]
    expected = [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]
    differing = [c for c, text, ids in zip(chars, texts, expected, strict=True)
                 if ours.encode(text) != ids]
    # Categories Unicode changed after tokenizers' tables were made (Po→So, Mn→Mc, Lo→Mn).
    recategorised = {"\u166d", "\u1734", "\u1885", "\u1886"}
    old = [c for c in differing
           if unicodedata.ucd_3_2_0.category(c) != "Cn" and c not in recategorised]
    assert old == []  # everything Unicode 3.2 had reads identically
    assert len(differing) < 300


def test_another_kind_of_tokenizer_is_refused(tmp_path: Path) -> None:
    spec = json.loads((find_model_dir() / "tokenizer.json").read_text(encoding="utf-8"))
    spec["normalizer"]["lowercase"] = False  # a cased model would be read wrongly
    (tmp_path / "tokenizer.json").write_text(json.dumps(spec), encoding="utf-8")
    (tmp_path / "model.onnx").write_bytes(b"")
    with pytest.raises(ValueError, match="not an uncased BERT WordPiece"):
        WordPieceTokenizer.from_file(tmp_path / "tokenizer.json")
    with pytest.raises(ModelError, match="not an uncased BERT WordPiece"):
        OnnxReranker(tmp_path).score("question", ["passage"])
