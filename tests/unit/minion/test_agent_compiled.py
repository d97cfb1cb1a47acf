"""Compiled jobs end to end in one process: the real master (master/server.py, master/compile.py)
and real :class:`MinionAgent` s over ``transport.MemoryHub``. A ``state.apply`` is compiled on the
master and run by the minion without compiling; each minion's publish opens only with its own
session key; a template needing the host makes that minion compile for itself."""

from __future__ import annotations

import asyncio
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from briny.common import wire
from briny.common.state.compiler import StateCompiler
from briny.common.exceptions import WireError
from briny.common.transport import topic_for
from briny.minion.agent import MinionAgent

from .test_agent_pillar import Master, master_opts
from .test_agent_support import Running, minion_opts, run


def tree(root: Path, out: Path) -> None:
    files = {
        "top.sls": "base:\n  '*':\n    - common\n  'color:blue':\n    - match: grain\n    - blue\n",
        "common.sls": f"""\
            motd:
              file.managed:
                - name: {out}/motd-{{{{ grains['id'] }}}}
                - source: salt://motd.j2
                - template: jinja
            """,
        "blue.sls": "sky:\n  test.succeed_without_changes:\n    - name: {{ grains['color'] }} {{ pillar['size'] }}\n",
        "motd.j2": "hello {{ grains['id'] }} size {{ pillar['size'] }}\n",
        "hostly.sls": "hi:\n  test.succeed_without_changes:\n    - name: {{ salt['cmd.run']('echo hi') }}\n",
    }
    for rel, text in files.items():
        (root / rel).write_text(textwrap.dedent(text))


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The thread name of every StateCompiler run (master: briny-master*, minion jobs: job-*)."""
    seen: list[str] = []
    for name in ("for_highstate", "for_sls"):
        original = getattr(StateCompiler, name)

        def spy(self: Any, *a: Any, _original: Any = original, **kw: Any) -> Any:
            seen.append(threading.current_thread().name)
            return _original(self, *a, **kw)

        monkeypatch.setattr(StateCompiler, name, spy)
    return seen


def test_a_compiled_state_apply_runs_without_compiling_on_the_minion(tmp_path, compiles):
    mopts = master_opts(tmp_path / "master")
    states, out = tmp_path / "master" / "salt", tmp_path / "out"
    states.mkdir()
    out.mkdir()
    tree(states, out)
    mopts["file_roots"] = {"base": [str(states)]}

    async def main() -> dict[str, Any]:
        master = Master(mopts).start()
        frames: list[tuple[bytes, bytes]] = []
        publish = master.hub.server.publish

        async def recording(topic: bytes, frame: bytes) -> None:
            frames.append((topic, frame))
            await publish(topic, frame)

        master.hub.server.publish = recording  # type: ignore[method-assign]
        agents = {
            mid: MinionAgent(
                minion_opts(tmp_path / mid, mid, file_client="remote"),
                master.hub.client,
                grains={"id": mid, "color": color},
                event_bus=False,
            )
            for mid, color in (("m1", "blue"), ("m2", "red"))
        }
        got: dict[str, Any] = {}
        try:
            async with Running(agents["m1"]), Running(agents["m2"]):
                for mid, agent in agents.items():
                    await asyncio.wait_for(agent.connected.wait(), 10)
                    await master.wait_grains(mid)
                for mid in agents:
                    got[mid] = await master.call(mid, "state.apply")
                got["minion_compiles"] = [n for n in compiles if not n.startswith("briny-master")]
                got["again"] = await master.call("m1", "state.apply", "test=True")
                got["hostly"] = await master.call("m1", "state.sls", "hostly")
                got["compiles_after"] = [n for n in compiles if not n.startswith("briny-master")]
                got["keys"] = {mid: a.session.key for mid, a in agents.items() if a.session}
                got["frames"] = frames
                got["renders"] = master.server.publisher.compiler.renders
        finally:
            await master.stop()
        return got

    got = run(main())
    m1 = got["m1"]
    assert {r["__id__"] for r in m1.values()} == {"motd", "sky"}
    assert all(r["result"] is True for r in m1.values())
    assert {r["__id__"] for r in got["m2"].values()} == {"motd"}
    assert (out / "motd-m1").read_text() == "hello m1 size 1\n"
    assert (out / "motd-m2").read_text() == "hello m2 size 1\n"
    sky = next(r for r in m1.values() if r["__id__"] == "sky")
    assert sky["name"] == "blue 1"
    assert got["minion_compiles"] == []  # the minions ran the master's chunks
    assert all(r["result"] is True and not r["changes"] for r in got["again"].values())
    # the template calls cmd.run: the master falls back and m1 compiles for itself
    assert [r["name"] for r in got["hostly"].values()] == ["hi"]
    assert len(got["compiles_after"]) == 1 and got["compiles_after"][0].startswith("job-")

    # every state publish to m1 carries "compiled" and opens only with m1's session key
    keys = got["keys"]
    compiled_for_m1 = 0
    for topic, frame in got["frames"]:
        env = wire.decode(frame)
        owner = "m1" if topic == topic_for("m1") else "m2"
        assert env.id == owner
        with pytest.raises(WireError):
            wire.open_sealed(env, keys["m2" if owner == "m1" else "m1"])
        load = wire.open_sealed(env, keys[owner])
        if owner == "m1" and "compiled" in load:
            compiled_for_m1 += 1
            assert all(c["__id__"] in {"motd", "sky"} for c in load["compiled"]["chunks"])
    assert compiled_for_m1 == 2
