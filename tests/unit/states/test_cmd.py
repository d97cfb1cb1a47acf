"""The cmd state module: real commands on this host, results as Salt 3007 reports them."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader

# Used only while minion/host/modules/cmd.py (another issue) is not there yet.
_FAKE_CMD = textwrap.dedent("""
    import os, subprocess
    def run_all(cmd, cwd=None, stdin=None, runas=None, shell=None, python_shell=None, env=None,
                umask=None, timeout=None, ignore_retcode=False, success_retcodes=None,
                hide_output=False, **kwargs):
        full = dict(os.environ)
        full.update({k: str(v) for k, v in (env or {}).items()})
        def pre():
            if umask:
                os.umask(int(str(umask), 8))
        p = subprocess.Popen([shell or "/bin/bash", "-c", cmd], cwd=cwd, env=full, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, preexec_fn=pre)
        out, err = p.communicate()
        rc = p.returncode
        if success_retcodes and rc in success_retcodes:
            rc = 0
        return {"pid": p.pid, "retcode": rc, "stdout": out.rstrip("\\n"), "stderr": err.rstrip("\\n")}
""")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "s.sh").write_text('#!/bin/sh\necho "script args: $@"\necho "cwd $(pwd)"\n')
    return root


def _states(tmp_path: Path, tree: Path, test: bool = False) -> Any:
    opts = {"test": test, "file_roots": {"base": [str(tree)]}, "id": "t", "cachedir": str(tmp_path / "cache")}
    salt = loader.minion_mods(opts)
    if "cmd.run_all" not in salt:
        fake = tmp_path / "fake_modules"
        fake.mkdir(exist_ok=True)
        (fake / "cmd.py").write_text(_FAKE_CMD)
        salt = loader.minion_mods(opts, extra_dirs=[fake])
    return loader.states(opts, salt)


def _changes(ret: dict) -> dict:
    return {k: v for k, v in ret["changes"].items() if k != "pid"}


def test_run_success_and_failure(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.run"](name="echo hi")
    assert ret["result"] is True and ret["comment"] == 'Command "echo hi" run'
    assert _changes(ret) == {"retcode": 0, "stdout": "hi", "stderr": ""}
    assert isinstance(ret["changes"]["pid"], int)
    ret = st["cmd.run"](name="false")
    assert ret["result"] is False and ret["comment"] == 'Command "false" run'
    assert ret["changes"]["retcode"] == 1
    ret = st["cmd.run"](name="echo out; echo err >&2; exit 2")
    assert _changes(ret) == {"retcode": 2, "stdout": "out", "stderr": "err"}


def test_run_test_mode(tmp_path: Path, tree: Path) -> None:
    marker = tmp_path / "ran"
    ret = _states(tmp_path, tree, test=True)["cmd.run"](name=f"touch {marker}")
    assert ret == {
        "name": f"touch {marker}",
        "result": None,
        "changes": {"cmd": f"touch {marker}"},
        "comment": f'Command "touch {marker}" would have been executed',
    }
    assert not marker.exists()


def test_cwd_env_umask_shell(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    assert st["cmd.run"](name="pwd", cwd=str(tmp_path))["changes"]["stdout"] == str(tmp_path)
    ret = st["cmd.run"](name="echo $FOO $BAR", env=[{"FOO": "a"}, {"BAR": "b"}])
    assert ret["changes"]["stdout"] == "a b"
    assert st["cmd.run"](name="echo $FOO", env={"FOO": "z"})["changes"]["stdout"] == "z"
    assert st["cmd.run"](name="umask", umask="077")["changes"]["stdout"] == "0077"
    assert st["cmd.run"](name="echo $0", shell="/bin/sh")["changes"]["stdout"] == "/bin/sh"


def test_bad_inputs_fail_the_state(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.run"](name="echo hi", cwd="/nonexistent")
    assert (ret["result"], ret["changes"]) == (False, {})
    assert ret["comment"] == 'Desired working directory "/nonexistent" is not available'
    ret = st["cmd.run"](name="id", runas="nosuchuser_briny")
    assert ret["comment"] == "User 'nosuchuser_briny' is not available" and ret["result"] is False
    for test in (False, True):
        ret = _states(tmp_path, tree, test=test)["cmd.run"](name="echo hi", env=5)
        assert ret["result"] is False
        assert ret["comment"] == "Invalidly-formatted 'env' parameter. See documentation."


def test_success_retcodes_and_hide_output(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.run"](name="exit 3", success_retcodes=[3])
    assert ret["result"] is True and ret["changes"]["retcode"] == 0
    ret = st["cmd.run"](name="echo secret", hide_output=True)
    assert ret["changes"]["stdout"] == "" and ret["result"] is True


def test_creates(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.run"](name="echo x", creates=str(tmp_path))
    assert ret == {"name": "echo x", "changes": {}, "result": True, "comment": f"{tmp_path} exists", "skip_watch": True}
    ret = st["cmd.run"](name="echo x", creates=[str(tmp_path), str(tree)])
    assert ret["comment"] == "All files in creates exist"
    ret = st["cmd.run"](name="echo y", creates=[str(tmp_path), "/nonexist"])
    assert ret["comment"] == 'Command "echo y" run'


def test_stateful_key_value(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.run"](name='echo hello; echo "changed=yes comment=\\"my comment\\" extra=1"', stateful=True)
    assert ret["result"] is True and ret["comment"] == "my comment"
    assert _changes(ret) == {"changed": "yes", "extra": "1", "retcode": 0, "stdout": "hello", "stderr": ""}
    assert list(ret["changes"])[:2] == ["changed", "extra"]
    ret = st["cmd.run"](name='echo hello; echo "changed=no comment=nothing"', stateful=True)
    assert (ret["result"], ret["comment"], ret["changes"]) == (True, "nothing", {})
    ret = st["cmd.run"](name='echo "changed=yes comment=bad"; exit 1', stateful=True)
    assert ret["result"] is False and ret["comment"] == "bad" and ret["changes"]["stdout"] == ""


def test_stateful_json_and_garbage(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.run"](name="""echo '{"changed": true, "comment": "jc", "foo": 3}'""", stateful=True)
    assert ret["comment"] == "jc"
    assert _changes(ret) == {"changed": True, "foo": 3, "retcode": 0, "stdout": "", "stderr": ""}
    ret = st["cmd.run"](name="echo plain", stateful=True)
    assert ret["result"] is False
    assert ret["comment"] == "Failed parsing script output! Stdout must be JSON or a line of name=value pairs."
    assert ret["changes"]["stdout"] == "plain"


def test_stateful_test_mode(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree, test=True)
    marker = tmp_path / "ran"
    ret = st["cmd.run"](name=f'touch {marker}; echo "changed=yes"', stateful=True)
    assert (ret["result"], ret["comment"], ret["changes"]) == (None, "", {})
    assert not marker.exists()
    ret = st["cmd.run"](
        name='echo "changed=yes comment=real"', stateful=[{"test_name": 'echo "changed=no comment=testname"'}]
    )
    assert (ret["result"], ret["comment"], ret["changes"]) == (True, "testname", {})


def test_wait_and_mod_watch(tmp_path: Path, tree: Path) -> None:
    for test in (False, True):
        st = _states(tmp_path, tree, test=test)
        assert st["cmd.wait"](name="echo waited") == {
            "name": "echo waited",
            "changes": {},
            "result": True,
            "comment": "",
        }
        assert st["cmd.wait_script"](name="ws", source="salt://s.sh")["comment"] == ""
    st = _states(tmp_path, tree)
    ret = st["cmd.mod_watch"](name="echo waited", sfun="wait", __reqs__={"watch": []})
    assert ret["comment"] == 'Command "echo waited" run' and ret["changes"]["stdout"] == "waited"
    ret = st["cmd.mod_watch"](name="ws", sfun="wait_script", source="salt://s.sh", args="a b")
    assert ret["changes"]["stdout"].startswith("script args: a b")
    ret = st["cmd.mod_watch"](name="x", sfun="bogus")
    assert ret["result"] is False
    ret = _states(tmp_path, tree, test=True)["cmd.mod_watch"](name="echo w", sfun="wait")
    assert ret["comment"] == 'Command "echo w" would have been executed'


def test_script(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    ret = st["cmd.script"](name="sc", source="salt://s.sh", args="a b", cwd=str(tmp_path))
    assert ret["result"] is True and ret["comment"] == "Command 'sc' run"
    assert ret["changes"]["stdout"] == f"script args: a b\ncwd {tmp_path}"
    ret = st["cmd.script"](name="salt://s.sh")
    assert ret["result"] is True and ret["changes"]["stdout"].startswith("script args: \n")
    ret = st["cmd.script"](name="scmiss", source="salt://nope.sh")
    assert ret == {
        "name": "scmiss",
        "result": False,
        "changes": {"pid": 0, "retcode": 1, "stdout": "", "stderr": "", "cache_error": True},
        "comment": "Unable to cache script salt://nope.sh from saltenv 'base'",
    }
    ret = _states(tmp_path, tree, test=True)["cmd.script"](name="sc", source="salt://s.sh")
    assert (ret["result"], ret["comment"], ret["changes"]) == (None, "Command 'sc' would have been executed", {})


def test_script_template_bad_inputs_and_render_errors(tmp_path: Path, tree: Path) -> None:
    st = _states(tmp_path, tree)
    (tree / "t.sh").write_text("#!/bin/sh\necho {{ undefined_thing.port }}\n")
    ret = st["cmd.script"](name="t", source="salt://t.sh", template="jinja", context=["a"])
    assert (ret["result"], ret["comment"]) == (
        False,
        "Invalidly-formatted 'context' parameter. Must be formed as a dict.",
    )
    ret = st["cmd.script"](name="t", source="salt://t.sh", template="jinja", defaults="a=1")
    assert ret["comment"] == "Invalidly-formatted 'defaults' parameter. Must be formed as a dict."
    ret = st["cmd.script"](name="t", source="salt://t.sh", template="jinja")  # Salt's words for a render error
    assert (ret["result"], ret["comment"]) == (False, "Unable to cache script salt://t.sh from saltenv 'base'")
    ret = st["cmd.script"](name="t", source="salt://t.sh", template="jinja", undefined_thing={"port": 1})
    assert ret["result"] is True and ret["changes"]["stdout"] == "1"


def test_no_temp_files_left(tmp_path: Path, tree: Path) -> None:
    before = set(os.listdir("/tmp"))
    _states(tmp_path, tree)["cmd.script"](name="sc", source="salt://s.sh")
    assert not {n for n in set(os.listdir("/tmp")) - before if n.startswith("briny-script-")}
