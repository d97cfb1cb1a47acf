"""The ``compile`` request on the real master (master/server.py + master/compile.py) over
``transport.MemoryHub``, with raw minions: a minion gets the compiled job of its own states (what
its publish would carry), never another minion's, and an unauthenticated one gets nothing."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.reported import ReportedConfig, public_opts
from briny.master.server import NOT_OPENED

from .test_server import Ctx, RawMinion, run_master

WEB = {"id": "web1", "role": "web"}
DB = {"id": "db1", "role": "db"}
# what a minion with the default config reports with its grains
REPORT = public_opts(apply_config({"id": "m"}, MINION_DEFAULTS))


async def reporting(c: Ctx, minion_id: str, key_index: int, grains: dict[str, Any]) -> RawMinion:
    """An accepted minion that sent its grains with its config, as a minion does after auth."""
    m = await c.accepted(minion_id, key_index, grains=grains)
    assert (await m.req("grains", grains=grains, opts=REPORT))[0] == "rep"
    return m


@pytest.fixture
def opts(master_opts: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    states, pillar = tmp_path / "salt", tmp_path / "pillar"
    states.mkdir()
    pillar.mkdir()
    files = {
        "top.sls": "base:\n  '*':\n    - common\n",
        "common.sls": """\
            role:
              test.succeed_without_changes:
                - name: {{ grains['role'] }} {{ pillar['secret'] }}
            """,
        "broken.sls": "x: {{ nosuch.attr }\n",
        "hostly.sls": "hi:\n  test.succeed_without_changes:\n    - name: {{ salt['cmd.run']('id') }}\n",
    }
    for rel, text in files.items():
        (states / rel).write_text(textwrap.dedent(text))
    (pillar / "top.sls").write_text("base:\n  '*':\n    - data\n")
    (pillar / "data.sls").write_text("secret: {{ grains['role'] }}-secret\n")
    master_opts.update(
        {"file_roots": {"base": [str(states)]}, "pillar_roots": {"base": [str(pillar)]}, "auto_accept": True}
    )
    return master_opts


def names(compiled: dict[str, Any]) -> list[str]:
    return [chunk["name"] for chunk in compiled["chunks"]]


def test_a_minion_gets_its_own_compiled_job(opts):
    async def body(c: Ctx) -> None:
        web = await reporting(c, "web1", 0, WEB)
        db = await reporting(c, "db1", 1, DB)
        kind, rep = await web.req("compile", fun="state.apply", arg=[], kwarg={})
        assert kind == "rep" and names(rep["compiled"]) == ["web web-secret"]
        kind, rep = await db.req("compile", fun="state.apply", arg=[], kwarg={})
        assert kind == "rep" and names(rep["compiled"]) == ["db db-secret"]
        # the same thing a publish of that job carries, from the cache the second time
        renders = c.server.publisher.compiler.renders
        kind, rep = await web.req("compile", fun="state.apply", arg=[], kwarg={})
        assert names(rep["compiled"]) == ["web web-secret"] and c.server.publisher.compiler.renders == renders
        # arguments as a publish has them: state.sls with mods and test=True
        kind, rep = await web.req("compile", fun="state.sls", arg=["common", "test=True"], kwarg={})
        assert names(rep["compiled"]) == ["web web-secret"]
        # render errors come back as the errors form, with retcode 1
        kind, rep = await web.req("compile", fun="state.sls", arg=["broken"])
        assert rep["compiled"]["retcode"] == 1 and "Rendering SLS 'base:broken' failed" in rep["compiled"]["errors"][0]
        # a template needing the host (auto mode), or a function the master does not compile:
        # null, the minion compiles itself
        assert (await web.req("compile", fun="state.sls", arg=["hostly"]))[1] == {"compiled": None}
        assert (await web.req("compile", fun="test.ping", arg=[], kwarg={}))[1] == {"compiled": None}
        # bad payloads are refused with a message
        assert "needs 'fun'" in (await web.req("compile", arg=[]))[1]["error"]
        assert "'arg' must be a list" in (await web.req("compile", fun="state.apply", arg="x"))[1]["error"]

    run_master(opts, body)


def test_a_minion_cannot_get_another_minions_compiled_job(opts):
    async def body(c: Ctx) -> None:
        web = await reporting(c, "web1", 0, WEB)
        await reporting(c, "db1", 1, DB)
        # the payload has no id to ask with; naming another minion anyway is refused
        for field in ("id", "minion_id", "tgt"):
            kind, rep = await web.req("compile", fun="state.apply", **{field: "db1"})
            assert kind == "rep" and "compiled" not in rep
            assert "only its own compiled states" in rep["error"]
        # naming itself is harmless
        kind, rep = await web.req("compile", fun="state.apply", id="web1")
        assert names(rep["compiled"]) == ["web web-secret"]
        # speaking as db1 with web1's session key does not open: refused, to the sender only
        forged = web.frame("compile", key=web.session, id_="db1", fun="state.apply")
        assert await web.send(forged) == ("err", {"error": NOT_OPENED})
        # an impostor offering another key for db1 is denied, and its request does not open (refused)
        stranger = c.minion("db1", 2)
        assert (await stranger.auth())["status"] == "denied"
        assert await stranger.req("compile", fun="state.apply") == ("err", {"error": NOT_OPENED})

    run_master(opts, body)


def test_an_unauthenticated_compile_request_is_told_to_authenticate(opts):
    async def body(c: Ctx) -> None:
        nobody = c.minion("nobody", 3)
        assert await nobody.req("compile", fun="state.apply") == ("err", {"error": "unauthenticated"})

    run_master(opts, body)


def test_a_minions_reported_config_is_kept_only_as_template_data(opts, tmp_path):
    marker = tmp_path / "imported-on-the-master"
    evil = tmp_path / "evil" / "modules"
    evil.mkdir(parents=True)
    (evil / "grains.py").write_text(f"open({str(marker)!r}, 'w').close()\ndef get(*a, **k):\n    return 'x'\n")
    hostile = {
        **REPORT,
        "extension_modules": str(evil.parent),
        "file_roots": {"base": ["/"]},
        "pki_dir": "/etc",
        "mysql.pass": "hunter2",
        "my_setting": "mine",
    }

    async def body(c: Ctx) -> None:
        web = await c.accepted("web1", 0, grains=WEB)
        assert (await web.req("grains", grains=WEB, opts=hostile))[0] == "rep"
        taken = c.server.grains.opts_of("web1")
        assert isinstance(taken, ReportedConfig) and taken.data["my_setting"] == "mine"
        assert not {"extension_modules", "file_roots", "pki_dir", "mysql.pass"} & set(taken.data)
        kind, rep = await web.req("compile", fun="state.apply", arg=[], kwarg={})
        assert names(rep["compiled"]) == ["web web-secret"] and not marker.exists()
        # a report that is not a map, or too big, leaves the master knowing nothing of its config
        assert (await web.req("grains", grains=WEB, opts="x"))[0] == "rep"
        assert c.server.grains.opts_of("web1") is None
        assert (await web.req("grains", grains=WEB, opts={f"k{i}": "v" * 1000 for i in range(100)}))[0] == "rep"
        assert c.server.grains.opts_of("web1") is None
        assert (await web.req("compile", fun="state.apply", arg=[], kwarg={}))[1] == {"compiled": None}
        # and the master keeps serving
        assert (await web.req("ping"))[0] == "rep"

    run_master(opts, body)
