"""The ``timezone`` execution module and state on files in a temporary
directory (``/etc/localtime``, ``/etc/timezone``, ``/etc/adjtime``,
``/etc/default/rcS`` and a small zoneinfo tree): the file-based path briny
takes where systemd is not PID 1."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.minion.host import systemd as sd


@pytest.fixture
def tz(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """(build(test) -> (salt, states), tmp): the module over tmp/etc and tmp/zoneinfo."""
    monkeypatch.setattr(sd, "RUN_DIR", str(tmp_path / "no-systemd"))
    zi = tmp_path / "zoneinfo"
    (zi / "Etc").mkdir(parents=True)
    (zi / "Europe").mkdir()
    (zi / "Etc" / "UTC").write_bytes(b"TZif-utc")
    (zi / "UTC").write_bytes(b"TZif-utc")
    (zi / "Europe" / "Paris").write_bytes(b"TZif-paris")
    etc = tmp_path / "etc"
    (etc / "default").mkdir(parents=True)
    (etc / "localtime").symlink_to(zi / "Etc" / "UTC")
    (etc / "timezone").write_text("Etc/UTC\n")
    (tmp_path / "secret").write_bytes(b"TZif-utc")

    def build(test: bool = False) -> tuple[Any, Any]:
        opts = {"id": "t", "test": test}
        salt = loader.minion_mods(opts)
        mod = salt.module("timezone")
        mod.LOCALTIME, mod.TIMEZONE_FILE = str(etc / "localtime"), str(etc / "timezone")
        mod.ADJTIME, mod.RCS, mod.ZONEINFO = str(etc / "adjtime"), str(etc / "default" / "rcS"), str(zi)
        return salt, loader.states(opts, salt)

    return build, tmp_path


def test_execution_functions(tz) -> None:
    build, tmp = tz
    salt, _ = build()
    etc = tmp / "etc"
    assert salt["timezone.get_zone"]() == "Etc/UTC"
    assert salt["timezone.zone_compare"]("UTC") is True  # same data, another name: as Salt
    assert salt["timezone.zone_compare"]("Europe/Paris") is False
    for bad in ("Nowhere/Atlantis", "../secret", "/etc/passwd", "", "Europe"):
        with pytest.raises(Exception, match="Can't find a local timezone"):
            salt["timezone.zone_compare"](bad)
    assert salt["timezone.set_zone"]("Europe/Paris") is True
    assert os.readlink(etc / "localtime") == str(tmp / "zoneinfo" / "Europe" / "Paris")
    assert (etc / "timezone").read_text() == "Europe/Paris\n"
    assert salt["timezone.zone_compare"]("Europe/Paris") is True
    (etc / "timezone").unlink()
    assert salt["timezone.get_zone"]() == "Europe/Paris"  # from the link
    assert salt["timezone.get_hwclock"]() == "UTC"  # no /etc/adjtime: UTC, as hwclock(8)
    assert salt["timezone.set_hwclock"]("localtime") is True
    assert (etc / "adjtime").read_text() == "0.0 0 0.0\n0\nLOCAL\n"
    assert salt["timezone.get_hwclock"]() == "localtime"
    (etc / "adjtime").write_text("0.5 1700000000 0.0\n1700000000\nLOCAL\n")
    assert salt["timezone.set_hwclock"]("UTC") is True
    assert (etc / "adjtime").read_text() == "0.5 1700000000 0.0\n1700000000\nUTC\n"
    (etc / "default" / "rcS").write_text("# comment\nUTC=no\nVERBOSE=no\n")
    assert salt["timezone.get_hwclock"]() == "localtime"  # rcS wins, as in Salt
    salt["timezone.set_hwclock"]("UTC")
    assert (etc / "default" / "rcS").read_text() == "# comment\nUTC=yes\nVERBOSE=no\n"
    with pytest.raises(Exception, match="Only 'UTC' and 'localtime' are allowed"):
        salt["timezone.set_hwclock"]("moon")
    assert salt["timezone.get_offset"]()[0] in "+-"
    assert salt["timezone.get_zonecode"]()


def test_system_state(tz) -> None:
    build, tmp = tz
    _, tst = build(test=True)
    _, st = build()
    etc = tmp / "etc"
    assert st["timezone.system"]("Etc/UTC") == {
        "name": "Etc/UTC",
        "result": True,
        "changes": {},
        "comment": "Timezone Etc/UTC already set, UTC already set to Etc/UTC",
    }
    (etc / "adjtime").write_text("0.0 0 0.0\n0\nLOCAL\n")
    ret = tst["timezone.system"]("Europe/Paris")
    assert ret["result"] is None and ret["changes"] == {}
    assert ret["comment"] == "Timezone Europe/Paris needs to be set, UTC needs to be set to True"
    assert os.readlink(etc / "localtime").endswith("Etc/UTC")
    ret = st["timezone.system"]("Europe/Paris")
    assert ret == {
        "name": "Europe/Paris",
        "result": True,
        "changes": {"timezone": "Europe/Paris", "utc": True},
        "comment": "Set timezone Europe/Paris, Set UTC to True",
    }
    assert st["timezone.system"]("Europe/Paris")["changes"] == {}
    # utc: False never moves the clock to local time (Salt's rule)
    assert st["timezone.system"]("Europe/Paris", utc=False) == {
        "name": "Europe/Paris",
        "result": True,
        "changes": {},
        "comment": "Timezone Europe/Paris already set",
    }
    ret = st["timezone.system"]("Nowhere/Atlantis")
    assert ret["result"] is False
    assert ret["comment"] == (
        "Unable to compare desired timezone 'Nowhere/Atlantis' to system timezone: "
        'Can\'t find a local timezone "Nowhere/Atlantis"'
    )
    (etc / "localtime").unlink()
    ret = st["timezone.system"]("Europe/Paris")
    assert ret["result"] is False and "Failed to read" in ret["comment"]
