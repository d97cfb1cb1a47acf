"""saltutil.runner through `briny-call --local` on the master's host: from a template and from the
command line (Salt 3007.17 answers the same calls with the same data when the master's config is
beside the minion's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SLS = """\
{% set got = salt['saltutil.runner']('test.arg', arg=[1, 'two'], kwarg={'k': 'v'}, extra=3) %}
show:
  test.succeed_without_changes:
    - name: {{ got['args'] | join('-') }}-{{ got['kwargs']['k'] }}-{{ got['kwargs']['extra'] }}
"""


@pytest.fixture
def conf(tmp_path: Path) -> Path:
    conf, srv = tmp_path / "conf", tmp_path / "srv"
    conf.mkdir()
    srv.mkdir()
    (srv / "runner.sls").write_text(SLS)
    (conf / "minion").write_text(
        f"id: m1\nfile_client: local\nfile_roots: {{base: [{srv}]}}\nroot_dir: {tmp_path / 'mroot'}\n"
    )
    (conf / "master").write_text(f"root_dir: {tmp_path / 'root'}\ncachedir: cache\npki_dir: pki\nsock_dir: sock\n")
    return conf


def test_from_a_template(briny_call, conf: Path, tmp_path: Path) -> None:
    p = briny_call(conf, ["state.sls", "runner"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    (ret,) = json.loads(p.stdout)["local"].values()
    assert ret["name"] == "1-two-v-3" and ret["result"] is True


def test_from_the_command_line(briny_call, conf: Path, tmp_path: Path) -> None:
    p = briny_call(conf, ["saltutil.runner", "test.arg", "arg=[1,2]", "kwarg={'x': 1}", "c=3"], cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"local": {"args": [1, 2], "kwargs": {"x": 1, "c": 3}}}


def test_errors_say_why(briny_call, conf: Path, tmp_path: Path) -> None:
    p = briny_call(conf, ["saltutil.runner", "nope.nope"], cwd=tmp_path)
    assert p.returncode != 0 and "'nope.nope' is not available." in p.stdout + p.stderr
    (conf / "master").unlink()
    p = briny_call(conf, ["state.sls", "runner"], cwd=tmp_path)
    assert p.returncode != 0
    assert "a minion does not ask its master to run runners" in p.stdout + p.stderr
