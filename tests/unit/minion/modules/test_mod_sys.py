"""``sys`` module: listing functions and modules, reading docstrings."""

from __future__ import annotations


def test_list_functions(loader):
    funcs = loader["sys.list_functions"]()
    assert "test.ping" in funcs and "sys.doc" in funcs and funcs == sorted(funcs)
    assert loader["sys.list_functions"]("test.p") == []  # no glob: module name only
    assert "test.ping" in loader["sys.list_functions"]("test.p*")
    match_funcs = loader["sys.list_functions"]("match")
    assert "match.compound" in match_funcs and "match.list" in match_funcs
    assert all(f.startswith("match.") for f in match_funcs)
    assert loader["sys.list_functions"]("nosuchmod") == []


def test_list_modules(loader):
    mods = loader["sys.list_modules"]()
    assert {"test", "grains", "pillar", "cmd", "match", "sys"} <= set(mods)
    assert loader["sys.list_modules"]("grai*") == ["grains"]


def test_doc(loader):
    doc = loader["sys.doc"]("test.ping")
    assert list(doc) == ["test.ping"] and "True" in doc["test.ping"]
    assert loader["sys.doc"]("test.nope") == {}
    assert "grains.get" in loader["sys.doc"]("grains")
    assert set(loader["sys.doc"]("test.p*")) >= {"test.ping", "test.provider"}


def test_argspec(loader):
    assert loader["sys.argspec"]("test.echo")["test.echo"]["args"] == ["text"]
