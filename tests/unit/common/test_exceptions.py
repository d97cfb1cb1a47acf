"""The one exceptions tree: every exception class briny defines lives in common/exceptions.py,
its docstring draws each of them, and each is raised somewhere (or is a name Salt's custom modules
raise through ``salt.exceptions``)."""

from __future__ import annotations

import ast
import builtins
import inspect
import re
from pathlib import Path

from briny.common import exceptions

ROOT = Path(__file__).resolve().parents[3]
SOURCES = [p for top in ("common", "master", "minion", "states") for p in sorted((ROOT / top).rglob("*.py"))]
EXC_FILE = ROOT / "common" / "exceptions.py"
OURS = {
    name: cls
    for name, cls in vars(exceptions).items()
    if inspect.isclass(cls) and issubclass(cls, BaseException) and cls.__module__ == exceptions.__name__
}


def _base_names(node: ast.ClassDef) -> set[str]:
    names = set()
    for base in node.bases:
        if isinstance(base, ast.Name):
            names.add(base.id)
        elif isinstance(base, ast.Attribute):
            names.add(base.attr)
    return names


def test_no_exception_class_is_defined_outside_the_tree():
    known = {n for n, v in vars(builtins).items() if inspect.isclass(v) and issubclass(v, BaseException)}
    known |= set(OURS) | {"TemplateRuntimeError", "YAMLError", "ZMQError"}
    outside = []
    for path in SOURCES:
        if path == EXC_FILE:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and _base_names(node) & known:
                outside.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert outside == []


def test_the_docstring_draws_every_class():
    drawn = set(re.findall(r"\b([A-Z]\w+)\b", exceptions.__doc__ or ""))
    assert set(OURS) - drawn == set()


def test_every_class_is_raised_somewhere():
    text = "\n".join(p.read_text() for p in SOURCES if p != EXC_FILE)
    salt_only = {cls.__name__ for cls in exceptions.SALT_NAMES.values()}
    raised = {name for name in OURS if re.search(rf"(\b{name}\(|raise {name}\b|, {name}\))", text)}
    unused = [name for name in OURS if name not in salt_only | raised]
    assert unused == []


def test_salt_names_are_classes_of_the_tree():
    assert set(exceptions.SALT_NAMES.values()) <= set(OURS.values())
    for name, cls in exceptions.SALT_NAMES.items():
        assert name.isidentifier() and issubclass(cls, exceptions.BrinyError)
