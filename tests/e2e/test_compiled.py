"""End-to-end compiled jobs (issue 6): a real ``briny-master`` compiles each minion's highstate
(grains-dependent includes, pillar, a ``salt://`` Jinja file) and real ``briny-minion``
processes run the chunks; the results equal what each minion computes for itself
(``state_compile: minion``), and a template calling ``cmd.run`` still works through the
minion fallback of ``state_compile: auto``. Driven only through ``briny``."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet

GRAINS = {"m1": {"role": "web"}, "m2": {"role": "db"}}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def tree(fleet: Fleet, out: Path) -> None:
    write(
        Path(fleet.master_opts["file_roots"]["base"][0]),
        {
            "top.sls": "base:\n  '*':\n    - common\n",
            "common/init.sls": f"""\
            include:
              - common.{{{{ grains['role'] }}}}
            motd:
              file.managed:
                - name: {out}/{{{{ grains['id'] }}}}.motd
                - source: salt://common/motd.j2
                - template: jinja
            hello:
              test.succeed_without_changes:
                - name: {{{{ salt['pillar.get']('color') }}}} {{{{ salt['grains.get']('role') }}}}
                - require:
                  - file: motd
            """,
            "common/web.sls": "web:\n  test.succeed_without_changes:\n    - require_in:\n      - test: hello\n",
            "common/db.sls": "db:\n  test.succeed_without_changes:\n    - order: 1\n",
            "common/motd.j2": "{{ grains['id'] }} is {{ grains['role'] }}, {{ pillar['color'] }}\n",
            "hostly.sls": "hi:\n  test.succeed_without_changes:\n    - name: {{ salt['cmd.run']('echo hi') }}\n",
        },
    )
    write(
        Path(fleet.master_opts["pillar_roots"]["base"][0]),
        {
            "top.sls": "base:\n  '*':\n    - data\n",
            "data.sls": "color: {{ grains['role'] }}-blue\n",
        },
    )


def apply(fleet: Fleet, *args: str) -> tuple[int, dict[str, Any]]:
    res = fleet.briny("--static", "--out", "json", "*", *args)
    data = res.json() if res.stdout.strip() else {}
    assert isinstance(data, dict), res.stdout + res.stderr
    return res.returncode, data


def stable(returns: dict[str, Any]) -> dict[str, Any]:
    """Returns without what differs from run to run (timings)."""
    return {
        mid: {tag: {k: v for k, v in r.items() if k not in ("duration", "start_time")} for tag, r in ret.items()}
        if isinstance(ret, dict)
        else ret
        for mid, ret in returns.items()
    }


def master_log(fleet: Fleet) -> str:
    return fleet.master.log_file.read_text(errors="replace")


@pytest.mark.slow
def test_compiled_highstate_equals_the_minions_own_and_host_functions_fall_back(make_fleet, tmp_path):
    fleet = make_fleet(["m1", "m2"], auto_accept=True, grains=GRAINS)
    out = tmp_path / "out"
    out.mkdir()
    tree(fleet, out)
    fleet.start()

    code, dry = apply(fleet, "state.apply", "test=True")
    assert code == 0, dry
    assert not list(out.iterdir())
    code, first = apply(fleet, "state.apply")
    assert code == 0, first
    assert (out / "m1.motd").read_text() == "m1 is web, web-blue\n"
    assert (out / "m2.motd").read_text() == "m2 is db, db-blue\n"
    assert {r["__id__"] for r in first["m1"].values()} == {"motd", "hello", "web"}
    assert {r["__id__"] for r in first["m2"].values()} == {"motd", "hello", "db"}
    assert {r["name"] for r in first["m2"].values() if r["__id__"] == "hello"} == {"db-blue db"}
    log = master_log(fleet)
    assert "compiled highstate for m1 on the master" in log and "compiled highstate for m2 on the master" in log

    _, compiled_again = apply(fleet, "state.apply")
    _, compiled_dry = apply(fleet, "state.apply", "test=True")

    # a template calling cmd.run: the master does not run it; the minion compiles for itself
    code, hostly = apply(fleet, "state.sls", "hostly")
    assert code == 0, hostly
    for mid in ("m1", "m2"):
        assert [r["name"] for r in hostly[mid].values()] == ["hi"]
    assert "m1 compiles its own states: a template needs its host (cmd.run)" in master_log(fleet)

    # the same jobs with every minion compiling for itself give the same results
    fleet.stop_master()
    fleet.master_opts["state_compile"] = "minion"
    fleet.write_master()
    fleet.start_master()
    fleet.wait_connected(["m1", "m2"])
    before = master_log(fleet).count("on the master:")
    _, own_again = apply(fleet, "state.apply")
    _, own_dry = apply(fleet, "state.apply", "test=True")
    assert master_log(fleet).count("on the master:") == before
    assert stable(compiled_again) == stable(own_again)
    assert stable(compiled_dry) == stable(own_dry)
    assert all(r["result"] is True and not r["changes"] for ret in own_again.values() for r in ret.values())
