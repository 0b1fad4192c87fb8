"""The MCP server over HTTP (``serve-mcp --http``): a real server process on a loopback port,
tokens made with the real CLI, the SDK's real Streamable HTTP client."""

from __future__ import annotations

import ipaddress
import sqlite3
import ssl
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from http_helpers import HttpServer, cli, http_client, initialize, make_token
from mcp_helpers import folder_library, structured, text

# Real server and CLI processes, each seconds on a loaded machine: the slow tier.
# (tests/test_access_tokens.py holds the fast in-process checks.)
pytestmark = [pytest.mark.anyio, pytest.mark.slow]
UPKEEP = {"sync_library", "add_book", "remove_book"}


class Served:
    def __init__(self, config: Path, server: HttpServer, reader: str, keeper: str) -> None:
        self.config, self.server, self.reader, self.keeper = config, server, reader, keeper

    @property
    def url(self) -> str:
        return self.server.url


@pytest.fixture(scope="module")
def tokenless(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A library with no token yet (its config)."""
    return folder_library(tmp_path_factory.mktemp("tokenless") / "lib")


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    config = folder_library(tmp_path_factory.mktemp("http") / "lib")
    reader = make_token(config, "reader")
    keeper = make_token(config, "keeper", "--allow-sync", "--allow-remove")
    server = HttpServer(config)
    try:
        yield Served(config, server, reader, keeper)
    finally:
        server.close()


def test_a_request_without_a_live_token_gets_401_with_a_bearer_challenge(
        served: Served) -> None:
    for token in (None, "gbt_000000000000_" + "x" * 43, served.reader[:-1] + "?", "secret"):
        reply = initialize(served.url, token)
        assert reply.status_code == 401, (token, reply.text)
        assert reply.headers["www-authenticate"].startswith("Bearer ")
        assert "invalid_token" in reply.headers["www-authenticate"]
    assert initialize(served.url, served.reader).status_code == 200


async def test_a_read_only_token_searches_but_never_sees_or_calls_upkeep_tools(
        served: Served) -> None:
    async with http_client(served.url, served.reader) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert "search_book" in names and not names & UPKEEP
        hits = structured(await client.call_tool("search_book", {"question": "canary rollout"}))
        assert hits["results"][0]["slug"] == "runbook"
        for tool, args in (("remove_book", {"book_id": "runbook"}),
                           ("sync_library", {"dry_run": True})):
            refused = await client.call_tool(tool, args)
            assert refused.is_error and f"Unknown tool: {tool}" in text(refused)
    async with http_client(served.url, served.reader) as client:  # the book is still there
        listed = structured(await client.call_tool("list_books", {}))
        assert listed["count"] == 3


async def test_an_upkeep_token_lists_and_calls_the_tools_it_was_made_with(
        served: Served) -> None:
    async with http_client(served.url, served.keeper) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"sync_library", "remove_book"} <= names and "add_book" not in names
        report = structured(await client.call_tool("sync_library", {"dry_run": True}))
        assert report["dry_run"] is True and report["counts"].get("unchanged") == 3
        refused = await client.call_tool("add_book", {"path": "x.md"})
        assert refused.is_error and "Unknown tool: add_book" in text(refused)


async def test_the_legacy_handshake_gets_the_same_per_token_tools(served: Served) -> None:
    for token, upkeep in ((served.reader, set()), (served.keeper, {"sync_library",
                                                                  "remove_book"})):
        async with http_client(served.url, token, mode="legacy") as client:
            assert client.protocol_version < "2026"
            names = {t.name for t in (await client.list_tools()).tools}
            assert names & UPKEEP == upkeep


async def test_a_token_adds_books_only_from_its_own_folders(served: Served) -> None:
    wiki = served.config.parent / "wiki"
    adder = make_token(served.config, "adder", "--allow-add", str(wiki / "ops"))
    async with http_client(served.url, adder) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names & UPKEEP == {"add_book"}
        outside = await client.call_tool("add_book", {"path": str(wiki / "bread.md")})
        assert outside.is_error and "only from inside" in text(outside)
        again = structured(await client.call_tool("add_book", {"path": "runbook.md"}))
        counts = again["counts"]  # already there: left as it is
        assert counts["unchanged"] == 1 and sum(counts.values()) == 1


def test_host_and_origin_are_checked_before_the_token(served: Served) -> None:
    port = served.server.authority.rsplit(":", 1)[1]
    for token in (served.reader, None):
        assert initialize(served.url, token, origin="http://evil.example").status_code == 403
        assert initialize(served.url, token, host=f"evil.example:{port}").status_code in (
            421, 403)
    own = initialize(served.url, served.reader, origin=f"http://localhost:{port}",
                     host=f"localhost:{port}")
    assert own.status_code == 200, own.text
    # host names and schemes are case-insensitive: this server by another case is itself
    shouted = initialize(served.url, served.reader, origin=f"HTTP://LocalHost:{port}",
                         host=f"LOCALHOST:{port}")
    assert shouted.status_code == 200, shouted.text
    assert initialize(served.url, token=None, host=f"EVIL.example:{port}").status_code in (
        421, 403)


def test_a_page_of_an_allowed_origin_can_call_the_server_as_a_browser_requires(
        served: Served) -> None:
    """--allowed-origin lets that origin's pages call the server: the browser's CORS
    preflight (which carries no token) is answered, and the answers say the origin may read
    them and the session id; a foreign origin's preflight is still refused."""
    app = "http://app.example.test:8080"
    server = HttpServer(served.config, "--allowed-origin", app)
    try:
        asked = {"origin": app, "access-control-request-method": "POST",
                 "access-control-request-headers":
                     "authorization, content-type, mcp-protocol-version, mcp-session-id"}
        preflight = httpx.options(server.url, headers=asked, timeout=30)
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == app
        allowed = preflight.headers["access-control-allow-headers"].lower()
        assert {"authorization", "content-type", "mcp-session-id"} <= {
            h.strip() for h in allowed.split(",")}
        assert "POST" in preflight.headers["access-control-allow-methods"]
        foreign = httpx.options(server.url, headers={**asked, "origin": "http://evil.example"},
                                timeout=30)
        assert foreign.status_code == 403 and "access-control-allow-origin" not in foreign.headers
        reply = initialize(server.url, served.reader, origin=app)
        assert reply.status_code == 200 and reply.headers["access-control-allow-origin"] == app
        assert "mcp-session-id" in reply.headers["access-control-expose-headers"].lower()
        assert initialize(server.url, None, origin=app).status_code == 401  # still a token
    finally:
        server.close()


def test_a_revoked_token_is_refused_at_once_without_a_restart(served: Served) -> None:
    token = make_token(served.config, "visitor")
    assert initialize(served.url, token).status_code == 200
    assert cli("token", "revoke", "visitor", "--config", str(served.config)).stdout.startswith(
        "revoked token 'visitor'")
    reply = initialize(served.url, token)
    assert reply.status_code == 401 and "www-authenticate" in reply.headers


def test_token_list_shows_names_rights_and_use_never_a_secret(served: Served) -> None:
    assert initialize(served.url, served.keeper).status_code == 200
    listing = cli("token", "list", "--config", str(served.config)).stdout
    rows = {line.split()[0]: line for line in listing.splitlines()[1:]}
    assert rows["reader"].endswith("read-only") and rows["keeper"].endswith("sync, remove")
    assert "never" not in rows["keeper"]  # it was used above
    database = served.config.parent / "book.db"
    stored = b"".join(p.read_bytes() for p in database.parent.glob("book.db*") if p.is_file())
    for token in (served.reader, served.keeper):
        secret = token.split("_", 2)[2]  # gbt_<key id>_<secret>; the secret may hold "_"
        assert secret not in listing and secret.encode() not in stored
    with sqlite3.connect(database) as conn:
        assert conn.execute("SELECT count(*) FROM access_tokens").fetchone()[0] >= 2


def test_a_token_opens_only_the_library_it_was_made_in(served: Served,
                                                       tmp_path: Path) -> None:
    other = folder_library(tmp_path / "other")
    foreign = make_token(other, "reader")
    assert initialize(served.url, foreign).status_code == 401


@pytest.mark.slow
async def test_fifty_clients_at_once_all_get_their_answers(served: Served) -> None:
    failures: list[BaseException] = []
    answered: list[int] = []

    async def one(i: int) -> None:
        try:
            async with http_client(served.url, served.reader) as client:
                for q in ("canary rollout", "knead the dough", "garden"):
                    hits = structured(await client.call_tool("search_book", {"question": q}))
                    assert hits["results"]
                answered.append(i)
        except Exception as exc:  # collected, asserted below
            failures.append(exc)

    async with anyio.create_task_group() as tg:
        for i in range(50):
            tg.start_soon(one, i)
    assert not failures, failures[:3]
    assert sorted(answered) == list(range(50))


@pytest.mark.slow
async def test_tls_directly_with_a_self_signed_certificate(served: Served,
                                                           tmp_path: Path) -> None:
    cert, key = _self_signed(tmp_path)
    server = HttpServer(served.config, "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        assert server.url.startswith("https://127.0.0.1:")
        with pytest.raises(httpx.TransportError):  # plain HTTP is not spoken there
            httpx.post(server.url.replace("https://", "http://"), timeout=10)
        trusted = ssl.create_default_context(cafile=str(cert))
        reply = httpx.post(server.url, verify=trusted, timeout=30, json={})
        assert reply.status_code == 401
        with pytest.raises(httpx.ConnectError):  # an unknown certificate is not trusted
            httpx.post(server.url, timeout=10, json={})
        async with http_client(server.url, served.reader, verify=trusted) as client:
            hits = structured(await client.call_tool("search_book", {"question": "canary"}))
            assert hits["results"][0]["slug"] == "runbook"
    finally:
        server.close()


def _self_signed(folder: Path, pass_phrase: bytes | None = None) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 made here (cryptography comes with the MCP SDK), its key
    encrypted with ``pass_phrase`` when given."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.BestAvailableEncryption(pass_phrase)
                                           if pass_phrase else serialization.NoEncryption()))
    return cert_path, key_path


def test_a_key_with_a_pass_phrase_is_refused_in_one_line(tokenless: Path,
                                                         tmp_path: Path) -> None:
    """OpenSSL asked the terminal for the pass phrase (twice), then the error blamed the
    files: 'not a PEM certificate and its private key ([Errno 22] Invalid argument)'."""
    cert, key = _self_signed(tmp_path, pass_phrase=b"secret")
    proc = cli("serve-mcp", "--config", str(tokenless), "--http", "0", "--tls-cert", str(cert),
               "--tls-key", str(key), check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("error:") and "pass phrase" in line, line


@pytest.mark.parametrize(("args", "message"), [
    (["--http", "8765", "--allow-sync"], "each token carries its own upkeep rights"),
    (["--http", "0.0.0.0:0"], "--allowed-host"),
    # other spellings of "every address" (0.0.0.0 and ::): refused the same way
    (["--http", "0:0"], "--allowed-host"),
    (["--http", "0000:0"], "--allowed-host"),
    (["--http", "[0:0:0:0:0:0:0:0]:0"], "--allowed-host"),
    (["--http", "[::ffff:0.0.0.0]:0"], "--allowed-host"),
    (["--http", "::1:80"], "brackets"),
    (["--http", "host:port"], "[HOST:]PORT"),
    (["--http", "0", "--tls-cert", "c.pem"], "--tls-cert and --tls-key go together"),
    (["--tls-cert", "c.pem"], "go with --http"),
    (["--http", "0", "--tls-cert", __file__, "--tls-key", __file__], "not a PEM certificate"),
])
def test_refused_serve_options_are_one_line_errors(tokenless: Path, args: list[str],
                                                   message: str) -> None:
    proc = cli("serve-mcp", "--config", str(tokenless), *args, check=False)
    assert proc.returncode != 0 and proc.stdout == ""
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("error:") and message in line, line


def test_a_library_without_tokens_says_how_to_make_one(tokenless: Path) -> None:
    proc = cli("serve-mcp", "--config", str(tokenless), "--http", "0", check=False)
    assert proc.returncode != 0
    assert "token create NAME" in proc.stderr


def test_token_names_and_duplicates_are_refused_in_one_line(tmp_path: Path) -> None:
    config = folder_library(tmp_path / "lib")
    make_token(config, "ok")
    for name, message in (("ok", "already exists"), ("x!", "may hold only"),
                          ("a b", "may hold only")):
        proc = cli("token", "create", name, "--config", str(config), check=False)
        assert proc.returncode != 0 and proc.stdout == "", proc.stdout
        assert message in proc.stderr
    proc = cli("token", "revoke", "nobody", "--config", str(config), check=False)
    assert proc.returncode != 0 and "tokens: ok" in proc.stderr
