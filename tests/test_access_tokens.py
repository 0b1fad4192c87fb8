"""Access tokens for ``serve-mcp --http`` in-process (the fast tier): made, listed, checked and
revoked on a real SQLite library; the address and Host/Origin rules of the HTTP server.
The real server and client over HTTP: tests/test_mcp_http.py."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from mcp.server.auth.provider import AccessToken

from grimoire_beholder.access import (
    TokenChecker,
    TokenRights,
    create_token,
    list_tokens,
    revoke_token,
)
from grimoire_beholder.errors import ConfigError, NotFoundError, ReadOnlyLibraryError, StorageError
from grimoire_beholder.library import Library
from grimoire_beholder.mcp_server.http_auth import LibraryTokens, scopes
from grimoire_beholder.mcp_server.http_serving import HostOriginGate, security_settings
from grimoire_beholder.mcp_server.starting import Bind, every_address, parse_bind
from grimoire_beholder.mcp_server.upkeep_tools import allows

pytestmark = pytest.mark.anyio


def test_a_token_is_shown_once_and_only_its_digest_is_stored(library: Library) -> None:
    info, token = create_token(library, "laptop")
    assert token.startswith("gbt_") and info.name == "laptop"
    assert info.rights == TokenRights() and info.rights.words() == "read-only"
    secret = token.split("_", 2)[2]  # gbt_<key id>_<secret>; the secret may hold "_"
    assert len(secret) >= 40
    library.conn.execute("PRAGMA wal_checkpoint(FULL)")
    stored = b"".join(p.read_bytes() for p in library.config.database_path.parent.glob(
        "book.db*") if p.is_file())
    assert secret.encode() not in stored and token.encode() not in stored
    [listed] = list_tokens(library)
    assert listed.name == "laptop" and listed.last_used_at is None


def test_the_checker_knows_live_tokens_only(library: Library) -> None:
    _, token = create_token(library, "a", TokenRights(sync=True))
    _, other = create_token(library, "b")
    checker = TokenChecker(library.config)
    try:
        found = checker.check(token)
        assert found is not None and found[0].name == "a" and found[0].rights.sync
        key, secret = token[len("gbt_"):].split("_", 1)
        for wrong in ("", "gbt_", token + "x", token[:-1], f"gbt_{key}_" + "A" * len(secret),
                      other[:16] + token[16:], token.replace("gbt_", "gbx_"), "Bearer " + token):
            assert checker.check(wrong) is None, wrong
        revoke_token(library, "a")
        assert checker.check(token) is None  # at once, on the checker's own connection
        assert checker.check(other) is not None
    finally:
        checker.close()


@pytest.mark.skipif(sys.platform == "win32", reason="an open file cannot be deleted there")
def test_the_checker_follows_a_library_deleted_and_built_again(library: Library) -> None:
    """A running server's checker kept reading the deleted file: the old library's tokens
    still opened the one built in its place, and that library's own were refused."""
    _, old = create_token(library, "old")
    config = library.config
    checker = TokenChecker(config)
    try:
        assert checker.check(old) is not None
        library.close()
        for path in config.database_path.parent.glob(config.database_path.name + "*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        with Library.open(config=config) as rebuilt:
            _, new = create_token(rebuilt, "new")
        assert checker.check(old) is None
        found = checker.check(new)
        assert found is not None and found[0].name == "new"
        checker.record_use(found[1])  # into the new file
        with Library.open(config=config) as rebuilt:
            [listed] = list_tokens(rebuilt)
        assert listed.name == "new" and listed.last_used_at is not None
        for path in config.database_path.parent.glob(config.database_path.name + "*"):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
        assert checker.check(new) is None  # no library, no token
    finally:
        checker.close()


def test_a_use_is_recorded_at_most_once_a_minute(library: Library) -> None:
    _, token = create_token(library, "a")
    checker = TokenChecker(library.config)
    try:
        found = checker.check(token)
        assert found is not None
        key = found[1]
        assert checker.due(key, 1000.0) and not checker.due(key, 1030.0)
        checker.record_use(key)
        assert checker.due(key, 1061.0)
    finally:
        checker.close()
    [listed] = list_tokens(library)
    assert listed.last_used_at is not None


async def test_the_verifier_gives_the_sdk_the_name_and_rights_never_the_secret(
        library: Library, tmp_path: Path) -> None:
    _, token = create_token(library, "keeper",
                            TokenRights(sync=True, add=(str(tmp_path),), remove=False))
    checker = TokenChecker(library.config)
    try:
        verified = await LibraryTokens(checker).verify_token(token)
        assert isinstance(verified, AccessToken)
        assert verified.client_id == "keeper"
        assert verified.scopes == ["library:read", "upkeep:sync", "upkeep:add"]
        assert token.split("_", 2)[2] not in verified.model_dump_json()
        assert await LibraryTokens(checker).verify_token(token + "x") is None
    finally:
        checker.close()
    assert scopes(TokenRights()) == ["library:read"]


def test_names_duplicates_and_unknown_tokens_are_clear_errors(library: Library) -> None:
    create_token(library, "ok.name-1_x")
    with pytest.raises(StorageError, match="already exists"):
        create_token(library, "ok.name-1_x")
    for bad in ("", "-x", "a b", "x" * 65, "é", "a/b"):
        with pytest.raises(ConfigError, match="may hold only"):
            create_token(library, bad)
    with pytest.raises(NotFoundError, match=r"tokens: ok\.name-1_x"):
        revoke_token(library, "nobody")


def test_a_read_only_library_makes_no_token(library: Library) -> None:
    create_token(library, "first")
    with Library.open(config=library.config, read_only=True) as reader:
        with pytest.raises(ReadOnlyLibraryError):
            create_token(reader, "second")
        assert [t.name for t in list_tokens(reader)] == ["first"]


def test_unreadable_rights_grant_nothing() -> None:
    for text in ("", "[]", "{", '{"sync": "yes", "remove": 1}', "null"):
        assert TokenRights.from_json(text) == TokenRights()
    rights = TokenRights(sync=True, add=("/books",), remove=True)
    assert TokenRights.from_json(rights.to_json()) == rights
    assert rights.words() == "sync, add (/books), remove"


def test_upkeep_tools_are_allowed_only_by_their_right() -> None:
    from grimoire_beholder.mcp_server.allowed import Upkeep

    assert allows(None, "search_book") and not allows(None, "remove_book")
    assert allows(Upkeep(remove=True), "remove_book")
    assert not allows(Upkeep(sync=True), "add_book")


@pytest.mark.parametrize(("given", "bind"), [
    ("8765", Bind("127.0.0.1", 8765)), ("0", Bind("127.0.0.1", 0)),
    ("localhost:80", Bind("localhost", 80)), ("[::1]:9", Bind("::1", 9)),
    ("0.0.0.0:443", Bind("0.0.0.0", 443)),
])
def test_a_port_alone_binds_loopback(given: str, bind: Bind) -> None:
    assert parse_bind(given) == bind


@pytest.mark.parametrize("given", ["", "x", ":80", "::1:80", "h:70000", "h:-1", "h:"])
def test_a_bad_address_is_refused(given: str) -> None:
    with pytest.raises(ConfigError, match="--http"):
        parse_bind(given)


@pytest.mark.parametrize(("given", "everywhere"), [
    ("0.0.0.0:0", True), ("0:0", True), ("0000:0", True), ("[::]:0", True),
    ("[0:0:0:0:0:0:0:0]:0", True), ("[::ffff:0.0.0.0]:0", True),
    ("0", False), ("127.0.0.1:0", False), ("[::1]:0", False), ("localhost:0", False),
])
def test_every_address_is_known_however_it_is_spelt(given: str, everywhere: bool) -> None:
    assert every_address(parse_bind(given)) is everywhere


def test_hosts_and_origins_follow_the_bound_address() -> None:
    loop = security_settings(Bind("127.0.0.1", 0), 8765)
    assert set(loop.allowed_hosts) == {"127.0.0.1:8765", "localhost:8765", "[::1]:8765"}
    assert "http://localhost:8765" in loop.allowed_origins
    public = security_settings(Bind("0.0.0.0", 443), 443, ["Books.Example.org"],
                               ["https://app.example.org/"])
    assert "books.example.org" in public.allowed_hosts
    assert "books.example.org:*" in public.allowed_hosts
    assert "localhost:443" not in public.allowed_hosts
    assert {"https://books.example.org", "https://app.example.org"} <= set(
        public.allowed_origins)
    with pytest.raises(ConfigError):
        security_settings(Bind("0.0.0.0", 1), 1, ["https://x"])
    with pytest.raises(ConfigError):
        security_settings(Bind("0.0.0.0", 1), 1, ["x"], ["x.org"])


@pytest.mark.parametrize("given", ["*", "*.example.org", "books.example.org/mcp", "a b",
                                   "https://books.example.org", "books.example.org:x", ""])
def test_an_allowed_host_that_is_no_host_name_is_refused(given: str) -> None:
    """``--allowed-host '*'`` was taken, and then matched no Host but a literal "*": every
    request got 421 from a server that had started without a word."""
    with pytest.raises(ConfigError, match="--allowed-host"):
        security_settings(Bind("0.0.0.0", 1), 1, [given])


@pytest.mark.parametrize("given", ["books.example.org", "Books.Example.org:443", "10.0.0.5",
                                   "[fe80::1]:8765", "my_host", "books.example.org:*"])
def test_allowed_hosts_of_every_usual_shape_are_taken(given: str) -> None:
    assert given.lower() in security_settings(Bind("0.0.0.0", 1), 1, [given]).allowed_hosts


def test_a_trailing_dot_and_an_international_name_reach_the_server_as_clients_send_them(
        ) -> None:
    """``--allowed-host books.example.`` was refused, and so was ``bücher.example``
    without a word of punycode. Now a fully qualified name is its name either way round
    (on the command line and in Host/Origin), and an international name is allowed in the
    IDNA form browsers send; a name IDNA cannot write says which form to give."""
    from starlette.responses import PlainTextResponse
    from starlette.testclient import TestClient

    settings = security_settings(Bind("0.0.0.0", 443), 443,
                                 ["books.example.", "Bücher.example:8443", "notes.example"])
    gate = HostOriginGate(PlainTextResponse("served"), settings)
    client = TestClient(gate)

    def status(host: str, origin: str | None = None) -> int:
        headers = {"host": host} | ({"origin": origin} if origin else {})
        return client.get("/mcp", headers=headers).status_code

    assert status("books.example") == 200
    assert status("books.example.:443", origin="https://books.example.") == 200
    assert status("notes.example.") == 200
    assert status("xn--bcher-kva.example:8443") == 200
    assert status("xn--bcher-kva.example:8444") == 421
    assert status("evil.example.") == 421
    assert status("books.example", origin="https://evil.example.") == 403
    with pytest.raises(ConfigError, match="punycode form"):
        security_settings(Bind("0.0.0.0", 1), 1, ["x" * 70 + "ü.example"])


@pytest.mark.parametrize("given", ["https://app.example.", "HTTPS://App.Example",
                                   "https://äpp.example/", " https://APP.example. "])
def test_an_allowed_origin_is_matched_however_it_is_spelt(given: str) -> None:
    """The gate lowers the request's Origin and drops its final dot, but an
    ``--allowed-origin`` was kept as typed: one with a final dot (accepted as typed before
    the gate dropped it) or a capital letter matched no request, every page of that
    origin refused 403; a non-ASCII one never matched the punycode browsers send."""
    from starlette.responses import PlainTextResponse
    from starlette.testclient import TestClient

    settings = security_settings(Bind("0.0.0.0", 443), 443, ["books.example"], [given])
    client = TestClient(HostOriginGate(PlainTextResponse("served"), settings))
    origin = "https://xn--pp-uia.example" if "ä" in given else "https://app.example"
    for sent in (origin, origin + ".", origin.upper()):
        assert client.get("/mcp", headers={"host": "books.example", "origin": sent}
                          ).status_code == 200, sent
    assert client.get("/mcp", headers={"host": "books.example", "origin": "https://evil.example"}
                      ).status_code == 403


def test_a_name_with_sharp_s_is_allowed_as_browsers_send_it() -> None:
    """Python's IDNA (2003) writes straße.example as strasse.example, but browsers send
    xn--strae-oqa.example (UTS 46 nontransitional): every request of theirs got 421."""
    from starlette.responses import PlainTextResponse
    from starlette.testclient import TestClient

    settings = security_settings(Bind("0.0.0.0", 443), 443, ["Straße.example"],
                                 ["https://fußball.example"])
    client = TestClient(HostOriginGate(PlainTextResponse("served"), settings))

    def status(host: str, origin: str | None = None) -> int:
        headers = {"host": host} | ({"origin": origin} if origin else {})
        return client.get("/mcp", headers=headers).status_code

    assert status("xn--strae-oqa.example") == 200
    assert status("strasse.example:8443") == 200
    assert status("xn--strae-oqa.example", origin="https://xn--fuball-cta.example") == 200
    assert status("xn--strae-oqa.example", origin="https://fussball.example") == 200
    assert status("xn--strae-oqa.example", origin="https://evil.example") == 403


@pytest.mark.parametrize("given", ["app.example", "ftp://app.example", "https://a.example/p",
                                   "https://*.example", "https://"])
def test_an_allowed_origin_that_is_no_origin_is_refused(given: str) -> None:
    with pytest.raises(ConfigError, match="--allowed-origin"):
        security_settings(Bind("0.0.0.0", 1), 1, [], [given])


async def test_with_token_auth_and_no_token_in_sight_no_upkeep_tool_exists(
        library: Library) -> None:
    """Fail closed: a request the SDK has not tied to a token (here, the in-memory client)
    gets the read-only server."""
    from mcp import Client

    from grimoire_beholder.mcp_server.http_auth import TokenAuth
    from grimoire_beholder.mcp_server.server import create_server, open_library

    checker = TokenChecker(library.config)
    try:
        auth = TokenAuth.of(checker, "http://127.0.0.1:1")
        server = create_server(lambda: open_library(library=library.config.base_dir),
                               auth=auth)
        async with Client(server) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            assert "search_book" in names
            assert not names & {"sync_library", "add_book", "remove_book"}
            refused = await client.call_tool("remove_book", {"book_id": 1})
            assert refused.is_error
            assert "Unknown tool: remove_book" in refused.content[0].text  # type: ignore[union-attr]
            assert "token" in (client.instructions or "")
    finally:
        checker.close()
