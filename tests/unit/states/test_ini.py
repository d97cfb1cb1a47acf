"""ini.options_present / options_absent / sections_present / sections_absent on files in a temporary folder.

Salt's own answers for these cases are in tests/golden/files (ini_*); here:
what the goldens cannot show (second runs, bad input, deliberate differences).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from briny.common import loader


def _states(test: bool = False) -> Any:
    opts = {"test": test, "id": "t"}
    return loader.states(opts, loader.minion_mods(opts))


def test_present_live_then_quiet_then_test(tmp_path: Path) -> None:
    f = tmp_path / "a.ini"
    f.write_text("[Journal]\n#Storage=auto\nSeal=no\nextra=1\n")
    sections = {"Journal": {"Storage": "persistent", "Seal": "no"}}
    st = _states()
    first = st["ini.options_present"](str(f), sections=sections, strict=True)
    assert first["comment"] == "Changes take effect" and first["result"] is True
    assert first["changes"] == {
        "Journal": {
            "Storage": {"before": None, "after": "persistent"},
            "extra": {"before": "1", "after": None},
        }
    }
    assert f.read_text() == "[Journal]\nStorage = persistent\nSeal = no\n"
    again = st["ini.options_present"](str(f), sections=sections, strict=True)
    assert (again["result"], again["changes"], again["comment"]) == (True, {}, "No anomaly detected")
    dry = _states(test=True)["ini.options_present"](str(f), sections={"Journal": {"Seal": "yes"}}, strict=True)
    assert dry["result"] is None and dry["changes"] == {}
    assert dry["comment"] == "Deleted key Storage in section Journal.\nChanged key Seal in section Journal.\n"
    assert f.read_text() == "[Journal]\nStorage = persistent\nSeal = no\n"


def test_sections_present_creates_empty_sections(tmp_path: Path) -> None:
    f = tmp_path / "s.ini"
    f.write_text("[A]\nx = 1\n")
    dry = _states(test=True)["ini.sections_present"](str(f), sections=["A", "B"])
    assert (dry["result"], dry["comment"]) == (None, "Section unchanged A.\nCreated new section B.\n")
    ret = _states()["ini.sections_present"](str(f), sections=["A", "B"])
    assert ret["changes"] == {"B": {"before": None, "after": {}}} and ret["comment"] == "Changes take effect"
    assert f.read_text() == "[A]\nx = 1\n\n[B]\n"
    again = _states()["ini.sections_present"](str(f), sections={"A": {}, "B": {}})
    assert (again["changes"], again["comment"]) == ({}, "No anomaly detected")


def test_sections_absent_and_options_absent_second_runs(tmp_path: Path) -> None:
    f = tmp_path / "b.ini"
    f.write_text("top = 1\n[A]\nx = 1\nempty =\n[B]\n")
    st = _states()
    ret = st["ini.options_absent"](str(f), sections={"A": ["x", "empty"], "top": None})
    assert ret["changes"] == {"A": {"x": "1", "empty": ""}, "top": "1"}
    assert st["ini.options_absent"](str(f), sections={"A": ["x", "empty"], "top": None})["changes"] == {}
    ret = st["ini.sections_absent"](str(f), sections=["B", "C"])
    assert (ret["changes"], ret["comment"]) == ({"B": {}}, "Changes take effect")
    assert st["ini.sections_absent"](str(f), sections=["B"])["comment"] == "No anomaly detected"
    assert f.read_text() == "[A]\n"
    dry = _states(test=True)["ini.options_absent"](str(f), sections={"A": ["x"]})
    assert (dry["result"], dry["comment"]) == (True, "Key x in section A does not exist.\n")
    assert _states(test=True)["ini.sections_absent"](str(f), sections=[])["comment"] == "No changes detected."


def test_bad_input_fails_only_that_state(tmp_path: Path) -> None:
    folder = tmp_path / "dir.ini"
    folder.mkdir()
    st = _states()
    ret = st["ini.options_present"](str(tmp_path / "x.ini"), sections=["a"])
    assert (ret["result"], ret["comment"]) == (False, "sections must be a dictionary, not list")
    for test in (False, True):
        ret = _states(test)["ini.options_present"](str(folder), sections={"A": {"x": 1}})
        assert ret["result"] is False and ret["comment"].startswith(f"Unable to open file '{folder}'. Exception:")
    ret = st["ini.options_present"](str(tmp_path / "n.ini"), sections={"A": {"B": {"c": 1}}})
    assert ret["result"] is False and "one level of sections" in ret["comment"]


def test_malformed_lines_survive_an_edit(tmp_path: Path) -> None:
    f = tmp_path / "m.ini"
    f.write_text("garbage line without separator\n[A]\n=novalue\n[broken\nx=1\n")
    ret = _states()["ini.options_present"](str(f), sections={"A": {"y": 2}})
    assert ret["changes"] == {"A": {"y": {"before": None, "after": "2"}}}
    assert f.read_text() == "garbage line without separator\n\n[A]\n=novalue\n[broken\nx = 1\ny = 2\n"
