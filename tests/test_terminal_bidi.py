"""Probe of the forged-structure class (issue 24): a book title, heading or file name holding
a bidirectional override (U+202E RIGHT-TO-LEFT OVERRIDE, U+2066–U+2069 isolates) reached the
terminal raw, so the rest of a line of ``outline``/``list``/``query`` rendered reversed
(``Report‮fdp.exe`` reads as ``Reportexe.pdf``), the "Trojan Source" trick. They are escaped
like the other invisible controls; the library keeps the text as it is."""

from __future__ import annotations

import io

import pytest

from grimoire_beholder.cli.terminal import TerminalSafeStream, terminal_safe


@pytest.mark.parametrize("mark", ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e",
                                  "\u2066", "\u2067", "\u2068", "\u2069"])
def test_a_bidi_override_is_shown_escaped(mark: str) -> None:
    out = io.StringIO()
    TerminalSafeStream(out).write(f"Nav{mark}Bomb · loc. 1\n")
    assert mark not in out.getvalue()
    assert f"\\u{ord(mark):04x}" in out.getvalue()


def test_right_to_left_text_itself_is_untouched() -> None:
    text = "שלום עולם · مرحبا"
    assert terminal_safe(text) == text
