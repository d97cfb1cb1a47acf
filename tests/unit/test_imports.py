"""The one-way imports of the architecture page, checked on the source."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# package folder -> briny sub-packages it may import
ALLOWED = {
    "common": {"common"},
    "minion": {"common", "minion"},
    "master": {"common", "master"},
    "states": {"common.exceptions"},
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
