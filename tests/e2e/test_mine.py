"""End-to-end mine (issue 10): two real minions publish ``network.ip_addrs`` and a grains value
through ``mine_functions``; a third renders ``salt['mine.get'](...)`` in its highstate, compiled
on the master and by itself with the same result; ``allow_tgt`` is honoured and the master keeps
the data across a restart. Driven only through ``briny``."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from .support import Fleet

GRAINS = {"m1": {"role": "web"}, "m2": {"role": "db"}, "m3": {"role": "lb"}}
MINE = {
    "network.ip_addrs": {"include_loopback": True},
    "role": {"mine_function": "grains.get", "key": "role"},
    "secret": {"mine_function": "grains.get", "key": "role", "allow_tgt": "m1"},
}


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def call(fleet: Fleet, tgt: str, *args: str) -> dict[str, Any]:
    res = fleet.briny("--static", "--out", "json", tgt, *args)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.json()


def highstate(fleet: Fleet) -> dict[str, Any]:
    ret = call(fleet, "m3", "state.apply")["m3"]
    return {r["__id__"]: r["name"] for r in ret.values()}


def test_mine_through_the_master(make_fleet):
    fleet = make_fleet(["m1", "m2", "m3"], auto_accept=True, grains=GRAINS)
    for mid in ("m1", "m2"):
        fleet.add_minion(mid, mine_functions=MINE, mine_enabled=True)
    root = Path(fleet.master_opts["file_roots"]["base"][0])
    write(
        root,
        {
            "top.sls": "base:\n  m3:\n    - lb\n",
            "lb.sls": """\
            {%- set ips = salt['mine.get']('*', 'network.ip_addrs') %}
            {%- set roles = salt['mine.get']('G@role:web or G@role:db', 'role', tgt_type='compound') %}
            backends:
              test.succeed_without_changes:
                - name: {{ ips | json | yaml_squote }}
            roles:
              test.succeed_without_changes:
                - name: {{ roles | json | yaml_squote }}
            secret:
              test.succeed_without_changes:
                - name: {{ salt['mine.get']('*', 'secret') | json | yaml_squote }}
            """,
        },
    )
    fleet.start()

    # each minion runs mine.update when it connects: wait until the master holds both
    ips = fleet.wait(
        lambda: (got := call(fleet, "m3", "mine.get", "*", "network.ip_addrs")["m3"]) and len(got) == 2 and got,
        30,
        "the mine data of m1 and m2",
    )
    assert set(ips) == {"m1", "m2"} and "127.0.0.1" in ips["m1"]
    assert call(fleet, "m3", "mine.get", "*", "role,secret")["m3"] == {"role": {"m1": "web", "m2": "db"}}
    assert call(fleet, "m1", "mine.get", "*", "secret")["m1"] == {"m1": "web", "m2": "db"}  # allow_tgt: m1
    assert call(fleet, "m3", "mine.get", "role:db", "role", "tgt_type=grain")["m3"] == {"m2": "db"}

    compiled = highstate(fleet)
    assert json.loads(compiled["backends"]) == ips
    assert json.loads(compiled["roles"]) == {"m1": "web", "m2": "db"}
    assert json.loads(compiled["secret"]) == {}
    log = fleet.master.log_file.read_text(errors="replace")
    assert "compiled highstate for m3 on the master" in log

    # a minion changes only its own mine; a flush shows at once in the next compile
    assert call(fleet, "m2", "mine.delete", "role")["m2"] is True
    assert json.loads(highstate(fleet)["roles"]) == {"m1": "web"}
    assert call(fleet, "m2", "mine.send", "role", "mine_function=grains.get", "key=role")["m2"] is True

    # the master keeps the mine across a restart, and m3 compiling for itself gets the same
    fleet.stop_master()
    fleet.master_opts["state_compile"] = "minion"
    fleet.write_master()
    fleet.start_master()
    fleet.wait_connected(["m1", "m2", "m3"])
    before = fleet.master.log_file.read_text(errors="replace").count("compiled highstate for m3 on the master")
    assert highstate(fleet) == compiled
    assert fleet.master.log_file.read_text(errors="replace").count("compiled highstate for m3 on the master") == before
