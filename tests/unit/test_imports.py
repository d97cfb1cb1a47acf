"""The one-way imports of the architecture page, checked on the source.

Host code (``minion/host/``: the execution modules and their helpers) never imports the minion
daemon (the rest of ``minion/``): the master runs it too; what a job needs of the daemon reaches
it through ``__job__`` (``briny.common.jobcontext.JobContext``). And no module imports itself back
through others: :func:`test_no_import_circles` follows every import, those inside functions
included (an import in a function is late, never hidden: it still counts).

One import more is allowed, and only under ``if TYPE_CHECKING:`` (it never runs): any module may
declare the loader's dunders for the checkers with ``from briny.common.dunders import __salt__``
(docs/DEVELOPING.md, "Modules"); that module may be imported no other way."""

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Pure helper modules of common/ that state modules may import besides the exceptions: data in,
# data out, the standard library only (no I/O, no state, no other briny module); each is named
# here on purpose (test_pure_helpers_are_pure checks them).
PURE_FOR_STATES = {"common.urlauth", "common.truth", "common.badargs"}
# package folder -> briny sub-packages it may import (a folder's files are checked against the
# most specific folder named here: minion/host/ against "minion/host", the rest of minion/ "minion")
ALLOWED = {
    "common": {"common"},
    "minion": {"common", "minion"},
    "minion/host": {"common", "minion.host"},
    "master": {"common", "master"},
    "master/api": {"common", "master"},
    "states": {"common.exceptions", *PURE_FOR_STATES},
}
# package folder -> briny sub-packages it may not import although ALLOWED would: the master's
# core never depends on briny-api (master/api/ builds on the master, not the other way round)
FORBIDDEN = {"master": {"master.api"}}
# allowed to every package, under `if TYPE_CHECKING:` only
TYPE_CHECKING_ONLY = "common.dunders"


def _type_checking_only(tree: ast.Module) -> set[int]:
    """The ids of the nodes inside an ``if TYPE_CHECKING:`` block."""
    guarded = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                guarded.update(id(n) for n in ast.walk(stmt))
    return guarded


def _briny_imports(path: Path):
    """(line, name without "briny.", under TYPE_CHECKING?) of each absolute briny import."""
    tree = ast.parse(path.read_text(), str(path))
    guarded = _type_checking_only(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:
            continue  # relative imports stay inside their package
        else:
            continue
        for name in names:
            if name.startswith("briny."):
                yield node.lineno, name[len("briny.") :], id(node) in guarded


PACKAGES = {"common", "master", "minion", "states"}


def _folder_of(path: Path) -> str:
    """The most specific folder of ALLOWED holding ``path``."""
    rel = path.relative_to(ROOT).as_posix()
    return max((f for f in ALLOWED if rel.startswith(f + "/")), key=len)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_one_way_imports(package):
    bad = []
    files = sorted((ROOT / package).rglob("*.py"))
    assert len(files) > 1, f"no sources found under {ROOT / package}"
    for path in files:
        if _folder_of(path) != package:
            continue  # checked with its own, more specific folder
        for line, name, guarded in _briny_imports(path):
            if name.split(".")[0] not in PACKAGES:
                continue  # top-level metadata such as briny.__version__
            if guarded and (name == TYPE_CHECKING_ONLY or name.startswith(TYPE_CHECKING_ONLY + ".")):
                continue
            forbidden = any(name == no or name.startswith(no + ".") for no in FORBIDDEN.get(package, ()))
            if forbidden or not any(name == ok or name.startswith(ok + ".") for ok in ALLOWED[package]):
                if package == "states" and name == "common":
                    continue
                bad.append(f"{path.relative_to(ROOT)}:{line} imports briny.{name}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("module", sorted(PURE_FOR_STATES))
def test_pure_helpers_are_pure(module):
    """A helper state modules may import reaches nothing of briny's and nothing beyond the
    standard library's pure modules (no files, processes or network)."""
    import sys

    path = ROOT / (module.replace(".", "/") + ".py")
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0 and node.module, f"{path.name}:{node.lineno}: a relative import"
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    impure = {"os", "subprocess", "socket", "shutil", "pathlib", "io", "tempfile", "threading", "urllib.request"}
    bad = [
        n for n in names if n.split(".")[0] not in sys.stdlib_module_names or n in impure or n.split(".")[0] in impure
    ]
    assert not bad, sorted(bad)


def test_dunders_are_imported_for_the_checkers_only():
    """``briny.common.dunders`` gives the loader's names no value, so an import of it that runs
    would fail (or, worse, shadow the loader's globals): every one sits under TYPE_CHECKING."""
    unguarded, seen = [], 0
    for top in sorted(PACKAGES) + ["tests"]:
        for path in sorted((ROOT / top).rglob("*.py")):
            for line, name, guarded in _briny_imports(path):
                if name == TYPE_CHECKING_ONLY or name.startswith(TYPE_CHECKING_ONLY + "."):
                    seen += 1
                    if not guarded:
                        unguarded.append(f"{path.relative_to(ROOT)}:{line}")
    assert seen > 10, "no module declares its dunders: has the declaration moved?"
    assert unguarded == [], f"import briny.common.dunders only under `if TYPE_CHECKING:`: {unguarded}"


def test_the_dunders_have_no_value_at_run_time():
    """Declarations only: the loader's globals are the only ones a module ever sees."""
    dunders = importlib.import_module("briny.common.dunders")
    declared = set(dunders.__annotations__)
    assert {"__opts__", "__salt__", "__grains__", "__pillar__", "__context__", "__job__"} <= declared
    assert [name for name in declared if hasattr(dunders, name)] == []


def test_every_package_folder_is_installed():
    """A folder with __init__.py that pyproject.toml does not list would be missing
    from a user's (non-editable) install."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = set()
    for top in ("common", "master", "minion", "states"):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT).parts
            found.add(".".join(("briny",) + rel))
    assert sorted(found - listed) == []


def _module_files() -> dict[str, Path]:
    """Every briny module, by its name without "briny." (a package by its folder's name)."""
    found = {}
    for top in sorted(PACKAGES):
        for path in (ROOT / top).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _import_graph() -> dict[str, set[str]]:
    """module -> the briny modules it imports, wherever the import sits (module level or inside a
    function or method); imports under ``if TYPE_CHECKING:`` never run and are left out."""
    modules = _module_files()

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        guarded = _type_checking_only(tree)
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        deps: set[str] = set()
        for node in ast.walk(tree):
            if id(node) in guarded:
                continue
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - node.level + 1]
                    target = ".".join(base + ([node.module] if node.module else []))
                elif (node.module or "").startswith("briny."):
                    target = node.module[len("briny.") :]
                else:
                    continue
                names = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                names = [a.name[len("briny.") :] for a in node.names if a.name.startswith("briny.")]
            else:
                continue
            for name in names:
                if name in modules:
                    deps.add(name)
            if names and names[0] not in modules and known(names[0]):
                deps.add(known(names[0]))
        deps.discard(module)
        graph[module] = deps
    return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(sorted(group))
    return found


def test_no_import_circles():
    """No module reaches itself again through its imports, counting the imports placed inside
    functions (lazy imports that spare an idle daemon Jinja or psycopg are fine, but are imports
    all the same: a circle is broken by moving the shared piece down, never by hiding it)."""
    assert _circles(_import_graph()) == []


def test_the_circle_check_sees_function_level_imports():
    """The check follows imports inside functions and finds a circle they close (so an empty
    answer above means something): render imports jinja in a function; stages importing render
    back would close render -> jinja -> stages -> render."""
    graph = _import_graph()
    assert "common.state.jinja" in graph["common.state.render"]  # imported inside _render_jinja
    looped = {**graph, "common.state.stages": graph["common.state.stages"] | {"common.state.render"}}
    assert any({"common.state.render", "common.state.jinja", "common.state.stages"} <= set(c) for c in _circles(looped))
