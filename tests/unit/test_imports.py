"""The one-way imports of the architecture page, checked on the source."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
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
                yield node.lineno, name[len("briny."):]


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_one_way_imports(package):
    bad = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for line, name in _briny_imports(path):
            if not any(name == ok or name.startswith(ok + ".") for ok in ALLOWED[package]):
                if package == "states" and name == "common":
                    continue
                bad.append(f"{path.relative_to(ROOT)}:{line} imports briny.{name}")
    assert not bad, "\n".join(bad)
