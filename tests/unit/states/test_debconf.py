"""The debconf state over a fake ``debconf`` execution module (Salt 3007's
comments and changes), and the parsing of ``debconf-get-selections``."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

_FAKE = textwrap.dedent("""
    __virtualname__ = "debconf"
    __func_alias__ = {"set_": "set"}

    def show(name, **kwargs):
        return __opts__["_db"].get(name)

    def set_(package, question, type, value, **kwargs):
        if type == "nosuchtype":
            return False
        rows = __opts__["_db"].setdefault(package, [])
        rows[:] = [r for r in rows if r[0] != question] + [[question, type, str(value)]]
        return True
""")


@pytest.fixture
def make(tmp_path: Path):
    (tmp_path / "debconfmod.py").write_text(_FAKE)
    db: dict[str, Any] = {}

    def build(test: bool = False) -> Any:
        opts = {"test": test, "id": "t", "_db": db}
        return loader.states(opts, loader.minion_mods(opts, extra_dirs=[tmp_path]))

    return build, db


DATA = {
    "p/str": {"type": "string", "value": "hello world"},
    "p/flag": {"type": "boolean", "value": True},
    "p/pw": {"type": "password", "value": "s3cret"},
}


def test_set_live_twice_and_test_mode(make) -> None:
    build, db = make
    ret = build(test=True)["debconf.set"]("p", data=DATA)
    assert ret["result"] is None and ret["comment"] == ""
    # the password is hidden in test mode too (Salt shows it there)
    assert ret["changes"] == {
        "p/str": "New value: hello world",
        "p/flag": "New value: true",
        "p/pw": "New value: (password hidden)",
    }
    assert db == {}
    ret = build()["debconf.set"]("p", data=DATA)
    assert ret == {
        "name": "p",
        "result": True,
        "comment": "",
        "changes": {"p/str": "hello world", "p/flag": "true", "p/pw": "(password hidden)"},
    }
    assert ["p/flag", "boolean", "true"] in db["p"]
    ret = build()["debconf.set"]("p", data=DATA)
    assert ret == {"name": "p", "result": True, "comment": "All specified answers are already set", "changes": {}}
    ret = build()["debconf.set"]("p", data={**DATA, "p/flag": {"type": "boolean", "value": False}})
    assert ret["changes"] == {"p/flag": "false"}
    assert ret["comment"] == "Unchanged answers: p/str p/pw "


def test_set_bad_input(make) -> None:
    build, db = make
    ret = build()["debconf.set"]("p", data={"p/odd": {"type": "nosuchtype", "value": "x"}, **DATA})
    assert ret["result"] is False and ret["comment"] == "Some settings failed to be applied."
    assert ret["changes"]["p/odd"] == "Failed to set!" and ret["changes"]["p/str"] == "hello world"
    for data, why in (
        ("nope", "data must be a mapping of question: {type: ..., value: ...}"),
        ({"p/q": "just a value"}, "The answer to p/q must be a mapping with 'type' and 'value'"),
        ({"p/q": {"type": "string"}}, "The answer to p/q must be a mapping with 'type' and 'value'"),
    ):
        assert build()["debconf.set"]("p", data=data) == {"name": "p", "result": False, "comment": why, "changes": {}}


def test_set_file_checks(make) -> None:
    build, _ = make
    st = build(test=True)
    assert st["debconf.set_file"]("x", source="salt://sel")["comment"] == "Debconf selections would have been set."
    assert (
        build()["debconf.set_file"]("x", source="salt://s", context="no")["comment"]
        == "Context must be formed as a dict"
    )
    assert (
        build()["debconf.set_file"]("x", source="salt://s", defaults=[1])["comment"]
        == "Defaults must be formed as a dict"
    )


def test_parse_selections() -> None:
    salt = loader.minion_mods({"id": "t", "grains": {"os_family": "Debian"}})
    mod = salt.module("debconf")
    if mod is None:
        pytest.skip("debconf-utils is not installed")
    text = (
        "# A comment\n"
        "tzdata\ttzdata/Areas\tselect\tEtc\n"
        "tzdata\ttzdata/Zones/Etc\tselect\t\n"
        "p\tp/str\tstring\ttwo  words\n"
    )
    assert mod._parse(text) == {
        "tzdata": [["tzdata/Areas", "select", "Etc"], ["tzdata/Zones/Etc", "select", ""]],
        "p": [["p/str", "string", "two  words"]],
    }
    assert mod._parse(text, fetchempty=False)["tzdata"] == [["tzdata/Areas", "select", "Etc"]]
