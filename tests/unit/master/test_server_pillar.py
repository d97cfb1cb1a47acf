"""The ``pillar`` request on the real master (master/server.py + master/pillar.py) over
``transport.MemoryHub``, with raw minions written from ``wire`` and ``crypto``: each minion gets
its own pillar, and never another's."""

from __future__ import annotations

import asyncio
import threading
import textwrap
from pathlib import Path
from typing import Any

import pytest

from briny.master.server import NOT_OPENED

from tests.waiting import until

from .test_server import Ctx, run_master

TOP = """\
    base:
      '*':
        - common
      'role:web':
        - match: grain
        - web
      'role:db':
        - match: grain
        - db
    dev:
      '*':
        - devonly
    """


@pytest.fixture
def opts(master_opts: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    base, dev = tmp_path / "pillar", tmp_path / "pillar-dev"
    base.mkdir()
    dev.mkdir()
    (base / "top.sls").write_text(textwrap.dedent(TOP))
    (base / "common.sls").write_text("me: {{ grains['id'] }}\nrole: {{ salt['grains.get']('role') }}\n")
    (base / "web.sls").write_text("secret: web-secret\n")
    (base / "db.sls").write_text("secret: db-secret\ndb_password: hunter2\n")
    (base / "broken.sls").write_text("x: {{ salt['cmd.run']('id') }}\n")
    (dev / "top.sls").write_text("dev:\n  '*':\n    - devonly\n")
    (dev / "devonly.sls").write_text("stage: dev\n")
    master_opts["pillar_roots"] = {"base": [str(base)], "dev": [str(dev)]}
    master_opts["auto_accept"] = True
    return master_opts


WEB = {"id": "web1", "role": "web"}
DB = {"id": "db1", "role": "db"}


def test_each_minion_gets_its_own_pillar(opts):
    async def body(c: Ctx) -> None:
        web = await c.accepted("web1", 0, grains=WEB)
        db = await c.accepted("db1", 1, grains=DB)
        kind, rep = await web.req("pillar")
        assert kind == "rep"
        assert rep["pillar"] == {"me": "web1", "role": "web", "secret": "web-secret", "stage": "dev"}
        kind, rep = await db.req("pillar")
        assert rep["pillar"]["secret"] == "db-secret" and rep["pillar"]["me"] == "db1"

    run_master(opts, body)


def test_minion_a_cannot_get_minion_bs_pillar(opts):
    async def body(c: Ctx) -> None:
        web = await c.accepted("web1", 0, grains=WEB)
        db = await c.accepted("db1", 1, grains=DB)
        # naming the other minion in the payload is refused
        for field in ("id", "minion_id", "tgt"):
            kind, rep = await web.req("pillar", **{field: "db1"})
            assert kind == "rep" and "pillar" not in rep
            assert "only its own pillar" in rep["error"]
        # speaking as db1 (header id db1) with web1's session key does not open: refused, to the sender only
        forged = web.frame("pillar", key=web.session, id_="db1")
        assert await web.send(forged) == ("err", {"error": NOT_OPENED})
        # an impostor offering another key for db1 is denied and gets no session: its request,
        # sealed with a key of its own, does not open with db1's session key and is refused
        stranger = c.minion("db1", 2)
        assert (await stranger.auth())["status"] == "denied"
        assert await stranger.req("pillar") == ("err", {"error": NOT_OPENED})
        # an id the master never accepted is told to authenticate
        nobody = c.minion("nobody", 3)
        assert await nobody.req("pillar") == ("err", {"error": "unauthenticated"})
        # and db1 itself still gets its own
        kind, rep = await db.req("pillar")
        assert rep["pillar"]["db_password"] == "hunter2"
        kind, rep = await web.req("pillar")
        assert "db_password" not in rep["pillar"]

    run_master(opts, body)


def test_pillarenv_and_saltenv_are_honoured(opts):
    async def body(c: Ctx) -> None:
        web = await c.accepted("web1", 0, grains=WEB)
        assert (await web.req("pillar", pillarenv="dev"))[1] == {"pillar": {"stage": "dev"}}
        assert (await web.req("pillar", pillarenv="nosuch"))[1] == {"pillar": {}}
        assert (await web.req("pillar", saltenv="dev"))[1]["pillar"]["secret"] == "web-secret"
        c.opts["pillarenv_from_saltenv"] = True
        assert (await web.req("pillar", saltenv="dev"))[1] == {"pillar": {"stage": "dev"}}
        kind, rep = await web.req("pillar", pillarenv="../../etc")
        assert kind == "rep" and "environment name" in rep["error"]

    run_master(opts, body)


def test_render_errors_come_back_as_errors(opts, tmp_path):
    (tmp_path / "pillar" / "top.sls").write_text("base:\n  '*':\n    - common\n    - broken\n")

    async def body(c: Ctx) -> None:
        web = await c.accepted("web1", 0, grains=WEB)
        kind, rep = await web.req("pillar")
        assert kind == "rep"
        assert rep["pillar"]["me"] == "web1"
        assert rep["pillar"]["_errors"] == ["Rendering SLS 'broken' failed. Please see master log for details."]

    run_master(opts, body)


def test_new_grains_give_a_new_pillar(opts):
    async def body(c: Ctx) -> None:
        m = await c.accepted("m1", 0, grains={"id": "m1", "role": "web"})
        assert (await m.req("pillar"))[1]["pillar"]["secret"] == "web-secret"
        assert (await m.req("grains", grains={"id": "m1", "role": "db"}))[0] == "rep"
        assert (await m.req("pillar"))[1]["pillar"]["secret"] == "db-secret"
        assert c.server.publisher.compiler.pillars.compiles == 2

    run_master(opts, body)


def test_compiles_run_in_a_worker_never_on_the_loop(opts):
    async def body(c: Ctx) -> None:
        web = await c.accepted("web1", 0, grains=WEB)
        seen: list[str] = []
        real = c.server.publisher.compiler.pillars.compile_now
        entered, release, finished = threading.Event(), threading.Event(), threading.Event()

        def blocked(*args: Any, **kwargs: Any) -> dict[str, Any]:
            seen.append(threading.current_thread().name)
            entered.set()
            release.wait(5)  # on the loop this would hold every other request for 5 s
            finished.set()
            return real(*args, **kwargs)

        c.server.publisher.compiler.pillars.compile_now = blocked  # type: ignore[method-assign]
        other = await c.accepted("db1", 1, grains=DB)
        pillar = asyncio.ensure_future(web.req("pillar"))
        await until(entered.is_set, 5, "the compile to start")
        assert (await other.req("ping"))[0] == "rep"  # the loop still serves
        assert not finished.is_set(), "the ping waited for the compile"
        release.set()
        assert (await pillar)[1]["pillar"]["me"] == "web1"
        assert seen and seen[0].startswith("briny-master")

    run_master(opts, body)
