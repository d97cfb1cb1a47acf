"""The ``sysctl`` execution module and ``sysctl.present``: config files in a temporary folder.

Live values are only read here, or set to the value they already have
(kernel.msgmax is written with the value it has); tests/integration covers a real change.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from briny.common import loader
from briny.common.exceptions import CommandExecutionError

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(
        not os.path.isdir("/proc/sys/kernel") or os.geteuid() != 0, reason="writes a sysctl (its own value) as root"
    ),
]
KEY = "kernel.msgmax"


def _live(key: str = KEY) -> str:
    return Path("/proc/sys", key.replace(".", "/")).read_text().strip()


def _mods(test: bool = False) -> tuple[Any, Any]:
    opts = {"test": test, "id": "t"}
    salt = loader.minion_mods(opts, {"kernel": "Linux"})
    return salt, loader.states(opts, salt)


def test_show_get_and_default_config(tmp_path: Path) -> None:
    salt, _ = _mods()
    live = salt["sysctl.show"]()
    assert live[KEY] == _live() and salt["sysctl.get"](KEY) == _live()
    conf = tmp_path / "s.conf"
    conf.write_text("# a = b\n; c = d\nx.y = 1 2\nbad line\n  z=3\n")
    assert salt["sysctl.show"](config_file=str(conf)) == {"; c": "d", "x.y": "1 2", "z": "3"}
    assert salt["sysctl.show"](config_file=str(tmp_path / "none")) == []
    assert salt["sysctl.show"](config_file=str(tmp_path)) is None
    systemd = os.path.isdir("/run/systemd/system")
    assert salt["sysctl.default_config"]() in (
        ["/etc/sysctl.d/99-salt.conf", "/etc/sysctl.conf"] if systemd else ["/etc/sysctl.conf"]
    )
    assert "not available" in str(loader.minion_mods({"id": "t"}, {"kernel": "Darwin"}).missing_message("sysctl.get"))


def test_assign_errors_are_salts() -> None:
    salt, _ = _mods()
    with pytest.raises(CommandExecutionError, match="^sysctl kernel.brinynosuch does not exist$"):
        salt["sysctl.assign"]("kernel.brinynosuch", 1)
    with pytest.raises(CommandExecutionError, match="^sysctl -w failed: "):
        salt["sysctl.assign"]("kernel.osrelease", "1.2.3")
    assert salt["sysctl.assign"](KEY, _live()) == {KEY: _live()}


def test_persist_keeps_other_lines_and_settles_every_line_of_the_key(tmp_path: Path) -> None:
    salt, _ = _mods()
    conf = tmp_path / "sysctl.conf"
    value = _live()
    conf.write_text(f"# c\n{KEY}=1\nvm.x = 2\n{KEY} = 3\nno newline")
    os.chmod(conf, 0o600)
    assert salt["sysctl.persist"](KEY, value, str(conf)) == "Updated"
    assert conf.read_text() == f"# c\n{KEY} = {value}\nvm.x = 2\n{KEY} = {value}\nno newline"
    assert conf.stat().st_mode & 0o777 == 0o600
    assert salt["sysctl.persist"](KEY, value, str(conf)) == "Already set"
    other = tmp_path / "d" / "e" / "99.conf"
    assert salt["sysctl.persist"](KEY, value, str(other)) == "Updated"
    assert other.read_text() == f"#\n# Kernel sysctl configuration\n#\n{KEY} = {value}\n"
    last = tmp_path / "last.conf"
    last.write_text("vm.x = 2")
    salt["sysctl.persist"](KEY, value, str(last))
    assert last.read_text() == f"vm.x = 2\n{KEY} = {value}\n"


def test_present_states(tmp_path: Path) -> None:
    conf = tmp_path / "sysctl.conf"
    value = _live()
    _, dry = _mods(test=True)
    ret = dry["sysctl.present"](KEY, value, config=str(conf))
    assert (ret["result"], ret["changes"]) == (None, {}) and not conf.exists()
    assert ret["comment"].startswith("Sysctl value is currently set on the running system but not in a config file.")
    assert dry["sysctl.present"](KEY, value, config=str(tmp_path))["comment"].startswith(
        f"Sysctl option {KEY} might be changed, we failed to check config file at {tmp_path}."
    )
    _, st = _mods()
    ret = st["sysctl.present"](KEY, value, config=str(conf))
    assert ret == {
        "name": KEY,
        "result": True,
        "changes": {KEY: value},
        "comment": f"Updated sysctl value {KEY} = {value}",
    }
    again = st["sysctl.present"](KEY, value, config=str(conf))
    assert (again["changes"], again["comment"]) == ({}, f"Sysctl value {KEY} = {value} is already set")
    assert dry["sysctl.present"](KEY, value, config=str(conf))["result"] is True
    bad = st["sysctl.present"]("kernel.osrelease", "1.2.3", config=str(conf))
    assert (bad["result"], bad["comment"]) == (False, "Failed to set kernel.osrelease to 1.2.3: sysctl -w failed: ")
    ret = st["sysctl.present"](KEY, value, config=str(tmp_path))
    assert (ret["result"], ret["comment"]) == (
        False,
        f"Failed to set {KEY} to {value}: Could not read from file: {tmp_path}",
    )
