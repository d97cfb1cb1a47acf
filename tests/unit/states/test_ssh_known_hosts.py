"""ssh_known_hosts.present / absent on a known_hosts file in a temporary folder (keys given, no server).

Salt's answers for these cases are in tests/golden/files (known_hosts_*); here:
second runs and the argument checks in both modes.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from briny.common import loader

pytestmark = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="needs OpenSSH's ssh-keygen")
KEY = "AAAAC3NzaC1lZDI1NTE5AAAAIEA1lUCy0V3ZjQCFaBP6Xr8a/jeHUQ7pg076xYPa5RBs"


def _states(test: bool = False) -> Any:
    opts = {"test": test, "id": "t"}
    return loader.states(opts, loader.minion_mods(opts))


@pytest.mark.parametrize("test", [False, True])
def test_argument_checks_hold_in_both_modes(tmp_path: Path, test: bool) -> None:
    present = _states(test)["ssh_known_hosts.present"]
    conf = str(tmp_path / "kh")
    cases = [
        ({"key": KEY, "fingerprint": "aa", "config": conf}, 'Specify either "key" or "fingerprint", not both.'),
        ({"key": KEY, "config": conf}, 'Required argument "enc" if using "key" argument.'),
        ({"port": 2222, "config": conf}, "argument port can not be used in conjunction with argument hash_known_hosts"),
        (
            {"key": KEY, "enc": "ssh-ed25519", "config": "rel/kh"},
            'If not specifying a "user", specify an absolute "config".',
        ),
    ]
    for kwargs, comment in cases:
        ret = present("h.example", **kwargs)
        assert (ret["result"], ret["comment"], ret["changes"]) == (False, comment, {})
    assert _states(test)["ssh_known_hosts.absent"]("h", config="rel")["result"] is False
    assert not (tmp_path / "kh").exists()


def test_present_absent_cycle(tmp_path: Path) -> None:
    conf = str(tmp_path / "kh")
    args = {"key": KEY, "enc": "ssh-ed25519", "config": conf, "hash_known_hosts": False}
    st, dry = _states(), _states(test=True)
    assert dry["ssh_known_hosts.present"]("h.example", **args)["result"] is None
    ret = st["ssh_known_hosts.present"]("h.example", **args)
    assert ret["comment"] == f"h.example's key saved to {conf} (key: {KEY})"
    assert ret["changes"] == {"old": None, "new": [{"hostname": "h.example", "enc": "ssh-ed25519", "key": KEY}]}
    again = st["ssh_known_hosts.present"]("h.example", **args)
    assert (again["result"], again["changes"], again["comment"]) == (True, {}, f"h.example already exists in {conf}")
    assert dry["ssh_known_hosts.present"]("h.example", **args)["comment"] == f"Host h.example is already in {conf}"
    assert dry["ssh_known_hosts.absent"]("h.example", config=conf)["result"] is None
    gone = st["ssh_known_hosts.absent"]("h.example", config=conf)
    assert gone["result"] is True and gone["changes"]["new"] is None and "# Host h.example found" in gone["comment"]
    assert st["ssh_known_hosts.absent"]("h.example", config=conf)["comment"] == "Host is already absent"
    bad = st["ssh_known_hosts.present"]("b.example", key="bm90IGEga2V5", enc="ssh-ed25519", config=conf)
    assert (bad["result"], bad["comment"]) == (False, "Invalid public key: bm90IGEga2V5")
