"""BERT's uncased WordPiece tokenizer, read from a ``tokenizer.json``, in plain Python.

Why not the ``tokenizers`` package: it brings huggingface-hub and its hf-xet downloader, about
30 MB of the installed tool for an algorithm of a few dozen lines that the project runs on
short texts (a chunk tokenizes in well under a millisecond here, against ~50 ms to embed it).

What it reproduces, in the order ``tokenizers`` applies it (BertNormalizer, BertPreTokenizer,
WordPiece): special tokens (``[SEP]``…) written in the text are kept whole; then ``clean_text``
drops NUL, U+FFFD and control/format characters and turns whitespace into spaces;
``handle_chinese_chars`` puts spaces around CJK ideographs; accents are stripped (NFD, then
non-spacing marks dropped) and every character is lowercased on its own; words split on
whitespace and each punctuation character stands alone; each word becomes the longest
vocabulary pieces from the left (``##`` marks a continuation), or ``[UNK]`` when a piece is
missing or the word is longer than ``max_input_chars_per_word``.
``tests/test_wordpiece.py`` compares the ids with ``tokenizers`` on real text and on every
character of the Basic Multilingual Plane. Characters that Unicode assigned after the tables
``tokenizers`` was built with (newer emoji and scripts) may be read differently; they are
``[UNK]`` either way in this vocabulary.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from pathlib import Path
from typing import Any

# Unicode's White_Space property (what Rust's char::is_whitespace tests).
_WHITESPACE = frozenset(
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000")
_CJK = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
        (0x2B740, 0x2B81F), (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
# 0x2B920, not 0x2B820 as in BERT's original: tokenizers' table, which is what must be matched.


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK)


def _is_punctuation(char: str) -> bool:
    return (char.isascii() and not char.isalnum() and 33 <= ord(char) <= 126) or (
        unicodedata.category(char).startswith("P"))


def _is_dropped(char: str) -> bool:
    """NUL, U+FFFD and control/format/private-use characters (tab, LF and CR are whitespace)."""
    if char in "\t\n\r":
        return False
    return char in "\x00\ufffd" or unicodedata.category(char) in ("Cc", "Cf", "Co")


@lru_cache(maxsize=65536)
def _normalize_char(char: str) -> str:
    """One character after BertNormalizer (clean, CJK spacing, strip accents, lowercase)."""
    if _is_dropped(char):
        return ""
    if char in _WHITESPACE:
        return " "
    stripped = "".join(c for c in unicodedata.normalize("NFD", char)
                       if unicodedata.category(c) != "Mn")
    lowered = "".join(c.lower() for c in stripped)
    return f" {lowered} " if _is_cjk(char) else lowered


@lru_cache(maxsize=65536)
def _splits_words(char: str) -> bool:
    return char in _WHITESPACE or _is_punctuation(char)


# The characters that normalise to a space (whitespace that is not also a dropped control
# character, like U+0085): a text split at them encodes as the concatenation of its parts.
_SPACES = re.compile("[" + re.escape("".join(
    sorted(c for c in _WHITESPACE if _normalize_char(c) == " "))) + "]+")
_CACHED_WORDS = 1 << 17


class WordPieceTokenizer:
    """Token ids of texts, without ``[CLS]``/``[SEP]`` around them and without truncation."""

    def __init__(self, vocab: dict[str, int], special: list[str], *, unk: str = "[UNK]",
                 prefix: str = "##", max_word_chars: int = 100) -> None:
        self._vocab = vocab
        self._unk = vocab[unk]
        self._prefix = prefix
        self._max_word_chars = max_word_chars
        alternatives = "|".join(re.escape(t) for t in sorted(special, key=len, reverse=True))
        self._special = re.compile(f"({alternatives})") if alternatives else None
        self._word_cache: dict[str, list[int]] = {}
        self._piece_cache: dict[str, list[int]] = {}

    @classmethod
    def from_file(cls, path: Path) -> WordPieceTokenizer:
        """Read a Hugging Face ``tokenizer.json`` of BERT's uncased kind; ValueError otherwise."""
        spec: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        model, normalizer = spec.get("model") or {}, spec.get("normalizer") or {}
        pre_tokenizer = spec.get("pre_tokenizer") or {}
        expected = {"clean_text": True, "handle_chinese_chars": True, "lowercase": True}
        if (model.get("type") != "WordPiece" or normalizer.get("type") != "BertNormalizer"
                or any(normalizer.get(k) != v for k, v in expected.items())
                or normalizer.get("strip_accents") not in (None, True)
                or pre_tokenizer.get("type") != "BertPreTokenizer"):
            raise ValueError(f"{path} is not an uncased BERT WordPiece tokenizer")
        special = [t["content"] for t in spec.get("added_tokens", [])
                   if not t.get("normalized", True)]
        return cls(dict(model["vocab"]), special, unk=model.get("unk_token", "[UNK]"),
                   prefix=model.get("continuing_subword_prefix", "##"),
                   max_word_chars=model.get("max_input_chars_per_word", 100))

    def token_to_id(self, token: str) -> int | None:
        return self._vocab.get(token)

    def encode(self, text: str) -> list[int]:
        """The ids of ``text``: the ids of its whitespace-separated words, concatenated.

        Normalisation is per character and a space splits words at every stage, so each word
        is read once and remembered (books repeat their words; a bounded cache)."""
        ids: list[int] = []
        for word in _SPACES.split(text):
            ids.extend(self._cached(word))
        return ids

    def count(self, text: str) -> int:
        """``len(self.encode(text))``, without building the list."""
        return sum(len(self._cached(word)) for word in _SPACES.split(text))

    def _cached(self, word: str) -> list[int]:
        found = self._word_cache.get(word)
        if found is None:
            if len(self._word_cache) >= _CACHED_WORDS:
                self._word_cache.clear()
            found = self._word_cache[word] = self._encode_uncached(word)
        return found

    def _encode_uncached(self, text: str) -> list[int]:
        ids: list[int] = []
        pieces = self._special.split(text) if self._special else [text]
        for index, piece in enumerate(pieces):
            if index % 2:  # a special token written in the text
                ids.append(self._vocab[piece])
            else:
                for word in self._words("".join(map(_normalize_char, piece))):
                    ids.extend(self._cached_word_ids(word))
        return ids

    def _cached_word_ids(self, word: str) -> list[int]:
        """``_word_ids`` remembered: a chunker counting ever longer prefixes of one long
        whitespace-free word (a base64 blob) reads each of its sub-words once (x-fit F2)."""
        if len(word) > self._max_word_chars:
            return [self._unk]
        found = self._piece_cache.get(word)
        if found is None:
            if len(self._piece_cache) >= _CACHED_WORDS:
                self._piece_cache.clear()
            found = self._piece_cache[word] = self._word_ids(word)
        return found

    @staticmethod
    def _words(text: str) -> list[str]:
        words: list[str] = []
        start = 0
        for end, char in enumerate(text):
            if _splits_words(char):
                if start < end:
                    words.append(text[start:end])
                if char not in _WHITESPACE:
                    words.append(char)
                start = end + 1
        if start < len(text):
            words.append(text[start:])
        return words

    def _word_ids(self, word: str) -> list[int]:
        """Longest-match-first pieces of one word; ``[UNK]`` alone if any piece is missing."""
        if len(word) > self._max_word_chars:
            return [self._unk]
        ids: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else self._prefix + word[start:end]
                found = self._vocab.get(piece)
                if found is not None:
                    ids.append(found)
                    break
                end -= 1
            else:
                return [self._unk]
            start = end
        return ids
