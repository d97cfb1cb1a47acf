"""The ``alternatives`` execution module and state over the real
``update-alternatives``, pointed at an alternatives folder and admin folder
in a temporary directory (``--altdir`` / ``--admindir``): nothing on the
host changes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

pytestmark = pytest.mark.skipif(shutil.which("update-alternatives") is None, reason="needs update-alternatives")


@pytest.fixture
def alt(tmp_path: Path):
    """(build(test) -> (salt, states), tmp): the module over tmp/alt and tmp/admin."""
    altdir, admin, bindir = tmp_path / "alt", tmp_path / "admin", tmp_path / "bin"
    for d in (altdir, admin, bindir):
        d.mkdir()
    wrapper = tmp_path / "update-alternatives"
    wrapper.write_text(f'#!/bin/sh\nexec update-alternatives --altdir {altdir} --admindir {admin} "$@"\n')
    wrapper.chmod(0o755)
    for name in ("one", "two"):
        (tmp_path / name).write_text(f"#!/bin/sh\necho {name}\n")
        (tmp_path / name).chmod(0o755)

    def build(test: bool = False) -> tuple[Any, Any]:
        opts = {"id": "t", "test": test}
        salt = loader.minion_mods(opts)
        mod = salt.module("alternatives")
        mod.ALT_DIR = str(altdir)
        mod.COMMAND = str(wrapper)
        return salt, loader.states(opts, salt)

    return build, tmp_path


def test_execution_functions(alt) -> None:
    build, tmp = alt
    salt, _ = build()
    link, one, two = str(tmp / "bin" / "brinyalt"), str(tmp / "one"), str(tmp / "two")
    assert salt["alternatives.show_current"]("brinyalt") is False
    assert salt["alternatives.show_link"]("brinyalt") is False
    assert salt["alternatives.check_exists"]("brinyalt", one) is False
    assert "no alternatives for brinyalt" in salt["alternatives.display"]("brinyalt")
    salt["alternatives.install"]("brinyalt", link, one, 10)
    salt["alternatives.install"]("brinyalt", link, two, 20)
    assert os.readlink(link) == str(tmp / "alt" / "brinyalt")
    assert salt["alternatives.show_current"]("brinyalt") == two
    assert salt["alternatives.show_link"]("brinyalt") == link
    assert salt["alternatives.check_exists"]("brinyalt", one) is True
    assert salt["alternatives.check_exists"]("brinyalt", str(tmp / "on")) is False  # exact paths only
    assert salt["alternatives.check_installed"]("brinyalt", two) is True
    assert salt["alternatives.display"]("brinyalt").splitlines()[0] == "brinyalt - auto mode"
    salt["alternatives.set"]("brinyalt", one)
    assert salt["alternatives.display"]("brinyalt").splitlines()[0] == "brinyalt - manual mode"
    assert "in auto mode" in salt["alternatives.auto"]("brinyalt")
    assert salt["alternatives.show_current"]("brinyalt") == two
    salt["alternatives.remove"]("brinyalt", two)
    assert salt["alternatives.show_current"]("brinyalt") == one
    assert "doesn't exist" in salt["alternatives.install"]("brinyalt", link, str(tmp / "nope"), 5)


def _r(name: str, result: Any, comment: str, changes: Any = None, **extra: Any) -> dict[str, Any]:
    return {"name": name, "result": result, "comment": comment, "changes": changes or {}, **extra}


def test_states_live_twice_and_test_mode(alt) -> None:
    build, tmp = alt
    link, one, two = str(tmp / "bin" / "brinyalt"), str(tmp / "one"), str(tmp / "two")
    _, st = build(test=True)
    ins = {"link": link, "path": one, "priority": 10}
    assert st["alternatives.install"]("brinyalt", link, one, 10) == _r(
        "brinyalt", None, f"Alternative will be set for brinyalt to {one} with priority 10", **ins
    )
    assert st["alternatives.auto"]("brinyalt") == _r("brinyalt", None, "brinyalt will be put in auto mode")
    assert not os.path.lexists(link)
    _, st = build()
    assert st["alternatives.install"]("brinyalt", link, one, 10) == _r(
        "brinyalt",
        True,
        f"Alternative for brinyalt set to path {one} with priority 10",
        {"name": "brinyalt", **ins},
        **ins,
    )
    assert st["alternatives.install"]("brinyalt", link, one, 10) == _r(
        "brinyalt", True, f"Alternative {one} for brinyalt is already registered", **ins
    )
    ret = st["alternatives.install"]("brinyalt", link, two, 5)
    assert ret["comment"] == f"Alternative {two} for brinyalt registered with priority 5 and not set to default"
    _, tst = build(test=True)
    assert tst["alternatives.set"]("brinyalt", two) == _r(
        "brinyalt", None, f"Alternative for brinyalt will be set to path {two}", path=two
    )
    assert st["alternatives.set"]("brinyalt", two) == _r(
        "brinyalt", True, f"Alternative for brinyalt set to path {two}", {"path": two}, path=two
    )
    assert st["alternatives.set"]("brinyalt", two) == _r(
        "brinyalt", True, f"Alternative for brinyalt already set to {two}", path=two
    )
    ret = st["alternatives.auto"]("brinyalt")
    assert ret["result"] is True and "in auto mode" in ret["changes"]["result"]
    assert st["alternatives.auto"]("brinyalt") == _r("brinyalt", True, "brinyalt already in auto mode")
    assert tst["alternatives.remove"]("brinyalt", one) == _r(
        "brinyalt", None, "Alternative for brinyalt will be removed", path=one
    )
    assert st["alternatives.remove"]("brinyalt", one) == _r(
        "brinyalt", True, f"Alternative for brinyalt removed. Falling back to path {two}", {"path": two}, path=one
    )
    assert st["alternatives.remove"]("brinyalt", one) == _r(
        "brinyalt", True, f"Alternative for brinyalt is set to it's default path {two}", path=one
    )
    assert st["alternatives.remove"]("brinyalt", two) == _r(
        "brinyalt", True, "Alternative for brinyalt removed", path=two
    )
    assert st["alternatives.remove"]("brinyalt", two) == _r(
        "brinyalt", False, "Alternative for brinyalt doesn't exist", path=two
    )
    assert not os.path.lexists(link)


def test_bad_input(alt) -> None:
    build, tmp = alt
    _, st = build()
    link = str(tmp / "bin" / "brinyalt")
    ret = st["alternatives.install"]("brinyalt", link, str(tmp / "nope"), 5)
    assert ret["result"] is False
    assert ret["comment"].startswith("Alternative for brinyalt not installed: update-alternatives: error:")
    assert st["alternatives.set"]("brinyalt", str(tmp / "one")) == _r(
        "brinyalt", False, f"Alternative {tmp / 'one'} for brinyalt doesn't exist", path=str(tmp / "one")
    )
    # Salt: result True with the error as the change; here the state fails
    assert st["alternatives.auto"]("brinyalt") == _r(
        "brinyalt", False, "update-alternatives: error: no alternatives for brinyalt"
    )
