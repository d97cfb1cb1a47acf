"""The minion agent against a raw master over MemoryHub: auth, pinning, publishes, jobs, returns."""

from __future__ import annotations

import asyncio
import os
import stat

import msgpack
import pytest

from briny.common import crypto, wire
from briny.common.exceptions import ConfigError
from briny.common.transport import MemoryHub, topic_for
from briny.minion.agent import MinionAgent

from tests.waiting import until

from .test_agent_support import RawMaster, Running, ed_key, held_job, minion_opts, record_pauses, rsa_key, run


def make(tmp_path, hub: MemoryHub, **extra) -> MinionAgent:
    return MinionAgent(minion_opts(tmp_path, **extra), hub.client, event_bus=False)


# -- auth and trust ------------------------------------------------------------------------------


def test_first_start_makes_keys_authenticates_pins_and_sends_grains(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        agent = MinionAgent(
            minion_opts(tmp_path, premade_key=False), hub.client, grains={"os": "Debian"}, event_bus=False
        )
        async with Running(agent):
            await asyncio.wait_for(agent.connected.wait(), 5)
            grains = await master.wait_for(lambda r: r["cmd"] == "grains")
        await master.stop()
        return grains

    grains = run(main())
    assert grains["grains"] == {"os": "Debian"}
    pem = tmp_path / "pki" / "minion.pem"
    assert stat.S_IMODE(pem.stat().st_mode) == 0o600
    assert "PUBLIC KEY" in (tmp_path / "pki" / "minion.pub").read_text()
    pinned = (tmp_path / "pki" / "minion_master.pub").read_text()
    assert pinned == crypto.public_pem(rsa_key("master"))


def test_pending_waits_then_connects_once_accepted(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub, status="pending").start()
        async with Running(make(tmp_path, hub)) as agent:
            await master.wait_auths(3)
            assert agent.status == "pending" and agent.session is None
            assert not (tmp_path / "pki" / "minion_master.pub").exists()
            assert master.requests == []
            master.status = "accepted"
            await asyncio.wait_for(agent.connected.wait(), 5)
            jid = await master.publish("m1", "test.ping")
            ret = await master.wait_ret(jid)
        await master.stop()
        return ret

    assert run(main())["return"] is True


def test_rejected_runs_nothing_and_retries_slowly(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub, status="rejected").start()
        agent = make(tmp_path, hub)
        pauses = record_pauses(agent, wait=True)
        async with Running(agent):
            await until(lambda: pauses, 5, "the minion to pause after the rejection")
            status, session, auths = agent.status, agent.session, len(master.auths)
        await master.stop()
        return master, pauses, status, session, auths

    master, pauses, status, session, auths = run(main())
    assert status == "rejected" and session is None and auths == 1
    assert pauses == [max(0.1, 200 / 1000) * 3]  # next try after max(acceptance_wait, recon_max) * 3
    assert master.requests == []


def test_a_second_master_with_another_key_is_refused(tmp_path):
    async def main():
        hub = MemoryHub()
        first = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
        await first.stop()
        hub2 = MemoryHub()
        impostor = RawMaster(hub2, key="impostor").start()
        async with Running(make(tmp_path, hub2)) as agent:
            await impostor.wait_hellos(2)
            assert agent.session is None and agent.status == "refused"
        await impostor.stop()
        return impostor

    impostor = run(main())
    # its challenges were refused before anything was signed for it; nothing else reached it
    assert impostor.auths == [] and impostor.requests == []
    assert (tmp_path / "pki" / "minion_master.pub").read_text() == crypto.public_pem(rsa_key("master"))


def test_master_finger_mismatch_is_refused_and_a_match_accepted(tmp_path):
    finger = crypto.fingerprint(crypto.public_pem(rsa_key("master")))

    async def main(wanted, match):
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub, master_finger=wanted)) as agent:
            if match:
                await asyncio.wait_for(agent.connected.wait(), 5)
            else:
                await master.wait_hellos(2)
            status = agent.status
        await master.stop()
        return status, len(master.auths)

    # refused at the challenge: nothing is signed for a master with another key
    assert run(main("ab:" * 31 + "ab", False)) == ("refused", 0)
    assert not (tmp_path / "pki" / "minion_master.pub").exists()
    assert run(main(finger.upper(), True)) == ("accepted", 1)


def test_master_finger_is_compared_with_the_hash_type_fingerprint(tmp_path):
    """Salt's `hash_type` picks the fingerprint's hash (md5 here); one briny lacks is a config
    error at start, not a master refused for ever."""
    md5 = crypto.fingerprint(crypto.public_pem(rsa_key("master")), "md5")
    assert len(md5.split(":")) == 16
    with pytest.raises(ConfigError, match="hash_type 'crc32'"):
        make(tmp_path, MemoryHub(), master_finger=md5, hash_type="crc32")

    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub, master_finger=md5, hash_type="md5")) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
        await master.stop()

    run(main())


def test_a_reply_with_a_bad_signature_or_token_is_refused(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        honest = master._auth

        def tampered(env):
            frame = wire.decode(honest(env))
            body = wire.clear_payload(frame)
            if body["status"] == "challenge":
                return frame.encode()
            body["token"] = os.urandom(32)
            return wire.clear("auth_reply", env.id, body).encode()

        master._auth = tampered
        async with Running(make(tmp_path, hub)) as agent:
            await master.wait_auths(2)
            assert agent.session is None and agent.status == "refused"
        await master.stop()

    run(main())


# -- publishes and jobs ----------------------------------------------------------------------------


def test_jobs_run_and_return_with_retcode_and_success(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            ping = await master.publish("m1", "test.ping")
            args = await master.publish("m1", "test.arg", [1, "a=b"], {"x": {"y": 2}})
            code = await master.publish("m1", "test.retcode", [3])
            missing = await master.publish("m1", "nosuch.fun")
            boom = await master.publish("m1", "test.exception", ["kaput"])
            rets = [await master.wait_ret(j) for j in (ping, args, code, missing, boom)]
        await master.stop()
        return rets

    ping, args, code, missing, boom = run(main())
    assert ping["return"] is True and ping["retcode"] == 0 and ping["success"] is True
    assert ping["fun"] == "test.ping" and ping["fun_args"] == []
    assert args["return"]["args"] == [1]
    assert args["return"]["kwargs"]["a"] == "b" and args["return"]["kwargs"]["x"] == {"y": 2}
    assert args["return"]["kwargs"]["__pub_jid"] == args["jid"]
    assert args["fun_args"] == [1, "a=b", {"x": {"y": 2}, "__kwarg__": True}]
    assert code["retcode"] == 3 and code["success"] is False
    assert missing["return"] == "'nosuch.fun' is not available." and missing["success"] is False
    assert missing["retcode"] == 1
    assert boom["success"] is False and "kaput" in boom["return"]


def test_two_jobs_run_at_once(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"

    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            # each job starts, then waits for the other to have started: one after the other, the
            # first would wait in vain (20 s) and fail
            jids = [
                await master.publish("m1", "cmd.run", [f"touch {mine} && " + held_job(other)[0]])
                for mine, other in ((first, second), (second, first))
            ]
            rets = [await master.wait_ret(jid, timeout=25) for jid in jids]
        await master.stop()
        return rets

    assert [(r["return"], r["retcode"]) for r in run(main())] == [("done", 0), ("done", 0)]


def test_forged_foreign_garbage_stale_and_replayed_publishes_are_dropped(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            key = master.sessions["m1"]
            load = {"jid": "20990101000000000001", "fun": "test.ping", "arg": [], "kwarg": {}}
            bad = [
                master.pub_frame("m1", load, sign_key=ed_key("forger")),  # forged
                master.pub_frame("m1", load, key=os.urandom(32)),  # sealed with another key
                master.pub_frame("m2", load, key=os.urandom(32)),  # for another minion
                master.pub_frame("m1", load, ts=1.0),  # stale
                os.urandom(64),  # garbage
                msgpack.packb({"v": 1, "k": "pub"})[:-2],  # truncated msgpack
                msgpack.packb([1, 2, 3]),  # not a map
                wire.sealed("req", "m1", key, load).encode(),  # not a publish
                master.pub_frame("m1", {"jid": "../../etc", "fun": "test.ping"}),  # bad jid
                master.pub_frame("m1", ["not", "a", "map"]),  # bad load
            ]
            for frame in bad:
                await master.raw_publish("m1", frame)
            await master.raw_publish("m1", master.pub_frame("m1", load), topic=topic_for("m2"))
            good = master.pub_frame("m1", load)
            await master.raw_publish("m1", good)
            await master.raw_publish("m1", good)  # replayed
            ret = await master.wait_ret(load["jid"])
            # still serving
            after = await master.publish("m1", "test.echo", ["still here"])
            after_ret = await master.wait_ret(after)
            assert agent.auth_count == 1
        await master.idle()  # the minion stopped after its jobs: every return it sent is counted
        await master.stop()
        return master, ret, after_ret

    master, ret, after_ret = run(main())
    assert ret["return"] is True
    assert len(master.rets("20990101000000000001")) == 1
    assert after_ret["return"] == "still here"
    assert [r["cmd"] for r in master.requests if r["cmd"] == "ret"] == ["ret", "ret"]


def test_fire_event_during_a_state_job_reaches_the_master(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            jid = await master.publish(
                "m1", "state.single", ["test.succeed_with_changes", "thing"], {"fire_event": True}
            )
            event = await master.wait_for(lambda r: r["cmd"] == "event" and r["tag"].startswith("salt/state_result/"))
            ret = await master.wait_ret(jid)
        await master.stop()
        return jid, event, ret

    jid, event, ret = run(main())
    assert event["tag"] == f"salt/state_result/{jid}/m1/thing"
    assert event["jid"] == jid and set(event["data"]) == {"ret"}  # the master wraps it: data['data']['ret']
    assert event["data"]["ret"]["result"] is True
    assert ret["success"] is True and ret["out"] == "highstate"


def test_find_job_and_running_see_a_running_job(tmp_path):
    flag = tmp_path / "go"

    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub)) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            slow = await master.publish("m1", "cmd.run", held_job(flag))
            await until(lambda: agent.registry.get(slow), 5, "the job to start")
            found = await master.wait_ret(await master.publish("m1", "saltutil.find_job", [slow]))
            listed = await master.wait_ret(await master.publish("m1", "saltutil.running"))
            flag.touch()
            await master.wait_ret(slow)
            gone = await master.wait_ret(await master.publish("m1", "saltutil.find_job", [slow]))
        await master.stop()
        return slow, found, listed, gone

    slow, found, listed, gone = run(main())
    assert found["return"]["jid"] == slow and found["return"]["fun"] == "cmd.run"
    assert found["return"]["arg"] == held_job(flag) and found["return"]["pid"] == os.getpid()
    assert [j["jid"] for j in listed["return"]] == [slow]
    assert gone["return"] == {}


def test_stop_lets_running_jobs_finish_and_return(tmp_path):
    flag = tmp_path / "go"

    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        agent = make(tmp_path, hub)
        runner = Running(agent)
        await runner.__aenter__()
        await asyncio.wait_for(agent.connected.wait(), 5)
        jid = await master.publish("m1", "cmd.run", held_job(flag))
        await until(lambda: agent.registry.get(jid), 5, "the job to start")
        stopping = asyncio.ensure_future(runner.__aexit__())  # stop: waits for the job, sends its return
        await asyncio.sleep(0)  # one loop turn: the agent is told to stop
        late = await master.publish("m1", "test.ping")
        flag.touch()  # only now can the job end
        await stopping
        await master.idle()
        await master.stop()
        return master, jid, late

    master, jid, late = run(main())
    assert master.rets(jid) and master.rets(jid)[0]["return"] == "done"
    assert master.rets(late) == []  # published after the stop: not taken
    assert not list((tmp_path / "cache" / "proc").glob("*"))  # none written, or removed


def test_an_idle_minion_does_not_import_jinja_or_the_compiler():
    import subprocess
    import sys

    code = (
        "import sys, briny.minion.daemon, briny.minion.agent, briny.minion.host.grains\n"
        "heavy = ('jinja2', 'briny.common.state.compiler', 'briny.common.state.engine', 'briny.common.pillar',\n"
        "         'briny.common.state.render', 'ctypes')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "[]", out.stderr


def test_with_a_master_pillar_is_asked_for_once_and_the_config_pillar_is_the_fallback(tmp_path):
    async def main():
        hub = MemoryHub()
        master = RawMaster(hub).start()
        async with Running(make(tmp_path, hub, file_client="remote", pillar={"role": "web"})) as agent:
            await asyncio.wait_for(agent.connected.wait(), 5)
            first = await master.wait_ret(await master.publish("m1", "pillar.get", ["role"]))
            second = await master.wait_ret(await master.publish("m1", "pillar.get", ["role"]))
            asked = [r for r in master.requests if r["cmd"] == "pillar"]
        await master.stop()
        return first, second, asked

    first, second, asked = run(main())
    assert first["return"] == "web" and second["return"] == "web"
    assert len(asked) == 1  # kept until saltutil.refresh_pillar
