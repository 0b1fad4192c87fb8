"""The embedded model's graph cache: built once per user, read back whole or rebuilt.

The cache's own rules run on a stand-in model folder and a stand-in builder (fast); the real
model checks that a cached graph gives the same vectors as a freshly built one and that a new
process does not build the graph again.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from grimoire_beholder.models import bert_onnx, graph_cache
from grimoire_beholder.models.embedded import EmbeddedEmbedder

GRAPH = b"not really an onnx graph, " * 1000


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv(graph_cache.ENV_VAR, str(tmp_path / "cache"))
    return tmp_path / "cache" / "models"


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text('{"hidden_size": 384}')
    (folder / "model.safetensors").write_bytes(b"weights")
    return folder


class Builder:
    """Counts its calls; returns ``graph``."""

    def __init__(self, graph: bytes = GRAPH, delay: float = 0.0) -> None:
        self.graph, self.delay, self.calls = graph, delay, 0

    def __call__(self) -> bytes:
        self.calls += 1
        time.sleep(self.delay)
        return self.graph


def test_the_graph_is_built_once_then_read_back(cache: Path, model_dir: Path) -> None:
    build = Builder()
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert build.calls == 1
    [stored] = cache.iterdir()
    assert stored.name.startswith("float32-") and stored.read_bytes() == GRAPH
    # The int8 graph is another file; neither evicts the other.
    graph_cache.cached_graph(model_dir, "int8", Builder(b"int8 graph"))
    assert sorted(p.name.split("-")[0] for p in cache.iterdir()) == ["float32", "int8"]


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_a_damaged_cache_file_is_never_used_but_rebuilt(cache: Path, model_dir: Path,
                                                        damage: str) -> None:
    graph_cache.cached_graph(model_dir, "float32", Builder())
    [stored] = cache.iterdir()
    data = bytearray(stored.read_bytes())
    if damage == "truncate":
        del data[len(data) // 2:]
    else:
        data[100] ^= 0xFF
    stored.write_bytes(bytes(data))
    build = Builder()
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert build.calls == 1
    assert [p.read_bytes() for p in cache.iterdir()] == [GRAPH]


def test_new_weights_make_a_new_graph_and_the_old_file_goes(cache: Path,
                                                           model_dir: Path) -> None:
    graph_cache.cached_graph(model_dir, "float32", Builder())
    weights = model_dir / "model.safetensors"
    weights.write_bytes(b"other weights")
    os.utime(weights, ns=(1, 1))
    [old] = cache.iterdir()
    os.utime(old, (time.time() - 15 * 86400,) * 2)  # unused for more than two weeks
    build = Builder(b"new graph")
    assert graph_cache.cached_graph(model_dir, "float32", build) == b"new graph"
    assert build.calls == 1
    assert [p.read_bytes() for p in cache.iterdir()] == [b"new graph"]


def test_two_installs_side_by_side_do_not_evict_each_others_graph(cache: Path,
                                                                 tmp_path: Path) -> None:
    """Each install has its own weights file (its own modification time, so its own key):
    alternating cold starts of the two build each graph once, not on every start."""
    installs = []
    for n in range(2):
        folder = tmp_path / f"install-{n}"
        folder.mkdir()
        (folder / "config.json").write_text('{"hidden_size": 384}')
        (folder / "model.safetensors").write_bytes(b"weights")
        os.utime(folder / "model.safetensors", ns=(n + 1, n + 1))
        installs.append(folder)
    builds = [Builder(), Builder()]
    for _ in range(3):
        for folder, build in zip(installs, builds, strict=True):
            assert graph_cache.cached_graph(folder, "float32", build) == GRAPH
    assert [b.calls for b in builds] == [1, 1]
    # many keys: only the two most recently used others stay
    for n in range(2, 6):
        folder = tmp_path / f"install-{n}"
        folder.mkdir()
        (folder / "config.json").write_text('{"hidden_size": 384}')
        (folder / "model.safetensors").write_bytes(b"weights")
        os.utime(folder / "model.safetensors", ns=(n + 1, n + 1))
        graph_cache.cached_graph(folder, "float32", Builder())
    assert len(list(cache.iterdir())) == 3


def test_processes_racing_to_fill_the_cache_each_get_a_whole_graph(cache: Path,
                                                                   model_dir: Path) -> None:
    results: list[bytes] = []
    builds = [Builder(delay=0.05) for _ in range(6)]
    threads = [threading.Thread(target=lambda b=b: results.append(
        graph_cache.cached_graph(model_dir, "float32", b))) for b in builds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [GRAPH] * 6
    assert [p.read_bytes() for p in cache.iterdir()] == [GRAPH]  # no partial file left


def test_an_unwritable_or_disabled_cache_builds_in_memory(tmp_path: Path, model_dir: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(graph_cache.ENV_VAR, str(blocker))
    build = Builder()
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert build.calls == 2
    monkeypatch.setenv(graph_cache.ENV_VAR, "")
    assert graph_cache.cache_folder() is None
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert build.calls == 3


def test_a_cache_folder_given_from_home_is_there_not_a_folder_named_tilde(
        tmp_path: Path, model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MCP client's config passes ``~/…`` unexpanded (no shell): it means the home folder,
    not a folder named ``~`` in the server's working folder."""
    home, work = tmp_path / "home", tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("USERPROFILE", str(home))
    monkeypatch.chdir(work)
    monkeypatch.setenv(graph_cache.ENV_VAR, "~/graphs")
    graph_cache.cached_graph(model_dir, "float32", Builder())
    [graph] = (home / "graphs" / "models").iterdir()
    assert graph.name.startswith("float32-")
    assert not (work / "~").exists()


def test_the_real_model_from_the_cache_gives_the_same_vectors(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    texts = ["The lamp is trimmed at dusk.", "Holmes looked at the hat for a long time. " * 40]
    first = EmbeddedEmbedder(threads=1)
    built = first.embed_documents(texts)
    [stored] = cache.iterdir()
    assert stored.stat().st_size < 50_000_000  # weights kept in float16, as packaged

    def no_build(*args: object, **kwargs: object) -> bytes:
        raise AssertionError("the graph was built again")

    monkeypatch.setattr(bert_onnx, "build_bert_graph", no_build)
    again = EmbeddedEmbedder(threads=1).embed_documents(texts)
    assert np.array_equal(built, again)


def test_a_whole_cache_file_that_is_not_the_graph_is_replaced_and_searches_work(
        cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files that pass the digest check but are not the graph their name says — the float32
    graph copied under the int8 name, bytes onnxruntime cannot load under the query graph's
    — are deleted and each graph built once more; before, the first was run as the int8
    graph and the second failed every search until the user found and deleted it."""
    import hashlib

    from grimoire_beholder.models.minilm_files import find_model_dir

    model_dir = find_model_dir()
    bert_onnx.load_session(model_dir, 1)  # the float32 graph, into the cache
    [float32] = cache.iterdir()
    planted = []
    for variant, data in (("int8", float32.read_bytes()), ("query-int8", b"not a graph")):
        digest = hashlib.sha256(data).hexdigest()[:32]
        planted.append(cache / f"{variant}-{graph_cache.input_key(model_dir, variant)}-"
                               f"{digest}.onnx")
        planted[-1].write_bytes(data)
    builds: list[int] = []
    real = bert_onnx.build_bert_graph
    monkeypatch.setattr(bert_onnx, "build_bert_graph",
                        lambda *a, **k: builds.append(1) or real(*a, **k))
    embedder = EmbeddedEmbedder(threads=1, int8=True)  # as configured by default
    query, [document] = (embedder.embed_query("the lamp"),
                         embedder.embed_documents(["The lamp is trimmed at dusk."]))
    assert float(query @ document) > 0.3 and len(builds) == 2
    assert not any(path.exists() for path in planted)
    [int8] = cache.glob("int8-*.onnx")
    assert b"DynamicQuantizeMatMul" in int8.read_bytes()


@pytest.mark.slow  # two fresh interpreters that load the model
def test_a_second_process_reads_the_graph_instead_of_building_it(cache: Path) -> None:
    code = ("import time; from grimoire_beholder.models import bert_onnx as b; "
            "from grimoire_beholder.models.embedded import EmbeddedEmbedder as E; "
            "calls = []; real = b.build_bert_graph; "
            "b.build_bert_graph = lambda *a, **k: calls.append(1) or real(*a, **k); "
            "E(threads=1).check(); print(len(calls))")
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True, env=os.environ.copy()).stdout.strip()
            for _ in range(2)]
    assert runs == ["1", "0"]


def _stored_name(cache: Path, model_dir: Path) -> Path:
    graph_cache.cached_graph(model_dir, "float32", Builder())
    [stored] = cache.iterdir()
    return stored


def _call_within(seconds: float, model_dir: Path, build: Builder) -> list[bytes]:
    """cached_graph on a thread; [] when it did not return in time (a hang)."""
    out: list[bytes] = []
    worker = threading.Thread(target=lambda: out.append(
        graph_cache.cached_graph(model_dir, "float32", build)), daemon=True)
    worker.start()
    worker.join(seconds)
    return out


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_cache_file_replaced_by_a_link_to_a_fifo_never_hangs(cache: Path, model_dir: Path,
                                                               tmp_path: Path) -> None:
    stored = _stored_name(cache, model_dir)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    stored.unlink()
    stored.symlink_to(fifo)
    build = Builder()
    assert _call_within(5.0, model_dir, build) == [GRAPH]
    assert build.calls == 1
    assert fifo.exists()  # the link may go, what it named stays


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_a_cache_file_replaced_by_a_link_to_an_endless_device_is_not_read(
        cache: Path, model_dir: Path) -> None:
    stored = _stored_name(cache, model_dir)
    stored.unlink()
    stored.symlink_to("/dev/zero")
    build = Builder()
    assert _call_within(5.0, model_dir, build) == [GRAPH]
    assert build.calls == 1


def test_a_cache_file_replaced_by_a_link_to_another_file_leaves_that_file(
        cache: Path, model_dir: Path, tmp_path: Path) -> None:
    stored = _stored_name(cache, model_dir)
    other = tmp_path / "passwd"
    other.write_text("root:x:0:0:root:/root:/bin/bash\n")
    stored.unlink()
    stored.symlink_to(other)
    build = Builder()
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert build.calls == 1
    assert other.read_text().startswith("root:")
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert build.calls == 1  # rewritten as a real file


def test_a_folder_where_the_cache_file_should_be_is_built_around(cache: Path,
                                                               model_dir: Path) -> None:
    stored = _stored_name(cache, model_dir)
    stored.unlink()
    stored.mkdir()
    (stored / "x").write_text("x")
    build = Builder()
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert graph_cache.cached_graph(model_dir, "float32", build) == GRAPH
    assert not any(p.name.startswith(".partial-") for p in cache.iterdir())


def test_a_partial_file_left_by_a_killed_writer_goes_at_the_next_write(cache: Path,
                                                                       model_dir: Path) -> None:
    cache.mkdir(parents=True)
    stale, fresh = cache / ".partial-abc.onnx", cache / ".partial-def.onnx"
    stale.write_bytes(b"x" * 1000)  # SIGKILL mid-write: no finally ran
    fresh.write_bytes(b"y")  # another process writing right now
    os.utime(stale, (time.time() - 7200,) * 2)
    graph_cache.cached_graph(model_dir, "float32", Builder())
    assert not stale.exists() and fresh.exists()
