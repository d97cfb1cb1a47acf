"""Salt's words for keyword arguments a function does not take (common/badargs.py), and their one owner."""

import ast
from pathlib import Path

from briny.common.badargs import invalid_keywords_message

ROOT = Path(__file__).resolve().parents[3]


def test_one_and_several():
    assert invalid_keywords_message("gem.installed", ["x"]) == "'x' is an invalid keyword argument for 'gem.installed'"
    assert (
        invalid_keywords_message("pkg.installed", ["a", "b", "c"])
        == "'a', 'b' and 'c' are invalid keyword arguments for 'pkg.installed'"
    )


def test_no_other_module_words_it():
    """One owner: a format string with these words anywhere else is a copy (issue 21)."""
    copies = []
    for top in ("common", "master", "minion", "states"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path == ROOT / "common" / "badargs.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.JoinedStr) and "invalid keyword argument" in ast.unparse(node):
                    copies.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert copies == []
