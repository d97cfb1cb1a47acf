"""Booleans from loose values (common/truth.py): Salt's two readings, and no third copy of them."""

import ast
from pathlib import Path

import pytest

from briny.common.truth import is_true, says_true

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    ("value", "argument", "setting"),
    [
        (True, True, True),
        (False, False, False),
        (None, False, False),
        ("true", True, True),
        (" Yes ", True, True),
        ("ON", True, True),
        ("1", True, True),
        (1, True, True),
        ("false", False, False),
        ("no", False, False),
        ("", False, False),
        ("maybe", False, False),
        (2, True, False),  # an argument by Python's truth; a setting must say true
        ([1], True, False),
        (0, False, False),
    ],
)
def test_the_two_readings(value, argument, setting):
    assert is_true(value) is argument
    assert says_true(value) is setting


def test_no_other_module_defines_its_own():
    """One owner: a function of this kind defined anywhere else is a copy (issue 21)."""
    copies = []
    for top in ("common", "master", "minion", "states"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "common" / "truth.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in {"is_true", "true", "truthy"}:
                    copies.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert copies == []
