"""The one-way imports of the architecture page, checked on the source."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Pure helper modules of common/ that state modules may import besides the exceptions: data in,
# data out, the standard library only (no I/O, no state, no other briny module); each is named
# here on purpose (test_pure_helpers_are_pure checks them).
PURE_FOR_STATES = {"common.urlauth"}
# package folder -> briny sub-packages it may import
ALLOWED = {
    "common": {"common"},
    "minion": {"common", "minion"},
    "master": {"common", "master"},
    "states": {"common.exceptions", *PURE_FOR_STATES},
}


def _briny_imports(path: Path):
    tree = ast.parse(path.read_text(), str(path))
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
                yield node.lineno, name[len("briny.") :]


PACKAGES = {"common", "master", "minion", "states"}


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_one_way_imports(package):
    bad = []
    files = sorted((ROOT / package).rglob("*.py"))
    assert len(files) > 1, f"no sources found under {ROOT / package}"
    for path in files:
        for line, name in _briny_imports(path):
            if name.split(".")[0] not in PACKAGES:
                continue  # top-level metadata such as briny.__version__
            if not any(name == ok or name.startswith(ok + ".") for ok in ALLOWED[package]):
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
