"""End-to-end pillar (issue 6): a real ``briny-master`` compiles each minion's pillar from its
``pillar_roots`` with that minion's grains; real ``briny-minion`` processes on 127.0.0.1 fetch
it, keep it, and fetch it again on ``saltutil.refresh_pillar``. Driven only through ``briny``."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet

GRAINS = {"m1": {"role": "web", "dc": "east"}, "m2": {"role": "db", "dc": "west"}}

TREE = {
    "top.sls": """\
        base:
          '*':
            - common
          'role:web':
            - match: grain
            - web
          'G@role:db':
            - match: compound
            - db
        """,
    "common/init.sls": """\
        include:
          - .dc
        me: {{ grains['id'] }}
        role: {{ salt['grains.get']('role') }}
        """,
    "common/dc.sls": "dc: {{ grains['dc'] }}\n",
    "web.sls": "secret: web-secret\n",
    "db.sls": "secret: db-secret\ndb_password: hunter2\n",
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        before = path.stat().st_mtime_ns if path.exists() else 0
        path.write_text(textwrap.dedent(text))
        if before:
            os.utime(path, ns=(before + 2_000_000_000,) * 2)


def pillar_json(fleet: Fleet, *args: str) -> tuple[int, dict[str, Any]]:
    res = fleet.briny("--static", "--out", "json", *args)
    data = res.json() if res.stdout.strip() else {}
    assert isinstance(data, dict), res.stdout + res.stderr
    return res.returncode, data


@pytest.mark.slow
def test_each_minion_sees_its_own_pillar_and_refresh_picks_up_changes(make_fleet):
    fleet = make_fleet(["m1", "m2"], auto_accept=True, grains=GRAINS)
    fleet.add_minion("m2", multiprocessing=False)  # m1 runs jobs in processes, m2 in threads
    pillar_root = Path(fleet.master_opts["pillar_roots"]["base"][0])
    write(pillar_root, TREE)
    fleet.start()

    code, out = pillar_json(fleet, "*", "pillar.items")
    assert code == 0, out
    assert out["m1"] == {"me": "m1", "role": "web", "dc": "east", "secret": "web-secret"}
    assert out["m2"] == {"me": "m2", "role": "db", "dc": "west", "secret": "db-secret", "db_password": "hunter2"}

    # pillar.items compiles afresh at once (Salt's); the minions keep their in-memory pillar
    # (pillar.get, pillar.item, pillar.raw) until told to refresh it
    write(pillar_root, {"web.sls": "secret: rotated\n", "db.sls": "secret: db-rotated\ndb_password: hunter2\n"})
    code, out = pillar_json(fleet, "*", "pillar.items")
    assert code == 0, out
    assert (out["m1"]["secret"], out["m2"]["secret"]) == ("rotated", "db-rotated")
    code, out = pillar_json(fleet, "*", "pillar.get", "secret")
    assert out == {"m1": "web-secret", "m2": "db-secret"}
    code, out = pillar_json(fleet, "m1", "pillar.item", "secret")
    assert out == {"m1": {"secret": "web-secret"}}
    code, out = pillar_json(fleet, "*", "saltutil.refresh_pillar")
    assert out == {"m1": True, "m2": True}
    code, out = pillar_json(fleet, "*", "pillar.get", "secret")
    assert out == {"m1": "rotated", "m2": "db-rotated"}

    # targeting by grains reaches only the db minion, which alone has the db pillar
    code, out = pillar_json(fleet, "-G", "role:db", "pillar.get", "db_password")
    assert out == {"m2": "hunter2"}


def test_a_template_calling_a_host_function_is_a_pillar_error(make_fleet):
    fleet = make_fleet(["m1"], auto_accept=True, grains=GRAINS, master_opts={"pillar_safe_render_error": False})
    pillar_root = Path(fleet.master_opts["pillar_roots"]["base"][0])
    marker = fleet.root / "ran-on-the-master"
    write(
        pillar_root,
        {"top.sls": "base:\n  '*':\n    - host\n", "host.sls": f"x: {{{{ salt['cmd.run']('touch {marker}') }}}}\n"},
    )
    fleet.start()
    code, out = pillar_json(fleet, "m1", "pillar.get", "_errors")
    (error,) = out["m1"]
    assert "'cmd.run' needs the minion's host" in error
    assert not marker.exists()
    code, out = pillar_json(fleet, "m1", "state.apply")
    assert code != 0
    assert out["m1"][0] == "Pillar failed to render with the following messages:"
