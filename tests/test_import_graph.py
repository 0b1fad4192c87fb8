"""The modules of src/ import each other without a cycle — counting every import — and only
``store/`` runs SQL.

A cycle hidden behind an import inside a function or under ``TYPE_CHECKING`` is still a
cycle: it means two modules each know the other's insides, and it breaks the day someone
moves the import to the top. So the graph here is built from *every* ``import`` statement
(``ast.walk`` sees module level, function bodies and ``if TYPE_CHECKING:`` blocks alike).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import grimoire_beholder

PACKAGE = "grimoire_beholder"
SRC = Path(grimoire_beholder.__file__).parent


def _module_names() -> dict[str, Path]:
    """Dotted name (without the package prefix; "" for the package) → file."""
    names = {}
    for path in SRC.rglob("*.py"):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    return names


def _resolve(module: str, node: ast.ImportFrom | ast.Import, is_package: bool
             ) -> Iterator[str]:
    """The dotted names (package-relative) a statement in ``module`` names as modules."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name == PACKAGE or alias.name.startswith(PACKAGE + "."):
                yield alias.name[len(PACKAGE) + 1:]
        return
    if node.level == 0:
        if node.module is None or not (node.module == PACKAGE
                                       or node.module.startswith(PACKAGE + ".")):
            return
        base = node.module[len(PACKAGE) + 1:]
    else:
        here = module.split(".") if module else []
        if not is_package:
            here = here[:-1]  # a module's relative imports start from its package
        if node.level > 1:
            here = here[:-(node.level - 1)]
        base = ".".join(here + ([node.module] if node.module else []))
    # A module's own parent packages are initialised before it runs, so naming one (``from .
    # import sibling``) adds no dependency on the package's ``__init__``; the sibling counts.
    if not (module == base or module.startswith(base + ".") or base == ""):
        yield base
    for alias in node.names:  # ``from pkg import submodule`` imports the submodule
        yield f"{base}.{alias.name}" if base else alias.name


def import_graph() -> dict[str, set[str]]:
    modules = _module_names()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _resolve(name, node, path.name == "__init__.py"):
                    if target in modules and target != name:
                        graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_graph_sees_imports_in_functions_and_under_type_checking() -> None:
    """The walker must not miss the kinds of import that hide cycles."""
    graph = import_graph()
    assert "parse" in graph["ingest.build"]  # inside prepare_book
    assert "library" in graph[""]  # under TYPE_CHECKING in the package __init__
    assert "models.embedded" in graph["models"]  # inside make_embedder


def test_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]


def test_no_import_cycles_among_src_modules() -> None:
    found = [sorted(c) for c in cycles(import_graph())]
    assert not found, f"import cycles: {found}"


SQL_CALLS = frozenset({"execute", "executemany", "executescript", "cursor", "create_function"})


# A statement as code writes it (upper-case keyword, then what it acts on); prose says "select".
SQL_TEXT = re.compile(
    r"^\s*(?:(?:SELECT|WITH)\b[\s\S]*\bFROM\b|(?:INSERT|REPLACE)\s+(?:OR\s+\w+\s+)?INTO\b"
    r"|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\b|(?:CREATE|DROP|ALTER)\s+(?:VIRTUAL\s+)?"
    r"(?:TABLE|INDEX|VIEW|TRIGGER)\b|PRAGMA\s+\w|ATTACH\b|VACUUM\b)")


def sql_calls(source: str) -> list[int]:
    """Lines of ``source`` that call a DB-API method running SQL (``conn.execute(...)``…) or
    hold an SQL statement as a string (a query handed to a helper, an aliased ``execute``)."""
    return sorted({node.lineno for node in ast.walk(ast.parse(source))
                   if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                       and node.func.attr in SQL_CALLS)
                   or (isinstance(node, ast.Constant) and isinstance(node.value, str)
                       and SQL_TEXT.match(node.value))})


def test_the_sql_finder_sees_a_query_in_a_method() -> None:
    source = ("class Index:\n    def gap(self, conn):\n"
              "        return conn.execute('SELECT min(seq) FROM search_log').fetchone()\n")
    assert sql_calls(source) == [3]


def test_the_sql_finder_sees_a_query_string_handed_elsewhere() -> None:
    source = ('GAP = """\n    SELECT min(seq)\n    FROM search_log"""\n'
              'def wipe(run):\n    run("DELETE FROM chunks WHERE id = ?", (1,))\n'
              'def note():\n    """Select the books FROM which the hits come."""\n'
              '    return "PRAGMA user_version"\n')
    assert sql_calls(source) == [1, 5, 8]


def test_no_sql_outside_store() -> None:
    """ARCHITECTURE.md's rule: ``store/`` is the only place with SQL."""
    found = {name: lines for name, path in _module_names().items()
             if not (name == "store" or name.startswith("store."))
             and (lines := sql_calls(path.read_text(encoding="utf-8")))}
    assert not found, f"SQL outside store/: {found}"


def private_imports(source: str) -> list[str]:
    """Modules of other packages that ``source`` imports through a private name
    (``typer._click.exceptions``, ``from mcp.server import _internal``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        found += [n for n in names if not n.startswith(PACKAGE) and n != "__future__"
                  and any(part.startswith("_") and not part.startswith("__")
                          for part in n.split("."))]
    return found


def test_the_private_import_finder_sees_a_vendored_module() -> None:
    assert private_imports("from typer._click.exceptions import UsageError\n"
                           "from typer import Abort\nimport os.path\n") == [
        "typer._click.exceptions", "typer._click.exceptions.UsageError"]


def test_src_imports_no_private_module_of_a_dependency() -> None:
    found = {name: imports for name, path in _module_names().items()
             if (imports := private_imports(path.read_text(encoding="utf-8")))}
    assert not found, f"private modules of dependencies imported: {found}"
