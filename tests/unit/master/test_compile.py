"""Compiled jobs on the master (master/compile.py): pure template functions compile on the
master with the minion's grains and pillar and give what the minion would compile; a host
function falls back (auto), is an error (master) or is never looked at (minion); errors are
the minion's result; the cache and what invalidates it."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.compiler import StateCompiler
from briny.common.config import MASTER_DEFAULTS, apply_config
from briny.common.fileclient import LocalFileClient
from briny.common.render import RenderEnv
from briny.master.compile import MasterCompiler, call_args, parse_request
from briny.master.fileserver import FileServer
from briny.master.pillar import MinionPillars

JID = "20260101000000000001"

STATES = {
    "top.sls": """\
        base:
          '*':
            - common
          'role:web':
            - match: grain
            - web
        """,
    "common/init.sls": """\
        {% set role = salt['grains.get']('role', 'none') %}
        include:
          - common.{{ 'front' if salt['match.grain']('role:web') else 'back' }}
        common:
          test.succeed_without_changes:
            - name: "{{ role }} {{ pillar['size'] }} {{ salt['pillar.get']('size') }} {{ salt['config.get']('id') }}"
            - comment: "{{ salt['file.dirname']('/a/b') }} {{ 'common/init.sls' in salt['cp.list_master']() }}"
        merged:
          test.succeed_without_changes:
            - comment: {{ salt['slsutil.merge']({'a': 1}, {'b': 2}) | json }}
        """,
    "common/front.sls": "front:\n  test.succeed_without_changes:\n    - require:\n      - test: common\n",
    "common/back.sls": "back:\n  test.succeed_without_changes: []\n",
    "web.sls": "web:\n  test.succeed_with_changes:\n    - watch_in:\n      - test: common\n",
    "hostly.sls": "hi:\n  test.succeed_without_changes:\n    - name: {{ salt['cmd.run']('echo hi') }}\n",
    "probe.sls": "p:\n  test.succeed_without_changes:\n    - name: {{ 'pkg.version' in salt }}\n",
    "bad.sls": "x:\n  test.nop:\n    - name: {{ undefined_thing.attr }}\n",
}
PILLAR = {"top.sls": "base:\n  '*':\n    - data\n", "data.sls": "size: {{ grains['mem'] }}\n"}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(textwrap.dedent(text))
        if before:
            os.utime(path, ns=(before + 2_000_000_000,) * 2)


class Grains:
    def __init__(self) -> None:
        self.data: dict[str, dict[str, Any]] = {
            "web1": {"id": "web1", "role": "web", "mem": 2048},
            "db1": {"id": "db1", "role": "db", "mem": 8192},
        }

    def get(self, minion_id: str) -> dict[str, Any] | None:
        return self.data.get(minion_id)


class Setup:
    def __init__(self, tmp_path: Path, mode: str = "auto") -> None:
        self.states, pillar = tmp_path / "salt", tmp_path / "pillar"
        write(self.states, STATES)
        write(pillar, PILLAR)
        self.opts = apply_config({"root_dir": str(tmp_path), "cachedir": "cache", "state_compile": mode,
                                  "file_roots": {"base": [str(self.states)]},
                                  "pillar_roots": {"base": [str(pillar)]},
                                  "fileserver_list_cache_time": 0}, MASTER_DEFAULTS, "test")
        self.grains = Grains()
        self.fs = FileServer(self.opts)
        self.pillars = MinionPillars(self.opts, self.grains.get)
        # what each minion reports with its grains: its config (here, the same settings)
        self.reported: dict[str, dict[str, Any]] = {
            m: {k: v for k, v in self.opts.items() if not k.startswith("__")} for m in self.grains.data}
        self.compiler = MasterCompiler(self.opts, self.fs, self.pillars, self.grains.get,
                                       self.reported.get)

    def compile(self, minion_id: str, fun: str = "state.apply", *arg: Any, **kwarg: Any) -> Any:
        return self.compiler.compile_for(minion_id, {"jid": JID, "fun": fun, "arg": list(arg),
                                                     "kwarg": kwarg})

    def on_minion(self, minion_id: str, mods: list[str] | None = None) -> Any:
        """What the minion computes for itself (its full loader, the same tree from disk)."""
        grains = dict(self.grains.data[minion_id])
        pillar = self.pillars.get(minion_id)
        opts = {**self.opts, "id": minion_id, "grains": grains, "file_client": "remote"}
        salt = loader.minion_mods(opts, grains, pillar)
        env = RenderEnv(opts=opts, client=LocalFileClient(self.opts["file_roots"]), salt=salt,
                        grains=grains, pillar=pillar)
        compiler = StateCompiler(env)
        return compiler.for_sls(mods, "base") if mods else compiler.for_highstate()


def test_pure_functions_compile_on_the_master_as_the_minion_would(tmp_path):
    s = Setup(tmp_path)
    for minion_id in ("web1", "db1"):
        got = s.compile(minion_id)
        assert set(got) == {"chunks"}, got
        mine = s.on_minion(minion_id)
        assert not mine.errors and got["chunks"] == mine.chunks
    assert s.compiler.renders == 2 and s.compiler.fallbacks == 0
    web = {c["__id__"]: c for c in s.compile("web1")["chunks"]}
    assert web["common"]["name"] == "web 2048 2048 web1"
    assert web["common"]["comment"] == "/a True"
    assert web["merged"]["comment"] == {"a": 1, "b": 2}


def test_each_minion_gets_its_own_grains_dependent_includes(tmp_path):
    s = Setup(tmp_path)
    web = {c["__id__"] for c in s.compile("web1")["chunks"]}
    db = {c["__id__"] for c in s.compile("db1")["chunks"]}
    assert web == {"common", "merged", "front", "web"}
    assert db == {"common", "merged", "back"}


def test_sls_jobs_and_their_arguments(tmp_path):
    s = Setup(tmp_path)
    got = s.compile("db1", "state.sls", "common", "test=True")
    assert got["chunks"] == s.on_minion("db1", ["common"]).chunks
    got = s.compile("db1", "state.apply", "common", exclude="common.back")
    assert {c["__id__"] for c in got["chunks"]} == {"common", "merged"}
    assert s.compile("db1", "state.sls") is None          # no SLS named: the minion answers
    assert s.compile("db1", "test.ping") is None


def test_a_host_function_falls_back_to_the_minion_in_auto(tmp_path):
    s = Setup(tmp_path)
    assert s.compile("web1", "state.sls", "hostly") is None
    assert s.compile("web1", "state.sls", "probe") is None    # even asking whether it exists
    assert s.compiler.fallbacks == 2
    assert s.compile("web1", "state.sls", "hostly") is None   # the decision is cached
    assert s.compiler.renders == 2


def test_a_host_function_is_an_error_in_master_mode(tmp_path):
    s = Setup(tmp_path, "master")
    got = s.compile("web1", "state.sls", "hostly")
    assert got["retcode"] == 1
    assert got["errors"][0].startswith("Rendering SLS 'base:hostly' failed")
    assert "'cmd.run' needs the minion's host" in got["errors"][0]


def test_minion_mode_never_compiles_on_the_master(tmp_path):
    s = Setup(tmp_path, "minion")
    assert s.compile("web1") is None and s.compile("web1", "state.sls", "common") is None
    assert s.compiler.renders == 0 and not s.compiler.wants("state.apply")


def test_render_errors_are_the_minions_result(tmp_path):
    s = Setup(tmp_path)
    got = s.compile("web1", "state.sls", "bad")
    assert got["retcode"] == 1 and got["errors"] == s.on_minion("web1", ["bad"]).errors
    assert "Rendering SLS 'base:bad' failed" in got["errors"][0]
    got = s.compile("web1", "state.sls", "nothere")
    assert got["errors"] == ["No matching sls found for 'nothere' in env 'base'"]
    s.grains.data["nobody"] = {"id": "nobody", "mem": 1}
    write(s.states, {"top.sls": "base:\n  'web*':\n    - web\n"})
    assert s.compile("nobody") == {"no_states": "No Top file or master_tops data matches found. "
                                                "Please see master log for details."}


def test_pillar_errors_stop_the_run(tmp_path):
    s = Setup(tmp_path)
    write(Path(s.opts["pillar_roots"]["base"][0]), {"data.sls": "size: {{ nope.x }}\n"})
    got = s.compile("web1")
    assert got["retcode"] == 5 and got["errors"][0] == "Pillar failed to render with the following messages:"


def test_pillar_override_is_merged_and_keyed(tmp_path):
    s = Setup(tmp_path)
    got = s.compile("web1", "state.sls", "common", pillar={"size": 7})
    names = {c["__id__"]: c["name"] for c in got["chunks"]}
    assert names["common"] == "web 7 7 web1"
    plain = s.compile("web1", "state.sls", "common")
    assert {c["__id__"]: c["name"] for c in plain["chunks"]}["common"] == "web 2048 2048 web1"
    assert s.compiler.renders == 2


def test_cache_hits_and_what_invalidates_it(tmp_path):
    s = Setup(tmp_path)
    first = s.compile("web1")
    assert s.compiler.renders == 1
    assert s.compile("web1") == first                       # unchanged tree, unchanged minion
    assert s.compiler.renders == 1 and s.compiler.hits == 1
    s.compile("web1", test=True)                            # another job: its own entry
    assert s.compiler.renders == 2
    s.compile("db1")
    assert s.compiler.renders == 3
    write(s.states, {"web.sls": "web:\n  test.succeed_with_changes:\n    - name: changed\n"})
    changed = s.compile("web1")
    assert s.compiler.renders == 4
    assert {c["__id__"]: c["name"] for c in changed["chunks"]}["web"] == "changed"
    s.compile("db1")                                        # the tree changed for db1 too
    assert s.compiler.renders == 5
    s.grains.data["web1"]["role"] = "db"                    # a grain changes the compile
    regrained = s.compile("web1")
    assert s.compiler.renders == 6 and "web" not in {c["__id__"] for c in regrained["chunks"]}
    s.compile("web1")
    assert s.compiler.renders == 6
    write(s.states, {"new/thing.sls": "a: {}\n"})           # a new file changes the signature
    s.compile("web1")
    assert s.compiler.renders == 7


@pytest.mark.parametrize("fun,arg,kwarg,kind,mods,test", [
    ("state.apply", [], {}, "highstate", (), None),
    ("state.apply", ["web,db"], {}, "sls", ("web", "db"), None),
    ("state.apply", ["test=True"], {}, "highstate", (), True),
    ("state.sls", ["web", True], {}, "sls", ("web",), True),
    ("state.highstate", [{"__kwarg__": True, "test": False}], {}, "highstate", (), False),
    ("state.apply", [], {"mods": ["a"], "saltenv": "dev"}, "sls", ("a",), None),
])
def test_parse_request(fun, arg, kwarg, kind, mods, test):
    req = parse_request(fun, arg, kwarg)
    assert req is not None and (req.kind, req.mods, req.test) == (kind, mods, test)


def test_parse_request_leaves_odd_calls_to_the_minion():
    assert parse_request("state.apply", ["a", "b"], {}) is None        # too many positionals
    assert parse_request("state.sls", ["a"], {"mods": "b"}) is None    # the same argument twice
    assert parse_request("state.apply", [], {"pillar": "x"}) is None   # a pillar that is not a map
    assert call_args(["a", "b=1", {"__kwarg__": True, "c": 2}], {"d": 3}) == (["a"], {"b": 1, "c": 2, "d": 3})


def test_templates_see_the_minions_own_config(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    write(setup.states, {"where.sls": "spot:\n  test.nop:\n    - name: {{ opts['root_dir'] }}/x\n"
                                      "    - v: {{ salt['config.get']('my_key', 'none') }}\n"})
    setup.fs.update()
    setup.reported["web1"] = {**setup.reported["web1"], "root_dir": "/minion/root", "my_key": "mine"}
    chunks = setup.compile("web1", "state.sls", "where")["chunks"]
    assert chunks[0]["name"] == "/minion/root/x" and chunks[0]["v"] == "mine"


def test_a_minion_whose_config_is_unknown_compiles_opts_readers_itself(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    write(setup.states, {"where.sls": "spot:\n  test.nop:\n    - name: {{ opts['root_dir'] }}/x\n",
                         "plain.sls": "p:\n  test.nop:\n    - name: {{ grains['role'] }}\n"})
    setup.fs.update()
    del setup.reported["db1"]
    assert setup.compile("db1", "state.sls", "where") is None          # auto: the minion compiles
    assert setup.compile("db1", "state.sls", "plain")["chunks"][0]["name"] == "db"
