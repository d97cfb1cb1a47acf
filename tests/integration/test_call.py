"""``briny-call --local`` as a user runs it: a real process, real files, exit codes, events."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.customtree import CUSTOM_MODULES

from briny.common.event import EventBus, EventListener, EventSender
from tests.waiting import join_listener

REPO = Path(__file__).resolve().parents[2]


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(textwrap.dedent(text))


@pytest.fixture
def minion(tmp_path):
    """(conf_dir, tree, root): a masterless minion config over a fresh tree."""
    tree, pillar, conf, root = (tmp_path / d for d in ("srv", "pillar", "etc", "root"))
    for d in (tree, pillar, conf, root):
        d.mkdir()
    (conf / "minion").write_text(
        f"id: itest\nfile_client: local\nroot_dir: {root}\nfile_roots:\n  base: [{tree}]\n"
        f"pillar_roots:\n  base: [{pillar}]\nsock_dir: sock\n"
    )  # under root_dir
    return conf, tree, root


def call(conf: Path, *args: str, out: str = "json", timeout: float = 120) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "briny.minion.call", "--local", "-c", str(conf), *args]
    if out:
        cmd.append(f"--out={out}")
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def local(proc: subprocess.CompletedProcess):
    return json.loads(proc.stdout)["local"]


def test_example_tree_applies_and_is_idempotent(tmp_path):
    conf, root = tmp_path / "etc", tmp_path / "root"
    conf.mkdir()
    (conf / "minion").write_text(
        f"id: example\nfile_client: local\nroot_dir: {root}\n"
        f"file_roots:\n  base: [{REPO}/deploy/example/salt]\npillar_roots:\n  base: [{REPO}/deploy/example/pillar]\n"
    )
    first = call(conf, "state.apply")
    assert first.returncode == 0, first.stderr
    results = local(first)
    assert len(results) == 8 and all(r["result"] is True for r in results.values())
    app = root / "srv" / "example"
    assert (app / "sites" / "www.conf").read_text() == "# managed by briny\nserver_name www;\nlisten 8080;\n"
    assert (app / "index.txt").read_text() == "www:8080\napi:8081\nadmin:8082\n"
    assert (app / "last-reload").read_text() == "restarting, debian family\n"
    order = sorted(results.values(), key=lambda r: r["__run_num__"])
    assert [r["__id__"] for r in order][:2] == ["example-root", "example-logs"]  # included SLS first
    second = local(call(conf, "state.apply"))
    assert all(r["changes"] == {} for r in second.values())
    assert second["cmd_|-example-reload_|-echo restarting, debian family > " + str(app) + "/last-reload_|-wait"][
        "result"
    ]


def test_failed_state_exits_1_and_others_still_run(minion):
    conf, tree, root = minion
    write(
        tree,
        {
            "f.sls": f"""
        bad:
          cmd.run:
            - name: 'false'
        after_bad:
          test.nop:
            - require:
              - cmd: bad
        independent:
          file.managed:
            - name: {root}/independent
            - contents: still written
        """
        },
    )
    proc = call(conf, "state.sls", "f")
    assert proc.returncode == 1
    ret = local(proc)
    assert ret["cmd_|-bad_|-false_|-run"]["result"] is False
    assert ret["test_|-after_bad_|-after_bad_|-nop"]["comment"] == "One or more requisite failed: f.bad"
    assert (root / "independent").read_text() == "still written\n"


@pytest.mark.parametrize(
    "files,fragment",
    [
        ({"x.sls": "a:\n  test.nop:\n   - foo: [1,\n"}, "Rendering SLS 'base:x' failed: while parsing a flow sequence"),
        ({"x.sls": "a: {{ nope }}\n"}, "Rendering SLS 'base:x' failed: Jinja variable 'nope' is undefined; line 1"),
        ({"x.sls": "a:\n  test.nop: []\na:\n  test.nop: []\n"}, "found conflicting ID 'a'"),
        ({"x.sls": "include: [missing]\n"}, "Specified SLS missing in saltenv base is not available"),
    ],
)
def test_compile_errors_exit_1_and_nothing_runs(minion, files, fragment):
    conf, tree, root = minion
    files = dict(files)
    files["x.sls"] = files["x.sls"] + f"\nwriter:\n  file.managed:\n    - name: {root}/written\n"
    write(tree, files)
    proc = call(conf, "state.sls", "x")
    assert proc.returncode == 1
    errors = local(proc)
    assert isinstance(errors, list) and any(fragment in e for e in errors), errors
    assert not (root / "written").exists()


def test_exclude_by_id_and_by_sls_as_salt(minion):
    """``exclude`` given as a list of ``{id: ...}`` / ``{sls: ...}`` maps (Salt's documented form)
    and as a comma list of SLS globs."""
    conf, tree, root = minion
    write(
        tree,
        {
            "a.sls": "include:\n  - b\none:\n  test.succeed_without_changes\ntwo:\n  test.succeed_without_changes\n",
            "b.sls": "three:\n  test.succeed_without_changes\n",
        },
    )
    ids = lambda proc: sorted(r["__id__"] for r in local(proc).values())
    assert ids(call(conf, "state.sls", "a", "exclude=[{'id': 'one'}]")) == ["three", "two"]
    assert ids(call(conf, "state.sls", "a", "exclude=[{'sls': 'b'}, {'id': 'two'}]")) == ["one"]
    assert ids(call(conf, "state.sls", "a", "exclude=b")) == ["one", "two"]


def test_test_mode_changes_nothing(minion):
    conf, tree, root = minion
    write(tree, {"t.sls": f"f:\n  file.managed:\n    - name: {root}/new\n    - contents: x\n"})
    ret = local(call(conf, "state.sls", "t", "test=True"))
    only = next(iter(ret.values()))
    assert only["result"] is None and only["changes"]
    assert not (root / "new").exists()


def test_missing_function_and_bad_config(minion, tmp_path):
    conf, _, _ = minion
    proc = call(conf, "nosuch.fun")
    assert proc.returncode == 255 and "'nosuch.fun' is not available" in proc.stderr
    bad = tmp_path / "badconf"
    bad.mkdir()
    (bad / "minion").write_text("master_port: [1, 2]\n")
    proc = call(bad, "test.ping")
    assert proc.returncode == 2 and "'master_port' must be an integer" in proc.stderr
    proc = call(tmp_path / "nowhere", "test.ping")
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_local_names_the_keys_it_will_not_act_on(minion):
    """Masterless users see the config warnings the daemons log at start: a Salt setting briny
    does not act on (a returner, a proxy block, an ext_pillar) and a key that is no Salt setting."""
    conf, _, _ = minion
    with (conf / "minion").open("a") as fh:
        fh.write("return: mysql\nproxy: {proxytype: dummy}\next_pillar: [{cmd_yaml: cat x}]\nfrobnicate: 1\n")
    proc = call(conf, "test.ping")
    assert proc.returncode == 0 and local(proc) is True, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("[WARNING ]")]
    assert warnings == [
        f"[WARNING ] {conf / 'minion'}: Salt settings briny does not support, accepted without effect "
        "(docs/migrating.md): ext_pillar, proxy, return",
        f"[WARNING ] {conf / 'minion'}: keys that are not Salt 3007 minion settings nor briny's, kept only as "
        "data for config.get: frobnicate",
    ], proc.stderr
    quiet = call(conf, "test.ping", "--log-level=error")
    assert quiet.returncode == 0 and "frobnicate" not in quiet.stderr


def test_return_is_refused_by_name_and_nothing_runs(minion, tmp_path):
    """salt-call's ``--return`` (a returner briny lacks): named, exit 2, and the function never ran."""
    conf, _, _ = minion
    marker = tmp_path / "ran"
    proc = call(conf, "cmd.run", f"touch {marker}", "--return", "mysql")
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "briny-call: --return mysql (returners) is a Salt option briny does not support yet; nothing was run "
        "(docs/not-yet.md)\n"
    )
    assert not marker.exists()


def test_a_state_run_argument_briny_cannot_honour_is_refused_and_nothing_runs(minion, tmp_path):
    """``mock=True`` ignored would apply the states for real: the run is refused, naming it."""
    conf, tree, _ = minion
    marker = tmp_path / "made"
    write(tree, {"mk.sls": f"made:\n  file.managed:\n    - name: {marker}\n    - contents: x\n"})
    proc = call(conf, "state.sls", "mk", "mock=True")
    assert proc.returncode == 1 and local(proc) == [
        "'mock' is not supported by briny yet (mock runs; test=True shows what would change); no state was run"
    ], proc.stderr
    assert not marker.exists()


def test_out_file_is_replaced_unless_appended_as_salt_call(minion, tmp_path):
    """salt-call's --out-file replaces the file; --out-file-append appends (checked with 3007.17)."""
    conf, _, _ = minion
    out = tmp_path / "out.txt"
    out.write_text("old\n")
    assert call(conf, "test.ping", "--out-file", str(out), out="nested").returncode == 0
    assert out.read_text() == "local:\n    True\n"
    assert call(conf, "test.ping", "--out-file", str(out), "--out-file-append", out="nested").returncode == 0
    assert out.read_text() == "local:\n    True\nlocal:\n    True\n"


def test_options_after_the_function_and_kwargs(minion):
    conf, _, _ = minion
    proc = call(conf, "test.arg", "1", "x=2", "y={a: 1}", "--out", "json", out="")
    assert proc.returncode == 0, proc.stderr
    got = local(proc)
    assert got["args"] == [1] and got["kwargs"]["x"] == 2 and got["kwargs"]["y"] == {"a": 1}
    assert got["kwargs"]["__pub_fun"] == "test.arg"


def test_an_unusable_event_socket_never_breaks_a_run(minion, tmp_path):
    conf, tree, root = minion
    (conf / "minion").write_text((conf / "minion").read_text().replace("sock_dir: sock", "sock_dir: " + "s" * 120))
    write(tree, {"ev.sls": "plain:\n  test.succeed_with_changes:\n    - fire_event: True\n"})
    proc = call(conf, "state.sls", "ev")
    assert proc.returncode == 0, proc.stderr
    assert next(iter(local(proc).values()))["result"] is True
    assert "too long for an IPC socket" in proc.stderr


def test_fire_event_reaches_the_bus(minion, tmp_path):
    conf, tree, _ = minion
    write(
        tree,
        {
            "ev.sls": """
        plain:
          test.succeed_with_changes:
            - fire_event: True
        custom:
          test.succeed_without_changes:
            - name: thing
            - fire_event: custom/tag/done
        silent:
          test.nop: []
        """
        },
    )
    opts = {"sock_dir": str(tmp_path / "root" / "sock")}
    bus = EventBus(opts).start_thread()
    try:
        with EventListener(opts, "salt/state_result/*") as events:
            join_listener(events, EventSender(opts).fire, "salt/state_result/probe")
            proc = call(conf, "state.sls", "ev")
            assert proc.returncode == 0, proc.stderr
            got = list(events.iter(timeout=5, count=2))
    finally:
        bus.stop()
    tags = [t for t, _ in got]
    assert len(tags) == 2
    jid = tags[0].split("/")[2]
    assert len(jid) == 20 and jid.isdigit()
    assert tags == [f"salt/state_result/{jid}/itest/plain", f"salt/state_result/{jid}/itest/custom/tag/done"]
    first = got[0][1]
    assert first["ret"]["result"] is True and first["ret"]["name"] == "plain" and "_stamp" in first


CUSTOM_TREE = {**CUSTOM_MODULES, "top.sls": "base:\n  '*':\n    - custom\n"}


def test_custom_modules_of_the_file_roots_load_when_salt_loads_them(minion):
    """As Salt 3007 masterless (checked with the reference): a tree's _modules/_states are not
    loaded by state.sls or a call until synced; sync_mods= syncs the kinds named, a highstate
    syncs all, and what was synced stays (extension_modules)."""
    conf, tree, root = minion
    write(tree, {**CUSTOM_TREE, "custom.sls": f"m:\n  marker.present:\n    - name: {root}/marker\n    - who: world\n"})
    proc = call(conf, "greet.hello", "you", out="")
    assert proc.returncode != 0 and "'greet.hello' is not available." in proc.stdout + proc.stderr
    proc = call(conf, "state.sls", "custom")
    assert proc.returncode == 1
    (ret,) = local(proc).values()
    assert (
        ret["comment"]
        == "State 'marker.present' was not found in SLS 'custom'\nReason: 'marker.present' is not available.\n"
    )
    assert not (root / "marker").exists()
    proc = call(conf, "state.sls", "custom", "sync_mods=states,modules")
    assert proc.returncode == 0, proc.stderr
    assert (root / "marker").read_text() == "hello world from itest"
    assert local(call(conf, "greet.hello", "you")) == "hello you from itest"  # synced: kept
    proc = call(conf, "state.sls", "custom", "sync_mods=bogus")
    assert proc.returncode == 0 and "Invalid custom module type 'bogus', ignoring" in proc.stderr


def test_a_masterless_highstate_syncs_the_custom_modules(minion):
    conf, tree, root = minion
    write(tree, {**CUSTOM_TREE, "custom.sls": f"m:\n  marker.present:\n    - name: {root}/marker\n    - who: top\n"})
    proc = call(conf, "state.apply")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (root / "marker").read_text() == "hello top from itest"


def test_custom_modules_from_roots_loads_them_in_place(minion):
    conf, tree, root = minion
    write(tree, CUSTOM_TREE)
    with (conf / "minion").open("a") as fh:
        fh.write("custom_modules_from_roots: True\n")
    assert local(call(conf, "greet.hello", "you")) == "hello you from itest"
    assert not list(root.rglob("extmods/modules/greet.py"))  # read in place, not synced
