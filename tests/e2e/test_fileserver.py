"""End to end: a real ``briny-master`` serves ``file_roots`` to a real ``briny-minion`` on 127.0.0.1.

``briny '*' state.apply`` applies a tree whose SLS imports a ``map.jinja``
(``{% from %}``) that reads ``defaults.yaml`` (``import_yaml``), and whose
``file.managed`` states take ``salt://`` sources, one rendered with
``template: jinja`` (importing the same map), one large enough to travel in
several chunks. The files land on the minion with the right content; a
second run changes nothing; ``cp`` reaches a second saltenv; a traversal is
refused. Daemons are started and stopped by pid (``tests/e2e/support.py``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .support import Fleet

MAP = """\
{% import_yaml "web/defaults.yaml" as defaults %}
{% set web = defaults.web %}
"""

DEFAULTS = """\
web:
  greeting: Hello
  port: 8080
"""

SLS = """\
{% from "web/map.jinja" import web with context %}
motd:
  file.managed:
    - name: {{ out }}/motd
    - source: salt://web/files/motd.j2
    - template: jinja
    - context:
        port: {{ web.port }}

big:
  file.managed:
    - name: {{ out }}/big.bin
    - source: salt://web/files/big.bin
"""

MOTD = """\
{%- from "web/map.jinja" import web -%}
{{ web.greeting }} from {{ grains['id'] }} on port {{ port }}
"""


def write_tree(fleet: Fleet, out: Path) -> bytes:
    salt = fleet.root / "srv" / "salt"
    (salt / "web" / "files").mkdir(parents=True, exist_ok=True)
    (salt / "top.sls").write_text("base:\n  '*':\n    - web\n")
    (salt / "web" / "map.jinja").write_text(MAP)
    (salt / "web" / "defaults.yaml").write_text(DEFAULTS)
    (salt / "web" / "init.sls").write_text(f'{{% set out = "{out}" %}}\n' + SLS)
    (salt / "web" / "files" / "motd.j2").write_text(MOTD)
    blob = os.urandom(2 * 1024 * 1024 + 4321)
    (salt / "web" / "files" / "big.bin").write_bytes(blob)
    dev = fleet.root / "srv" / "dev"
    dev.mkdir(parents=True, exist_ok=True)
    (dev / "note.txt").write_text("from dev\n")
    return blob


def results(res: Any, minion_id: str) -> dict[str, Any]:
    assert res.returncode == 0, f"rc {res.returncode}\n{res.stdout}\n{res.stderr}"
    data = res.json()
    ret = data[minion_id]
    assert isinstance(ret, dict), ret
    return ret


@pytest.mark.slow
def test_state_apply_from_the_master_file_server(make_fleet: Callable[..., Fleet], tmp_path: Path) -> None:
    fleet = make_fleet(["fs1"], auto_accept=True)
    fleet.master_opts["file_roots"]["dev"] = [str(fleet.root / "srv" / "dev")]
    fleet._write_master()
    out = fleet.root / "out"
    out.mkdir()
    blob = write_tree(fleet, out)
    fleet.start()

    first = results(fleet.briny("*", "state.apply", "--out", "json", timeout=90), "fs1")
    assert sorted(r["__id__"] for r in first.values()) == ["big", "motd"]
    assert all(r["result"] is True for r in first.values()), json.dumps(first, indent=1)
    assert (out / "motd").read_text() == "Hello from fs1 on port 8080\n"
    assert (out / "big.bin").read_bytes() == blob
    cached = fleet.minions["fs1"].root / "cache" / "files" / "base" / "web" / "files" / "big.bin"
    assert cached.read_bytes() == blob

    second = results(fleet.briny("*", "state.apply", "--out", "json", timeout=90), "fs1")
    assert all(r["result"] is True and not r["changes"] for r in second.values()), json.dumps(second, indent=1)

    note = fleet.briny("*", "cp.get_file_str", "salt://note.txt?saltenv=dev", "--out", "json")
    assert note.json()["fs1"] == "from dev\n"
    listed = fleet.briny("*", "cp.list_master", "--out", "json").json()["fs1"]
    assert listed == [
        "top.sls",
        "web/defaults.yaml",
        "web/files/big.bin",
        "web/files/motd.j2",
        "web/init.sls",
        "web/map.jinja",
    ]
    escape = fleet.briny("*", "cp.cache_file", "salt://web/%2e%2e/%2e%2e/mx/conf/master", "--out", "json")
    assert escape.json()["fs1"] is False
