"""A VS Code ``mcp.json`` with comments and trailing commas (JSONC, which VS Code reads):
``mcp-config vscode --write`` merges the entry as text and keeps every comment, instead of
refusing a file VS Code itself accepts; clients that read strict JSON still refuse it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grimoire_beholder.cli import jsonc_edit
from user_home import SAMPLE, backups, run_client_cli

COMMENTED = """// MCP servers for VS Code
{
  "servers": {
    // the team's search server
    "other": {"command": "/opt/other", "args": ["https://example.org//x", "/* not a comment */"]},
  },
  /* prompts for secrets */
  "inputs": [{"id": "token", "type": "promptString",},],
}
"""


@pytest.fixture
def shelf(home: Path) -> Path:
    shelf = home / "shelf"
    shelf.mkdir()
    (shelf / "config.toml").write_text('[grimoire-beholder]\nembedding_backend = "fake"\n')
    assert run_client_cli(home, "ingest", str(SAMPLE), "-q", "--library",
                          str(shelf)).returncode == 0
    return shelf


def test_vscode_file_with_comments_takes_the_entry_and_keeps_its_comments(
        home: Path, shelf: Path) -> None:
    path = home / ".config" / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_text(COMMENTED)

    proc = run_client_cli(home, "mcp-config", "vscode", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    text = path.read_text()
    for line in COMMENTED.splitlines():  # every line of the user's file is still there
        assert line in text
    written = jsonc_edit.loads(text)
    assert written["servers"]["other"]["args"][0] == "https://example.org//x"
    assert written["inputs"] == [{"id": "token", "type": "promptString"}]
    entry = written["servers"]["grimoire-beholder"]
    assert entry["type"] == "stdio" and entry["args"][-1] == str(shelf)
    [backup] = backups(path)
    assert backup.read_text() == COMMENTED

    again = run_client_cli(home, "mcp-config", "vscode", "--write", "--library", str(shelf))
    assert again.returncode == 0 and "nothing changed" in again.stdout

    upkeep = run_client_cli(home, "mcp-config", "vscode", "--write", "--allow-remove",
                            "--library", str(shelf))
    assert upkeep.returncode == 0, upkeep.stderr
    replaced = path.read_text()
    assert "// the team's search server" in replaced and "/* prompts for secrets */" in replaced
    servers = jsonc_edit.loads(replaced)["servers"]
    assert servers["grimoire-beholder"]["args"][-1] == "--allow-remove"
    assert replaced.count('"grimoire-beholder"') == 1


@pytest.mark.parametrize(("bom", "eol"), [("\ufeff", "\r\n"), ("", "\r\n"), ("\ufeff", "\n")])
def test_a_windows_saved_file_keeps_its_byte_order_mark_and_crlf_lines(
        home: Path, shelf: Path, bom: str, eol: str) -> None:
    # A Windows editor's UTF-8 BOM was refused ('Unexpected UTF-8 BOM'), and a CRLF file came
    # back with every line ending changed (a whole-file diff of someone's dotfiles).
    path = home / ".config" / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    original = (bom + COMMENTED.replace("\n", eol)).encode()
    path.write_bytes(original)
    proc = run_client_cli(home, "mcp-config", "vscode", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    written = path.read_bytes()
    assert written.startswith(bom.encode() + b"//")
    lines = written.decode().removeprefix(bom).split(eol)
    assert all("\r" not in line and "\n" not in line for line in lines)
    for line in COMMENTED.splitlines():
        assert line in lines
    assert jsonc_edit.loads(written.decode().removeprefix(bom))["servers"]["grimoire-beholder"]
    [backup] = backups(path)
    assert backup.read_bytes() == original


def test_a_file_nested_too_deeply_is_one_line_and_left_alone(home: Path, shelf: Path) -> None:
    path = home / ".config" / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    text = '{"x": ' + "[" * 100_000 + "]" * 100_000 + ', // c\n "servers": {}}'
    path.write_text(text)
    proc = run_client_cli(home, "mcp-config", "vscode", "--write", "--library", str(shelf))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "nested too deeply" in proc.stderr and path.read_text() == text
    assert not backups(path)


def test_a_claude_desktop_file_with_comments_is_still_left_alone(home: Path,
                                                                  shelf: Path) -> None:
    # Claude Desktop reads strict JSON: a commented file is one it cannot read either.
    path = home / ".config" / "Claude" / "claude_desktop_config.json"
    path.parent.mkdir(parents=True)
    path.write_text(COMMENTED.replace('"servers"', '"mcpServers"'))
    proc = run_client_cli(home, "mcp-config", "claude-desktop", "--write", "--library",
                          str(shelf))
    assert proc.returncode != 0 and "left as it is" in proc.stderr
    assert not backups(path)


def test_blanking_keeps_every_position_and_every_string() -> None:
    text = '{"a": "x//y", /* c */ "b": [1, 2,], // d\n "c": "q\\"/*",}'
    plain = jsonc_edit.blanked(text)
    assert len(plain) == len(text) and plain.count("\n") == text.count("\n")
    assert json.loads(plain) == {"a": "x//y", "b": [1, 2], "c": 'q"/*'}


@pytest.mark.parametrize(("text", "expected"), [
    ("{}", {"s": {"n": [1]}}),
    ('{"s": {}}', {"s": {"n": [1]}}),
    ('{"s": {"m": 2,},}', {"s": {"n": [1], "m": 2}}),
    ('{"s": {"n": {"old": true}}, "t": 1}', {"s": {"n": [1]}, "t": 1}),
    ('{"s": {"n": 0}, "s": {"m": 3}} // last key wins', {"s": {"n": [1], "m": 3}}),
])
def test_setting_a_member_changes_only_that_member(text: str, expected: object) -> None:
    edited = jsonc_edit.set_member(text, "s", "n", [1])
    assert jsonc_edit.loads(edited) == expected
    if "//" in text:
        assert edited.endswith("// last key wins")


@pytest.mark.parametrize(("text", "message"), [
    ('{"s": 1 /* open', "never closed"),
    ('{"s": "open', "never closed"),
    ("[1, 2]", "object"),
    ('{"s": [1]}', "not an object"),
])
def test_what_cannot_be_edited_is_refused(text: str, message: str) -> None:
    with pytest.raises(jsonc_edit.JsoncError, match=message):
        jsonc_edit.set_member(text, "s", "n", 1)


def test_a_comment_on_the_brace_line_stays_on_it() -> None:
    # The new member went between '{' and its comment: '"n": [1], // my servers', so the
    # comment that described the object described the new entry.
    text = '{\n  "s": { // my servers\n    "m": 2\n  }\n}\n'
    edited = jsonc_edit.set_member(text, "s", "n", [1])
    assert '"s": { // my servers\n    "n": [\n' in edited
    assert jsonc_edit.loads(edited) == {"s": {"n": [1], "m": 2}}


def test_a_mostly_lf_file_with_one_crlf_line_stays_lf(home: Path, shelf: Path) -> None:
    # One CRLF line pasted into an LF file made the whole file CRLF.
    path = home / ".config" / "Code" / "User" / "mcp.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(COMMENTED.replace("// MCP servers for VS Code\n",
                                       "// MCP servers for VS Code\r\n", 1).encode())
    proc = run_client_cli(home, "mcp-config", "vscode", "--write", "--library", str(shelf))
    assert proc.returncode == 0, proc.stderr
    assert path.read_bytes().count(b"\r\n") <= 1


@pytest.mark.parametrize("unit", ["\t", "    "])
def test_the_entry_is_indented_as_the_file_is(unit: str) -> None:
    text = "{\n" + unit + '"s": { // mine\n' + unit * 2 + '"m": 1,\n' + unit + "},\n}\n"
    edited = jsonc_edit.set_member(text, "s", "n", {"a": [1]})
    assert jsonc_edit.loads(edited) == {"s": {"n": {"a": [1]}, "m": 1}}
    added = [line for line in edited.splitlines() if line not in text.splitlines()]
    assert added and all(line.startswith(unit * 2) for line in added)
    assert '\n' + unit * 3 + '"a": [' in edited  # one step deeper, in the file's own step
    replaced = jsonc_edit.set_member(edited, "s", "n", {"b": 2})
    assert '\n' + unit * 3 + '"b": 2' in replaced
