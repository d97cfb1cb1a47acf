"""Compiled jobs on the master (master/compile.py): pure template functions compile on the
master with the minion's grains and pillar and give what the minion would compile; a host
function falls back (auto), is an error (master) or is never looked at (minion); errors are
the minion's result; the cache and what invalidates it."""

from __future__ import annotations

import os
import threading
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common import loader
from briny.common.state.compiler import StateCompiler
from briny.common.config import MASTER_DEFAULTS, apply_config
from briny.common.fileclient import LocalFileClient
from briny.common.state.stages import RenderEnv
from briny.common.reported import public_opts
from briny.master.compile import MasterCompiler, parse_request
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
        self.opts = apply_config(
            {
                "root_dir": str(tmp_path),
                "cachedir": "cache",
                "state_compile": mode,
                "file_roots": {"base": [str(self.states)]},
                "pillar_roots": {"base": [str(pillar)]},
                "fileserver_list_cache_time": 0,
            },
            MASTER_DEFAULTS,
            "test",
        )
        self.grains = Grains()
        self.fs = FileServer(self.opts)
        self.pillars = MinionPillars(self.opts, self.grains.get)
        # what each minion reports with its grains: its config (here, the same settings), as a
        # minion sends it (no paths, sockets, keys...)
        self.reported: dict[str, dict[str, Any]] = {m: public_opts(self.opts) for m in self.grains.data}
        self.compiler = MasterCompiler(self.opts, self.fs, self.pillars, self.grains.get, self.reported.get)

    def compile(self, minion_id: str, fun: str = "state.apply", *arg: Any, **kwarg: Any) -> Any:
        return self.compiler.compile_for(minion_id, {"jid": JID, "fun": fun, "arg": list(arg), "kwarg": kwarg})

    def on_minion(self, minion_id: str, mods: list[str] | None = None) -> Any:
        """What the minion computes for itself (its full loader, the same tree from disk)."""
        grains = dict(self.grains.data[minion_id])
        pillar = self.pillars.get(minion_id)
        opts = {**self.opts, "id": minion_id, "grains": grains, "file_client": "remote"}
        salt = loader.minion_mods(opts, grains, pillar)
        env = RenderEnv(
            opts=opts, client=LocalFileClient(self.opts["file_roots"]), salt=salt, grains=grains, pillar=pillar
        )
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
    # Salt's documented map form, as the command line gives it (a YAML string) and as a list
    got = s.compile("db1", "state.sls", "common", "exclude=[{'id': 'merged'}, {'sls': 'common.back'}]")
    assert {c["__id__"] for c in got["chunks"]} == {"common"}
    got = s.compile("db1", "state.apply", exclude=[{"id": "merged"}, {"sls": "common.back"}])
    assert {c["__id__"] for c in got["chunks"]} == {"common"}
    assert s.compile("db1", "state.sls") is None  # no SLS named: the minion answers
    assert s.compile("db1", "test.ping") is None


def test_a_host_function_falls_back_to_the_minion_in_auto(tmp_path):
    s = Setup(tmp_path)
    assert s.compile("web1", "state.sls", "hostly") is None
    assert s.compile("web1", "state.sls", "probe") is None  # even asking whether it exists
    assert s.compiler.fallbacks == 2
    assert s.compile("web1", "state.sls", "hostly") is None  # the decision is cached
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
    s.reported["nobody"] = public_opts(s.opts)
    write(s.states, {"top.sls": "base:\n  'web*':\n    - web\n"})
    assert s.compile("nobody") == {
        "no_states": "No Top file or master_tops data matches found. Please see master log for details."
    }


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
    assert s.compile("web1") == first  # unchanged tree, unchanged minion
    assert s.compiler.renders == 1 and s.compiler.hits == 1
    s.compile("web1", test=True)  # another job: its own entry
    assert s.compiler.renders == 2
    s.compile("db1")
    assert s.compiler.renders == 3
    write(s.states, {"web.sls": "web:\n  test.succeed_with_changes:\n    - name: changed\n"})
    changed = s.compile("web1")
    assert s.compiler.renders == 4
    assert {c["__id__"]: c["name"] for c in changed["chunks"]}["web"] == "changed"
    s.compile("db1")  # the tree changed for db1 too
    assert s.compiler.renders == 5
    s.grains.data["web1"]["role"] = "db"  # a grain changes the compile
    regrained = s.compile("web1")
    assert s.compiler.renders == 6 and "web" not in {c["__id__"] for c in regrained["chunks"]}
    s.compile("web1")
    assert s.compiler.renders == 6
    write(s.states, {"new/thing.sls": "a: {}\n"})  # a new file changes the signature
    s.compile("web1")
    assert s.compiler.renders == 7


def test_the_cache_keeps_state_compile_cache_compiles_packed_and_equal_ones_are_one_object(tmp_path):
    s = Setup(tmp_path)
    s.opts["state_compile_cache"] = 2
    s.compiler = MasterCompiler(s.opts, s.fs, s.pillars, s.grains.get, s.reported.get)
    assert s.compiler.cache_max == 2
    s.grains.data["db2"] = {"id": "db2", "role": "db", "mem": 4096}
    s.reported["db2"] = public_opts(s.opts)
    first = s.compile("web1")
    assert s.compile("web1") is first and s.compiler.hits == 1  # the same compile: one object
    assert all(isinstance(e.result, bytes) for e in s.compiler._cache.values())
    s.compiler._results.clear()  # the shared objects forgotten: a hit unpacks an equal one
    hit = s.compile("web1")
    assert hit == first and hit is not first and s.compiler.hits == 2
    db1 = s.compile("db1")
    db2 = s.compile("db2")  # a third minion: web1, the least recently used, goes
    assert s.compiler.renders == 3 and len(s.compiler._cache) == 2
    assert s.compile("web1") == first and s.compiler.renders == 4
    same = [c["name"] for c in db1["chunks"]] == [c["name"] for c in db2["chunks"]]
    assert db1 is not db2 and not same  # db2's pillar differs: its own compile
    back1, back2 = s.compile("db1", "state.sls", "common.back"), s.compile("db2", "state.sls", "common.back")
    assert back1 == back2 and back1 is back2  # equal compiles of two minions: one object
    packed = [e.result for k, e in s.compiler._cache.items() if k[0] in ("db1", "db2") and k[1] == "state.sls"]
    assert len(packed) == 2 and packed[0] is packed[1]  # and one packed form in the cache


@pytest.mark.parametrize(
    "fun,arg,kwarg,kind,mods,test",
    [
        ("state.apply", [], {}, "highstate", (), None),
        ("state.apply", ["web,db"], {}, "sls", ("web", "db"), None),
        ("state.apply", ["test=True"], {}, "highstate", (), True),
        ("state.sls", ["web", True], {}, "sls", ("web",), True),
        ("state.highstate", [{"__kwarg__": True, "test": False}], {}, "highstate", (), False),
        ("state.apply", [], {"mods": ["a"], "saltenv": "dev"}, "sls", ("a",), None),
    ],
)
def test_parse_request(fun, arg, kwarg, kind, mods, test):
    req = parse_request(fun, arg, kwarg)
    assert req is not None and (req.kind, req.mods, req.test) == (kind, mods, test)


def test_parse_request_leaves_odd_calls_to_the_minion():
    assert parse_request("state.apply", ["a", "b"], {}) is None  # too many positionals
    assert parse_request("state.sls", ["a"], {"mods": "b"}) is None  # the same argument twice
    assert parse_request("state.apply", [], {"pillar": "x"}) is None  # a pillar that is not a map


def test_parse_request_reads_sls_names_and_exclude_as_the_minion_does():
    """The same split as the minion's state module (common.args.split_input): an empty name
    stays (the compile reports it, as the minion would), exclude maps are kept as maps."""
    req = parse_request("state.sls", ["a,"], {"exclude": [{"id": "x"}, {"sls": "y"}]})
    assert req is not None and req.mods == ("a", "") and req.exclude == ({"id": "x"}, {"sls": "y"})
    assert req.cache_key("m1", "state.sls") != parse_request("state.sls", ["a,"], {}).cache_key("m1", "state.sls")
    assert parse_request("state.highstate", [], {"exclude": "a, b"}).exclude == ("a", "b")


def test_positional_parameters_are_the_minion_state_functions():
    """The master binds a publish's positional arguments to the names the minion's state
    functions take, in their order (checked against their signatures, not kept by a comment)."""
    import inspect

    from briny.master import compile as master_compile
    from briny.minion.host.modules import state

    functions = {"state.apply": state.apply_, "state.sls": state.sls, "state.highstate": state.highstate}
    for fun, names in master_compile._POSITIONAL.items():
        params = inspect.signature(functions[fun]).parameters.values()
        positional = tuple(p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD)
        assert names == positional, fun


def test_templates_see_the_minions_own_config_but_never_its_paths(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    write(
        setup.states,
        {
            "where.sls": "spot:\n  test.nop:\n    - v: {{ salt['config.get']('my_setting', 'none') }}\n"
            "    - o: {{ opts['my_setting'] }} {{ opts.get('hash_type') }} {{ opts['id'] }}\n",
            "root.sls": "spot:\n  test.nop:\n    - name: {{ opts['root_dir'] }}/x\n",
        },
    )
    setup.fs.update()
    setup.reported["web1"] = {**setup.reported["web1"], "my_setting": "mine", "hash_type": "md5"}
    chunks = setup.compile("web1", "state.sls", "where")["chunks"]
    assert chunks[0]["v"] == "mine" and chunks[0]["o"] == "mine md5 web1"
    # a path of the minion's: the master never takes one, so the minion compiles that SLS itself
    setup.reported["web1"]["root_dir"] = "/minion/root"
    assert setup.compile("web1", "state.sls", "root") is None
    assert setup.compiler.fallbacks == 1


def test_a_minion_whose_config_is_unknown_compiles_itself(tmp_path: Path) -> None:
    setup = Setup(tmp_path)
    write(
        setup.states,
        {
            "where.sls": "spot:\n  test.nop:\n    - name: {{ opts['root_dir'] }}/x\n",
            "plain.sls": "p:\n  test.nop:\n    - name: {{ grains['role'] }}\n",
        },
    )
    setup.fs.update()
    del setup.reported["db1"]
    # its opts, and even the renderer settings the compile reads, may be its own: it compiles
    assert setup.compile("db1", "state.sls", "where") is None
    assert setup.compile("db1", "state.sls", "plain") is None
    setup.reported["db1"] = public_opts(setup.opts)  # it reported (its next auth)
    assert setup.compile("db1", "state.sls", "plain")["chunks"][0]["name"] == "db"


# -- nothing runs on the master, and a minion's report steers nothing -------------------------------


def attack_tree(setup: Setup, marker: Path) -> None:
    write(
        setup.states,
        {
            "module.sls": f"x:\n  test.nop:\n    - name: {{{{ salt.module('cmd').run('touch {marker}') }}}}\n",
            "pack.sls": "x:\n  test.nop:\n    - name: {{ salt.pack['__opts__'] }}\n",
            "which.sls": "x:\n  test.nop:\n    - name: {{ 'sh'|which }}\n",
            "code.sls": f"#!py\nimport pathlib\ndef run():\n    pathlib.Path({str(marker)!r}).touch()\n"
            "    return {'x': {'test.nop': [{'name': __grains__['id']}]}}\n",
            "peek.sls": "x:\n  test.nop:\n    - name: {{ opts['pki_dir'] }} {{ opts.get('__fileclient') }}\n",
            "listing.sls": "x:\n  test.nop:\n    - seen: {{ opts | tojson | yaml_encode }}\n",
            "roots.sls": "x:\n  test.nop:\n    - name: {{ salt['pillar.file_exists']('top.sls') }}\n",
        },
    )
    setup.fs.update()


def test_host_paths_fall_back_to_the_minion_in_auto_and_nothing_runs_here(tmp_path):
    s = Setup(tmp_path)
    marker = tmp_path / "ran-on-the-master"
    attack_tree(s, marker)
    for sls in ("pack", "which", "code", "peek", "listing", "roots"):
        assert s.compile("web1", "state.sls", sls) is None, sls  # the minion compiles it
    assert not marker.exists() and s.compiler.fallbacks == 6
    # what the minion then computes for itself is the same as without a master
    assert s.on_minion("web1", ["code"]).chunks[0]["name"] == "web1" and marker.exists()
    marker.unlink()
    # salt.module is no way in anywhere: no module of that name here, so (it might be a custom
    # module of the minion) the minion compiles, and gets Salt's error
    assert s.compile("web1", "state.sls", "module") is None and not marker.exists()
    errors = s.on_minion("web1", ["module"]).errors
    assert "'salt.utils.templates.AliasedLoader object' has no attribute 'module'" in errors[0]
    assert not marker.exists()


def test_host_paths_are_render_errors_in_master_mode(tmp_path):
    s = Setup(tmp_path, "master")
    marker = tmp_path / "ran-on-the-master"
    attack_tree(s, marker)
    code = s.compile("web1", "state.sls", "code")["errors"][0]
    assert (
        "The 'py' renderer runs Python and is not run on the master while rendering the states of "
        "minion 'web1'; with state_compile: auto (the default) or minion, the minion compiles"
    ) in code
    assert "the 'which' filter needs the minion's host" in s.compile("web1", "state.sls", "which")["errors"][0]
    assert "has no attribute 'pack'" in s.compile("web1", "state.sls", "pack")["errors"][0]
    peek = s.compile("web1", "state.sls", "peek")["errors"][0]
    assert "pki_dir" in peek and str(s.opts["pki_dir"]) not in peek
    listing = s.compile("web1", "state.sls", "listing")["chunks"][0]["seen"]
    assert '"id": "web1"' in listing and "__fileclient" not in listing and "pki_dir" not in listing
    assert str(s.opts["file_roots"]["base"][0]) not in listing
    assert not marker.exists()


def test_a_reported_extension_modules_folder_is_never_imported(tmp_path, caplog):
    s = Setup(tmp_path)
    marker = tmp_path / "imported-on-the-master"
    evil = tmp_path / "evil"
    (evil / "modules").mkdir(parents=True)
    for name in ("grains", "pillar", "config", "mine"):
        (evil / "modules" / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'w').close()\ndef get(*a, **k):\n    return 'evil'\n"
        )
    s.reported["web1"] = {
        **s.reported["web1"],
        "extension_modules": str(evil),
        "module_dirs": [str(evil)],
        "file_roots": {"base": [str(evil)]},
        "file_client": "local",
        "cachedir": str(evil),
        "renderer": "jinja|yaml",
    }
    got = s.compile("web1")
    assert got["chunks"] == s.on_minion("web1").chunks and not marker.exists()
    assert "web1 reported config keys the master never takes" in caplog.text
    assert "extension_modules" in caplog.text and s.compiler.fallbacks == 0


def test_a_minions_compile_settings_never_steer_the_masters_compile(tmp_path):
    s = Setup(tmp_path)
    write(s.states, {"plain.sls": "#!yaml\np:\n  test.nop: []\n"})
    s.fs.update()
    s.reported["web1"] = {**s.reported["web1"], "renderer": "py"}
    assert s.compile("web1", "state.sls", "common") is None  # it reads the renderer: the minion's
    master = Setup(tmp_path / "m", "master")
    master.reported["web1"] = {**master.reported["web1"], "renderer": "py", "jinja_sls_env": {"x": 1}}
    got = master.compile("web1", "state.sls", "common")  # the master's own settings
    assert {c["__id__"] for c in got["chunks"]} == {"common", "merged", "front"}


def test_file_roots_modules_that_replace_a_pure_one_make_the_minion_compile(tmp_path):
    s = Setup(tmp_path)
    assert s.compile("web1", "state.sls", "common") is not None
    write(s.states, {"_modules/mygrains.py": "__virtualname__ = 'grains'\ndef get(*a, **k):\n    return 1\n"})
    s.fs.update()
    assert s.compile("web1", "state.sls", "common") is None  # grains.get is the minion's own
    assert s.compiler.fallbacks == 1


@pytest.mark.parametrize(
    "report,why",
    [
        ({"saltenv": "../etc"}, "not an environment name"),
        ({"test": "yes"}, "not a boolean"),
        ({"big": "x" * 20000}, "over 16384 bytes"),
        ({"odd": {"a": {"b": [set()]}}}, "not plain data"),
    ],
)
def test_bad_reported_values_are_refused_and_read_on_the_minion(tmp_path, caplog, report, why):
    s = Setup(tmp_path)
    key = next(iter(report))
    write(s.states, {"read.sls": f"x:\n  test.nop:\n    - name: {{{{ opts.get('{key}') }}}}\n"})
    s.fs.update()
    s.reported["web1"] = {**s.reported["web1"], **report}
    assert s.compile("web1", "state.sls", "read") is None
    assert why in caplog.text


def test_nodegroups_count_only_for_targets_that_name_one(tmp_path):
    s = Setup(tmp_path)
    s.opts["nodegroups"] = {"webs": "G@role:web"}  # the master's; the minions have none
    assert s.compile("web1") is not None  # no N@ anywhere: compiled here
    write(s.states, {"top.sls": "base:\n  'N@webs':\n    - match: compound\n    - common\n    - web\n"})
    s.fs.update()
    assert s.compile("web1") is None  # the minion's own nodegroups decide
    s.reported["web1"] = {**s.reported["web1"], "nodegroups": {"webs": "G@role:web"}}
    assert {c["__id__"] for c in s.compile("web1")["chunks"]} == {"common", "merged", "front", "web"}


def test_the_counters_change_under_the_lock_only(tmp_path):
    """Compiles run in several worker threads: a count goes up only under the compiler's lock (a
    compile finished while another thread holds the lock has not counted yet)."""
    s = Setup(tmp_path)
    request = parse_request("state.apply", [], {})
    assert request is not None
    grains, pillar = dict(s.grains.data["web1"]), s.pillars.get("web1")
    done: list[Any] = []
    with s.compiler._lock:
        worker = threading.Thread(target=lambda: done.append(s.compiler.compile_now("web1", request, grains, pillar)))
        worker.start()
        worker.join(2)  # it renders, then waits for the lock to count
        assert s.compiler.renders == 0
    worker.join(30)
    assert not worker.is_alive() and set(done[0]) == {"chunks"}
    assert s.compiler.renders == 1
