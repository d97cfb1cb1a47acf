"""ini, sysctl, host, mount and ssh_known_hosts states applied live with ``briny-call --local``.

Each tree runs in test mode (nothing on the host changes), live, and live
again (no changes the second time); the assertions look at the host: the
files, ``/proc/self/mountinfo``, ``sysctl``. Everything lives in the test's
temporary folder; a system setting a test must touch is put back in a
``finally``. The comments and changes are Salt's (tests/golden/files has the
reference's own answers for the same kinds of cases).
"""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.host,
    pytest.mark.skipif(os.name != "posix" or os.geteuid() != 0, reason="applies states to this host as root"),
]

Apply = Callable[..., dict[str, dict[str, Any]]]


@pytest.fixture
def apply(tmp_path: Path, briny_call) -> Apply:
    """apply(sls_text, test=False, config="") -> {state id: result}: state.sls on a one-file tree."""
    tree, conf = tmp_path / "srv", tmp_path / "etc"
    tree.mkdir()
    conf.mkdir()

    def run(sls: str, test: bool = False, config: str = "") -> dict[str, dict[str, Any]]:
        (tree / "case.sls").write_text(textwrap.dedent(sls))
        (conf / "minion").write_text(
            f"id: files\nfile_client: local\nroot_dir: {tmp_path}/root\nfile_roots:\n  base: [{tree}]\n"
            + textwrap.dedent(config)
        )
        p = briny_call(conf, ["state.sls", "case"] + (["test=True"] if test else []), cwd=tmp_path)
        try:
            data = json.loads(p.stdout)["local"]
        except (ValueError, KeyError):
            raise AssertionError(f"briny-call failed: {p.stdout}\n{p.stderr}") from None
        assert isinstance(data, dict), data
        return {r["__id__"]: r for r in data.values()}

    return run


def _quiet(results: dict[str, dict[str, Any]]) -> None:
    for ret in results.values():
        assert ret["changes"] == {} and ret["result"] is True, ret


# --------------------------------------------------------------------- ini


def test_ini_states(apply: Apply, tmp_path: Path) -> None:
    conf = tmp_path / "journald.conf"
    stock = "#  This file is part of systemd.\n\n[Journal]\n#Storage=auto\n#Compress=yes\nSeal=no\n"
    conf.write_text(stock)
    other = tmp_path / "other.ini"
    other.write_text("keep = 1\n[gone]\na = b\n[old]\nx = 1\ny = 2\n")
    sls = f"""
    journald:
      ini.options_present:
        - name: {conf}
        - strict: True
        - sections:
            Journal:
              Storage: persistent
              Compress: 'yes'
    sections:
      ini.sections_present:
        - name: {other}
        - sections: [new]
    sections_gone:
      ini.sections_absent:
        - name: {other}
        - sections: [gone]
    options_gone:
      ini.options_absent:
        - name: {other}
        - sections:
            old: [x]
    """
    dry = apply(sls, test=True)
    assert dry["journald"]["result"] is None and dry["journald"]["comment"] == (
        "Deleted key Seal in section Journal.\nChanged key Storage in section Journal.\n"
        "Changed key Compress in section Journal.\n"
    )
    assert dry["sections"]["comment"] == "Created new section new.\n"
    assert dry["sections_gone"]["comment"] == "Deleted section gone.\n"
    assert dry["options_gone"]["comment"] == "Deleted key x in section old.\n"
    assert conf.read_text() == stock and other.read_text() == "keep = 1\n[gone]\na = b\n[old]\nx = 1\ny = 2\n"

    first = apply(sls)
    assert first["journald"]["changes"] == {
        "Journal": {
            "Seal": {"before": "no", "after": None},
            "Storage": {"before": None, "after": "persistent"},
            "Compress": {"before": None, "after": "yes"},
        }
    }
    assert conf.read_text() == "#  This file is part of systemd.\n\n[Journal]\nStorage = persistent\nCompress = yes\n"
    assert first["sections_gone"]["changes"] == {"gone": {"a": "b"}}
    assert first["options_gone"]["changes"] == {"old": {"x": "1"}}
    assert other.read_text() == "keep = 1\n\n[old]\ny = 2\n\n[new]\n"
    _quiet(apply(sls))
