"""End-to-end (issue 11, findings 1 and 2): with a real ``briny-master`` and real ``briny-minion``
processes on 127.0.0.1, nothing a template tries runs in the master, and a minion's reported
config steers nothing there, while a legitimate minion keeps answering ``test.ping`` and
``state.apply``.

- ``evil`` is a real minion daemon whose report (sent with its grains) also claims
  ``extension_modules``, ``module_dirs``, ``file_roots`` and ``cachedir`` pointing at a folder of
  modules that write a marker file when imported (a ``sitecustomize`` on its ``PYTHONPATH`` adds
  them to what it sends: a modified minion);
- state SLS try ``salt.module('cmd').run(...)``, ``salt.pack['__opts__']`` and ``#!py``;
- pillar SLS try the same, rendered on the master.

Every marker file names the pid that wrote it: none may be the master's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .support import Fleet
from .test_pillar import write

GRAINS = {"good": {"role": "web"}, "evil": {"role": "db"}}
HOSTILE_REPORT = "BRINY_TEST_HOSTILE_REPORT"
SITECUSTOMIZE = f"""\
import json, os
if os.environ.get({HOSTILE_REPORT!r}):
    import briny.minion.agent as agent
    extra = json.loads(os.environ[{HOSTILE_REPORT!r}])
    honest = agent.public_opts
    agent.public_opts = lambda opts: {{**honest(opts), **extra}}
"""


def run(fleet: Fleet, *args: str) -> tuple[int, dict[str, Any]]:
    res = fleet.briny("--static", "--out", "json", "-t", "30", *args)
    data = res.json() if res.stdout.strip() else {}
    assert isinstance(data, dict), res.stdout + res.stderr
    return res.returncode, data


def markers(folder: Path) -> dict[str, int]:
    """marker name -> the pid that wrote it."""
    return {p.name.rsplit("-", 1)[0]: int(p.read_text()) for p in folder.iterdir()}


def master_log(fleet: Fleet) -> str:
    return fleet.master.log_file.read_text(errors="replace")


def mark(folder: Path, name: str) -> str:
    """Python that writes ``folder/name-<pid>`` holding its pid."""
    return (
        f"import os; open(os.path.join({str(folder)!r}, {name!r} + '-' + str(os.getpid())), 'w')"
        f".write(str(os.getpid()))"
    )


def test_templates_run_nothing_in_the_master_and_a_minions_report_steers_nothing(make_fleet, tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    evil_mods = tmp_path / "evil" / "modules"
    evil_mods.mkdir(parents=True)
    for name in ("grains", "pillar", "config", "match", "slsutil", "test"):
        (evil_mods / f"{name}.py").write_text(f"{mark(marks, 'ext')}\ndef get(*a, **k):\n    return 'evil'\n")
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    (hostile / "sitecustomize.py").write_text(SITECUSTOMIZE)
    report = {
        "extension_modules": str(evil_mods.parent),
        "module_dirs": [str(evil_mods)],
        "file_roots": {"base": [str(evil_mods)]},
        "cachedir": str(evil_mods.parent),
    }
    fleet = make_fleet(
        ["good", "evil"],
        auto_accept=True,
        grains=GRAINS,
        minion_env={"evil": {"PYTHONPATH": str(hostile), HOSTILE_REPORT: json.dumps(report)}},
    )
    states = Path(fleet.master_opts["file_roots"]["base"][0])
    pillar = Path(fleet.master_opts["pillar_roots"]["base"][0])
    write(
        states,
        {
            "top.sls": "base:\n  '*':\n    - app\n",
            "app.sls": """\
            hello:
              test.succeed_without_changes:
                - name: {{ grains['id'] }} {{ salt['grains.get']('role') }} {{ salt['pillar.get']('color') }}
            """,
            "attack_module.sls": f"x:\n  test.nop:\n    - name: {{{{ salt.module('cmd').run('touch {marks}/module-0') }}}}\n",
            "attack_pack.sls": "x:\n  test.nop:\n    - name: {{ salt.pack['__opts__']['pki_dir'] }}\n",
            "code.sls": f"#!py\ndef run():\n    {mark(marks, 'py')}\n"
            "    return {'code': {'test.succeed_without_changes': [{'name': __grains__['id']}]}}\n",
        },
    )
    write(pillar, {"top.sls": "base:\n  '*':\n    - data\n", "data.sls": "color: blue\n"})
    fleet.start()
    master_pid = fleet.master.pid

    # finding 2: the hostile report is refused (logged) and the master's compile imports nothing
    code, applied = run(fleet, "*", "state.apply")
    assert code == 0, applied
    assert [r["name"] for r in applied["good"].values()] == ["good web blue"]
    assert [r["name"] for r in applied["evil"].values()] == ["evil db blue"]
    log = master_log(fleet)
    assert (
        "evil reported config keys the master never takes (paths, module locations, sockets, keys, "
        "secrets): cachedir, extension_modules, file_roots, module_dirs"
    ) in log
    assert "compiled highstate for evil on the master" in log
    assert markers(marks) == {}

    # finding 1, state SLS: no way into the loader; what needs the host compiles on the minion
    code, got = run(fleet, "evil", "state.sls", "attack_module")
    no_module = "'salt.utils.templates.AliasedLoader object' has no attribute 'module'"  # Salt's words
    assert code == 1 and no_module in got["evil"][0], got
    code, got = run(fleet, "evil", "state.sls", "attack_pack")
    assert code == 1 and "has no attribute 'pack'" in got["evil"][0], got
    assert str(fleet.master_dir) not in json.dumps(got)
    assert "evil compiles its own states: a template needs its host (salt.pack, pack)" in master_log(fleet)
    code, got = run(fleet, "*", "state.sls", "code")
    assert code == 0, got
    assert {mid: [r["name"] for r in ret.values()] for mid, ret in got.items()} == {"good": ["good"], "evil": ["evil"]}
    assert "compiles its own states: a template needs its host (#!py)" in master_log(fleet)
    written = [p for p in marks.iterdir()]
    assert len(written) == 2 and all(int(p.read_text()) != master_pid for p in written)  # the minions'
    for p in written:
        p.unlink()

    # finding 1, pillar: rendered on the master, refused there with the reason in the master's log
    write(
        pillar,
        {
            "top.sls": "base:\n  '*':\n    - data\n  'evil':\n    - attack_module\n    - attack_pack\n    - attack_py\n",
            "attack_module.sls": f"x: {{{{ salt.module('cmd').run('touch {marks}/module-0') }}}}\n",
            "attack_pack.sls": "x: {{ salt.pack['__opts__']['pki_dir'] }}\n",
            "attack_py.sls": f"#!py\ndef run():\n    {mark(marks, 'pillarpy')}\n    return {{'x': 1}}\n",
        },
    )
    code, got = run(fleet, "evil", "state.apply")
    assert code != 0 and got["evil"][0] == "Pillar failed to render with the following messages:", got
    assert sorted(got["evil"][1:]) == sorted(
        f"Rendering SLS '{sls}' failed. Please see master log for details."
        for sls in ("attack_module", "attack_pack", "attack_py")
    )
    log = master_log(fleet)
    assert (
        "'salt.utils.templates.AliasedLoader object' has no attribute 'module'" in log
        and "'salt.utils.templates.AliasedLoader object' has no attribute 'pack'" in log
    )
    assert (
        "The 'py' renderer runs Python and is not run on the master while rendering the pillar of "
        "minion 'evil'; pillar_allow_py: True in the master config allows"
    ) in log
    assert markers(marks) == {}

    # the legitimate minion (and the hostile one, for what is not an attack) keep answering
    code, pinged = run(fleet, "*", "test.ping")
    assert code == 0 and pinged == {"good": True, "evil": True}
    code, applied = run(fleet, "good", "state.apply")
    assert code == 0 and [r["name"] for r in applied["good"].values()] == ["good web blue"]
    assert markers(marks) == {} and fleet.master.running
