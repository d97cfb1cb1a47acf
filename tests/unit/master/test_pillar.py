"""The master's pillar compiler (master/pillar.py): per-minion top files, Jinja with grains,
includes and merges, errors as ``_errors``, the cache and its invalidation, and the refusal of
functions that need the minion's host."""

from __future__ import annotations

import json
import os
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common.exceptions import FunctionNotFound, HostAccessError
from briny.common.fileclient import LocalFileClient
from briny.common.state.hostview import HostBoundary, OptsView
from briny.master.pillar import ALLOWED, PURE_FUNCTIONS, MinionPillars, check_env, is_pure, master_side_mods

from tests.waiting import wait_until


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def touch_later(path: Path, text: str) -> None:
    """Rewrite a file and move its mtime on, so even a coarse clock sees the change."""
    before = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(textwrap.dedent(text))
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))


class Fleet:
    """Cached grains of a few minions, as the server's GrainsCache gives them."""

    def __init__(self) -> None:
        self.grains: dict[str, dict[str, Any]] = {
            "web1": {"id": "web1", "os": "Debian", "role": "web", "mem": 2048},
            "db1": {"id": "db1", "os": "RedHat", "role": "db", "mem": 8192},
        }

    def get(self, minion_id: str) -> dict[str, Any] | None:
        return self.grains.get(minion_id)


TREE = {
    "top.sls": """\
        base:
          '*':
            - common
          'os:Debian':
            - match: grain
            - debian
          'G@role:db and not web*':
            - match: compound
            - db
        """,
    "common/init.sls": """\
        include:
          - .users
          - defaults
        who: {{ grains['id'] }}
        os_seen: {{ salt['grains.get']('os') }}
        cfg_id: {{ salt['config.get']('id') }}
        opts_id: {{ opts['id'] }}
        big: {{ grains['mem'] > 4096 }}
        settings:
          color: red
        """,
    "common/users.sls": """\
        users:
          - alice
        settings:
          size: 3
        """,
    "defaults.sls": """\
        settings:
          color: blue
          shape: round
        """,
    "debian.sls": """\
        pkg_mgr: apt
        settings:
          shape: square
        """,
    "db.sls": """\
        {% set port = 5432 if grains['os'] == 'RedHat' else 3306 %}
        db_port: {{ port }}
        users:
          - postgres
        """,
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "pillar"
    write(root, TREE)
    return root


@pytest.fixture
def opts(master_opts: dict[str, Any], tree: Path) -> dict[str, Any]:
    master_opts["pillar_roots"] = {"base": [str(tree)]}
    return master_opts


@pytest.fixture
def fleet() -> Fleet:
    return Fleet()


# -- compiling -----------------------------------------------------------------------------


def test_top_file_matches_each_minion_by_its_grains(opts, fleet):
    pillars = MinionPillars(opts, fleet.get)
    web, db = pillars.get("web1"), pillars.get("db1")
    assert web["pkg_mgr"] == "apt" and "db_port" not in web
    assert db["db_port"] == 5432 and "pkg_mgr" not in db
    assert "_errors" not in web and "_errors" not in db


def test_templates_see_the_minions_grains_id_and_pure_functions(opts, fleet):
    web = MinionPillars(opts, fleet.get).get("web1")
    assert web["who"] == "web1" and web["os_seen"] == "Debian"
    assert web["cfg_id"] == "web1" and web["opts_id"] == "web1"  # the master's opts, with the minion's id
    assert web["big"] is False
    assert MinionPillars(opts, fleet.get).get("db1")["big"] is True


def test_includes_and_merges(opts, fleet):
    pillars = MinionPillars(opts, fleet.get)
    web = pillars.get("web1")
    # included first, the including file over them, later top entries over earlier ones
    assert web["settings"] == {"color": "red", "size": 3, "shape": "square"}
    assert web["users"] == ["alice"]
    # lists are replaced, not appended (pillar_merge_lists is off by default)
    assert pillars.get("db1")["users"] == ["postgres"]


def test_a_minion_without_cached_grains_is_matched_by_its_id_only(opts, fleet, tree):
    write(
        tree,
        {
            "top.sls": "base:\n  'new*':\n    - byid\n  'os:Debian':\n    - match: grain\n    - debian\n",
            "byid.sls": "who: {{ opts['id'] }}\nos: {{ grains.get('os', 'unknown') }}\n",
        },
    )
    assert MinionPillars(opts, fleet.get).get("new1") == {"who": "new1", "os": "unknown"}


def test_render_errors_come_back_as_errors(opts, fleet, tree):
    write(
        tree,
        {"debian.sls": "pkg_mgr: [unclosed\n", "top.sls": "base:\n  '*':\n    - common\n    - debian\n    - missing\n"},
    )
    pillar = MinionPillars(opts, fleet.get).get("web1")
    errors = pillar["_errors"]
    assert "Rendering SLS 'debian' failed. Please see master log for details." in errors
    assert "Specified SLS 'missing' in environment 'base' is not available on the salt master" in errors
    assert pillar["who"] == "web1"  # what rendered is still there


def test_a_top_file_that_does_not_render_is_an_error(opts, fleet, tree):
    write(tree, {"top.sls": "base:\n  '*':\n    - {{ nope( }}\n"})
    pillar = MinionPillars(opts, fleet.get).get("web1")
    assert pillar["_errors"] and pillar["_errors"][0].startswith("Pillar top file failed to render")


# -- host functions are refused ------------------------------------------------------------


def test_host_functions_are_refused_with_an_error_naming_them(opts, fleet, tree, tmp_path):
    marker = tmp_path / "ran-on-the-master"
    write(
        tree,
        {"top.sls": "base:\n  '*':\n    - host\n", "host.sls": f"out: {{{{ salt['cmd.run']('touch {marker}') }}}}\n"},
    )
    opts["pillar_safe_render_error"] = False
    pillar = MinionPillars(opts, fleet.get).get("web1")
    assert not marker.exists()
    (error,) = pillar["_errors"]
    assert error.startswith("Rendering SLS 'host' failed, render error:")
    assert "'cmd.run' needs the minion's host" in error and "minion 'web1'" in error


def test_attribute_style_calls_are_refused_too_and_safe_errors_hide_details(opts, fleet, tree, caplog):
    write(tree, {"top.sls": "base:\n  '*':\n    - host\n", "host.sls": "out: {{ salt.user.info('root') }}\n"})
    pillar = MinionPillars(opts, fleet.get).get("web1")
    assert pillar["_errors"] == ["Rendering SLS 'host' failed. Please see master log for details."]
    assert "'user.info' needs the minion's host" in caplog.text  # the master log says which


def guarded(
    opts: dict[str, Any], grains: dict[str, Any], pillar: dict[str, Any], minion_id: str = "web1"
) -> tuple[Any, HostBoundary]:
    boundary = HostBoundary(minion_id, "the pillar", is_pure, ALLOWED)
    files = LocalFileClient(opts.get("file_roots") or {})
    return master_side_mods(OptsView(dict(opts, id=minion_id)), grains, pillar, boundary, files), boundary


def test_the_guarded_salt(opts, tmp_path):
    salt, boundary = guarded(opts, {"os": "Debian"}, {"k": "v"})
    assert salt["grains.get"]("os") == "Debian"
    assert salt["pillar.get"]("k") == "v"
    assert salt["slsutil.merge"]({"a": 1}, {"b": 2}) == {"a": 1, "b": 2}
    assert salt["match.glob"]("web*") is True and salt.match.glob("db*") is False
    assert "cmd.run" in salt  # known, as on the minion ...
    marker = tmp_path / "ran"
    for call in (
        lambda: salt["cmd.run"](f"touch {marker}"),
        lambda: salt.cmd.run(f"touch {marker}"),
        lambda: salt.get("cmd.run")(f"touch {marker}"),
    ):
        with pytest.raises(HostAccessError, match=r"'cmd.run' needs the minion's host"):
            call()  # ... but it never runs here
    assert not marker.exists() and boundary.needs == ["cmd.run"]
    with pytest.raises(FunctionNotFound):
        salt["nosuchmod.fun"]
    with pytest.raises(HostAccessError, match="the list of the minion's functions"):
        salt.keys()
    # the loader's own attributes are not there: only modules by that name (there are none)
    for name in ("module", "pack", "dirs", "reload", "list_modules", "missing_message", "has_module"):
        with pytest.raises(AttributeError):
            getattr(salt, name)("cmd")
    with pytest.raises(AttributeError):
        salt.pack["__opts__"]


def test_a_pure_functions_own_salt_and_opts_reach_nothing_more(opts, tmp_path):
    salt, _ = guarded(opts, {"os": "Debian"}, {})
    salt["grains.get"]("os")  # loads the grains module
    module = salt._loader.module("grains")
    marker = tmp_path / "ran"
    with pytest.raises(HostAccessError):
        module.__salt__["cmd.run"](f"touch {marker}")
    assert module.__salt__ is salt and not marker.exists()
    # its __opts__ is plain data: the render's file client is there for cp.*, out of sight
    listed = salt["config.items"]()
    assert "__fileclient" not in listed and all(not k.startswith("__") for k in listed)
    json.dumps(listed)  # nothing but data


# what a pillar template may try on the master; none of it may run anything or show the master's
# config objects. ``MARK`` is replaced by a marker file's path.
ATTACKS = {
    "module": "out: {{ salt.module('cmd').run('touch MARK') }}\n",
    "pack": "out: {{ salt.pack['__opts__'] }}\n",
    "reload": "out: {{ salt.reload() }}\n",
    "list_modules": "out: {{ salt.list_modules() }}\n",
    "missing_message": "out: {{ salt.missing_message('x') }}\n",
    "private": "out: {{ salt._loader }}\n",
    "subscript": "out: {{ salt['cmd.run']('touch MARK') }}\n",
    "attribute": "out: {{ salt.cmd.run('touch MARK') }}\n",
    "get": "out: {{ salt.get('cmd.run')('touch MARK') }}\n",
    "method_call": "out: {{ (salt|method_call('get', 'cmd.run'))('touch MARK') }}\n",
    "format": "out: {{ '{0._loader}'|method_call('format', salt) }}\n",
    "keys": "out: {{ salt.keys() }}\n",
    "which": "out: {{ 'sh'|which }}\n",
    "fileclient": "out: {{ opts['__fileclient'] }}\n",
    "py": "#!py\nimport pathlib\ndef run():\n    pathlib.Path('MARK').touch()\n    return {'out': 1}\n",
    "py_in_pipe": "#!jinja|py\nimport pathlib\ndef run():\n    pathlib.Path('MARK').touch()\n    return {}\n",
    "include_abs": "{% include '/etc/passwd' %}\n",
    "include_up": "{% include '../../../../../../etc/passwd' %}\n",
    "include_encoded": "{% include 'a/%2e%2e/%2e%2e/%2e%2e/etc/passwd' %}\n",
    "import_yaml": "{% import_yaml '/etc/hostname' as x %}out: {{ x }}\n",
}
EXPECTED = {
    "module": "has no attribute 'module'",
    "pack": "has no attribute 'pack'",
    "private": "unsafe",
    "subscript": "'cmd.run' needs the minion's host",
    "attribute": "'cmd.run' needs the minion's host",
    "get": "'cmd.run' needs the minion's host",
    "method_call": "'cmd.run' needs the minion's host",
    "format": "unsafe",
    "keys": "the list of the minion's functions",
    "which": "the 'which' filter needs the minion's host",
    "fileclient": "__fileclient",
    "py": "pillar_allow_py: True",
    "py_in_pipe": "pillar_allow_py: True",
    "reload": "has no attribute 'reload'",
    "list_modules": "has no attribute 'list_modules'",
    "missing_message": "has no attribute 'missing_message'",
    "include_abs": "refused",
    "include_up": "refused",
    "include_encoded": "refused",
    "import_yaml": "refused",
}


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_templates_run_nothing_on_the_master_by_any_path(opts, fleet, tree, tmp_path, name):
    marker = tmp_path / "ran-on-the-master"
    write(tree, {"top.sls": "base:\n  '*':\n    - attack\n", "attack.sls": ATTACKS[name].replace("MARK", str(marker))})
    opts["pillar_safe_render_error"] = False
    pillar = MinionPillars(opts, fleet.get).get("web1")
    assert not marker.exists()
    (error,) = pillar["_errors"]
    assert error.startswith("Rendering SLS 'attack' failed, render error:"), error
    assert EXPECTED[name] in error, error
    assert str(opts["pki_dir"]) not in error and "extension_modules" not in error


def test_py_pillar_runs_only_when_the_master_config_allows_it(opts, fleet, tree):
    write(
        tree,
        {
            "top.sls": "base:\n  '*':\n    - code\n",
            "code.sls": "#!py\ndef run():\n    return {'who': __grains__['id'], 'os': salt['grains.get']('os')}\n",
        },
    )
    opts["pillar_safe_render_error"] = False
    refused = MinionPillars(opts, fleet.get).get("web1")["_errors"][0]
    assert (
        "The 'py' renderer runs Python and is not run on the master while rendering the pillar of "
        "minion 'web1'; pillar_allow_py: True in the master config allows"
    ) in refused
    opts["pillar_allow_py"] = True
    assert MinionPillars(opts, fleet.get).get("web1") == {"who": "web1", "os": "Debian"}


def test_pillar_file_exists_reads_the_masters_pillar_roots(opts, fleet, tree):
    write(
        tree,
        {
            "top.sls": "base:\n  '*':\n    - exists\n",
            "exists.sls": "found: {{ salt['pillar.file_exists']('debian.sls') }}\n"
            "outside: {{ salt['pillar.file_exists']('../../../etc/passwd') }}\n",
        },
    )
    assert MinionPillars(opts, fleet.get).get("web1") == {"found": True, "outside": False}


def test_pillar_templates_see_a_copy_of_the_masters_config(opts, fleet, tree):
    write(
        tree,
        {
            "top.sls": "base:\n  '*':\n    - mutate\n",
            "mutate.sls": "{% do opts['pillar_roots']['base'].append('/etc') %}"
            "{% do opts['file_roots'].update({'base': ['/']}) %}"
            "roots: {{ salt['config.get']('pillar_roots') | tojson }}\n",
        },
    )
    before = {k: list(v) for k, v in opts["pillar_roots"].items()}
    pillar = MinionPillars(opts, fleet.get).get("web1")
    assert pillar == {"roots": before}  # the modules' copy is not the template's
    assert opts["pillar_roots"] == before and opts["file_roots"]["base"] != ["/"]


def test_custom_modules_of_the_master_are_never_imported(opts, fleet, tree, tmp_path):
    marker = tmp_path / "imported"
    ext = Path(opts["extension_modules"]) / "modules"
    ext.mkdir(parents=True)
    (ext / "grains.py").write_text(f"open({str(marker)!r}, 'w').close()\ndef get(*a, **k):\n    return 'evil'\n")
    (ext / "mine.py").write_text(f"open({str(marker)!r}, 'w').close()\ndef f():\n    return 1\n")
    write(
        tree,
        {
            "top.sls": "base:\n  '*':\n    - custom\n",
            "custom.sls": "os: {{ salt['grains.get']('os') }}\nmine: {{ 'mine.f' in salt }}\n",
        },
    )
    assert MinionPillars(opts, fleet.get).get("web1") == {"os": "Debian", "mine": False}
    assert not marker.exists()


def test_every_listed_pure_function_exists(opts):
    salt, boundary = guarded(opts, {}, {})
    missing = [name for name in sorted(PURE_FUNCTIONS) if name not in salt]
    assert missing == [] and boundary.needs == []


def test_pure_function_list():
    assert all(
        is_pure(f)
        for f in (
            "grains.get",
            "pillar.items",
            "config.get",
            "match.compound",
            "slsutil.merge",
            "slsutil.serialize",
            # renders salt:// files through the same guarded salt and boundary (a local file is refused)
            "slsutil.renderer",
            "defaults.merge",
            "defaults.get",
            "cp.list_master",
            "file.dirname",
        )
    )
    assert not any(
        is_pure(f)
        for f in (
            "cmd.run",
            "cmd.has_exec",
            "user.info",
            "pkg.version",
            "file.read",
            "cp.get_file",
            "state.apply",
            "saltutil.sync_all",
            "grains.setval",
            "grains.delkey",
            "network.ip_addrs",
            "status.time",
            "disk.usage",
            "dig.A",
            "file.file_exists",
            "mine.send",
            "mine.update",
        )
    )


# -- the cache -------------------------------------------------------------------------------


def test_repeated_requests_hit_the_cache(opts, fleet):
    pillars = MinionPillars(opts, fleet.get)
    first = pillars.get("web1")
    first["settings"]["color"] = "mutated"  # callers get copies
    second = pillars.get("web1")
    assert second["settings"]["color"] == "red"
    assert (pillars.compiles, pillars.hits) == (1, 1)
    pillars.get("db1")
    assert pillars.compiles == 2  # one entry per minion


def test_a_changed_file_invalidates(opts, fleet, tree):
    pillars = MinionPillars(opts, fleet.get)
    assert pillars.get("web1")["pkg_mgr"] == "apt"
    touch_later(tree / "debian.sls", "pkg_mgr: dpkg\n")
    assert pillars.get("web1")["pkg_mgr"] == "dpkg"
    assert pillars.compiles == 2


def test_a_new_file_invalidates(opts, fleet, tree):
    pillars = MinionPillars(opts, fleet.get)
    assert "extra" not in pillars.get("web1")
    write(tree, {"extra.sls": "extra: 1\n"})
    touch_later(tree / "top.sls", "base:\n  '*':\n    - common\n    - extra\n")
    assert pillars.get("web1")["extra"] == 1


def test_changed_grains_invalidate(opts, fleet):
    pillars = MinionPillars(opts, fleet.get)
    assert "db_port" not in pillars.get("web1")
    fleet.grains["web1"] = {**fleet.grains["web1"], "os": "RedHat", "role": "db"}
    # compound 'G@role:db and not web*' still excludes web1; the grain match on os no longer matches
    web = pillars.get("web1")
    assert "pkg_mgr" not in web and web["os_seen"] == "RedHat"
    assert (pillars.compiles, pillars.hits) == (2, 0)


def test_one_compile_for_concurrent_requests_of_one_minion(opts, fleet):
    pillars = MinionPillars(opts, fleet.get)
    results: list[dict[str, Any]] = []
    arrived: list[int] = []
    release = threading.Event()
    real_compile = pillars.compile_now

    def held(*args: Any, **kwargs: Any) -> dict[str, Any]:  # the compile lasts until all six asked
        assert release.wait(10), "the compile was never released"
        return real_compile(*args, **kwargs)

    def ask() -> None:
        arrived.append(1)
        results.append(pillars.get("web1"))

    pillars.compile_now = held  # type: ignore[method-assign]
    threads = [threading.Thread(target=ask) for _ in range(6)]
    for t in threads:
        t.start()
    wait_until(lambda: len(arrived) == 6, 10, "six requests in flight")
    release.set()
    for t in threads:
        t.join(30)
    assert not any(t.is_alive() for t in threads)
    assert len(results) == 6 and all(r == results[0] for r in results)
    assert pillars.compiles == 1 and pillars.hits == 5


def test_forget(opts, fleet):
    pillars = MinionPillars(opts, fleet.get)
    pillars.get("web1")
    pillars.forget("web1")
    pillars.get("web1")
    assert pillars.compiles == 2


# -- environments and the request ---------------------------------------------------------------


@pytest.fixture
def two_envs(opts, tmp_path) -> dict[str, Any]:
    dev = tmp_path / "pillar-dev"
    write(dev, {"top.sls": "dev:\n  '*':\n    - devonly\n", "devonly.sls": "stage: dev\n"})
    opts["pillar_roots"]["dev"] = [str(dev)]
    return opts


def test_pillarenv_and_saltenv(two_envs, fleet):
    pillars = MinionPillars(two_envs, fleet.get)
    every = pillars.get("web1")
    assert every["stage"] == "dev" and every["who"] == "web1"
    assert pillars.get("web1", pillarenv="dev") == {"stage": "dev"}
    assert pillars.get("web1", pillarenv="nosuch") == {}
    assert pillars.get("web1", saltenv="dev") == every  # saltenv alone does not restrict ...
    two_envs["pillarenv_from_saltenv"] = True
    assert pillars.get("web1", saltenv="dev") == {"stage": "dev"}  # ... unless told to


def test_request_handler_serves_only_the_sessions_minion(two_envs, fleet):
    class Sess:
        id = "web1"

    pillars = MinionPillars(two_envs, fleet.get)
    assert pillars.handle_request(Sess(), {"cmd": "pillar"})["pillar"]["who"] == "web1"
    assert pillars.handle_request(Sess(), {"cmd": "pillar", "pillarenv": "dev"}) == {"pillar": {"stage": "dev"}}
    assert pillars.handle_request(Sess(), {"cmd": "pillar", "id": "web1"})["pillar"]["who"] == "web1"
    for field in ("id", "minion_id", "tgt"):
        reply = pillars.handle_request(Sess(), {"cmd": "pillar", field: "db1"})
        assert "pillar" not in reply and "only its own pillar" in reply["error"]
    for bad in ("../etc", "a/b", 7, "x" * 300):
        assert "error" in pillars.handle_request(Sess(), {"cmd": "pillar", "pillarenv": bad})


def test_check_env():
    assert check_env(None, "saltenv") is None and check_env("", "saltenv") is None
    assert check_env("base", "saltenv") == "base" and check_env("feature-1.2", "saltenv") == "feature-1.2"


def test_a_large_tree_signature_is_quick(opts, fleet, tree):
    write(tree, {f"many/f{i}.sls": f"k{i}: {i}\n" for i in range(500)})
    pillars = MinionPillars(opts, fleet.get)
    pillars.get("web1")
    for _ in range(10):
        pillars.get("web1")
    assert pillars.hits == 10  # cached: the 500 files were not rendered again
