"""Multi-master in the agent (two raw masters over two MemoryHubs) and the ``master`` list itself."""

from __future__ import annotations

import asyncio
import logging

import pytest

from briny.common import crypto
from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.event import EventSender
from briny.common.exceptions import ConfigError
from briny.common.transport import MemoryHub
from briny.minion.agent import MinionAgent
from briny.minion.masters import (
    FAILOVER,
    HOT,
    MasterAddress,
    alive_interval,
    failback_interval,
    master_addresses,
    master_mode,
    pin_path,
)

from .test_agent_support import RawMaster, Running, fire_until_heard, minion_opts, rsa_key, run, short_root  # noqa: F401 - a fixture


def two(tmp_path, bus: bool = False, **extra) -> tuple[MinionAgent, RawMaster, RawMaster]:
    one, other = MemoryHub(), MemoryHub()
    a, b = RawMaster(one, key="m-a"), RawMaster(other, key="m-b")
    opts = minion_opts(tmp_path, **extra)
    agent = MinionAgent(opts, {"a:4506": one.client, "b:4506": other.client}, event_bus=bus)
    return agent, a, b


async def told(*masters: RawMaster) -> None:
    """Until each of ``masters`` has a session with the minion (it was sent the grains)."""
    for master in masters:
        await master.wait_for(lambda r: r["cmd"] == "grains")


def load(jid: str) -> dict:
    return {"jid": jid, "fun": "test.echo", "arg": [jid], "kwarg": {}, "tgt": "m1", "tgt_type": "glob", "user": "root"}


# -- hot-hot -----------------------------------------------------------------------------------------


def test_hot_serves_both_masters_and_returns_each_job_to_its_publisher(tmp_path):
    async def main():
        agent, a, b = two(tmp_path)
        a.start(), b.start()
        async with Running(agent):
            await told(a, b)  # each master hears of the minion
            jid_a = await a.publish("m1", "test.echo", ["from-a"])
            jid_b = await b.publish("m1", "test.echo", ["from-b"])
            ret_a, ret_b = await a.wait_ret(jid_a), await b.wait_ret(jid_b)
            await a.idle(), await b.idle()
            crossed = a.rets(jid_b) + b.rets(jid_a)
        await a.stop(), await b.stop()
        return ret_a, ret_b, crossed, agent.auth_count

    ret_a, ret_b, crossed, auths = run(main())
    assert (ret_a["return"], ret_b["return"]) == ("from-a", "from-b")
    assert crossed == []
    assert auths == 2
    pki = tmp_path / "pki"
    assert (pki / "minion_master_a_4506.pub").read_text() == crypto.public_pem(rsa_key("m-a"))
    assert (pki / "minion_master_b_4506.pub").read_text() == crypto.public_pem(rsa_key("m-b"))
    assert not (pki / "minion_master.pub").exists()


def test_the_same_jid_from_both_masters_runs_once(tmp_path):
    async def main():
        agent, a, b = two(tmp_path)
        a.start(), b.start()
        async with Running(agent):
            await told(a, b)
            jid = "20261124050000000001"
            await a.raw_publish("m1", a.pub_frame("m1", load(jid)))
            await a.wait_ret(jid)
            await b.raw_publish("m1", b.pub_frame("m1", load(jid)))
            later = await b.publish("m1", "test.echo", ["later"])  # b's publishes are read in order
            await b.wait_ret(later)
            await a.idle()
            return len(a.rets(jid)), len(b.rets(jid))

    assert run(main()) == (1, 0)


def test_local_bus_events_reach_every_master(short_root):  # noqa: F811 - the imported fixture
    async def main():
        agent, a, b = two(short_root, bus=True)
        a.start(), b.start()
        async with Running(agent):
            await told(a, b)
            loop = asyncio.get_running_loop()
            sender = EventSender(agent.opts)
            await fire_until_heard(sender, b)
            await loop.run_in_executor(None, sender.fire, "custom/thing", {"x": 1})
            got = [await m.wait_for(lambda r: r["cmd"] == "event" and r["tag"] == "custom/thing") for m in (a, b)]
            sender.close()
        await a.stop(), await b.stop()
        return got

    assert [e["data"]["x"] for e in run(main())] == [1, 1]


def test_an_unreachable_master_does_not_hold_up_the_other(tmp_path, caplog):
    async def main():
        agent, a, b = two(tmp_path)
        b.start()  # a never answers
        async with Running(agent):
            await asyncio.wait_for(agent.connected.wait(), 5)
            jid = await b.publish("m1", "test.echo", ["still"])
            ret = await b.wait_ret(jid)
            await asyncio.wait_for(_status(agent, 0, "no_reply"), 5)  # and it keeps asking a
        await b.stop()
        return ret

    with caplog.at_level(logging.INFO, logger="briny.minion.auth"):
        assert run(main())["return"] == "still"
    assert "a:4506 did not answer the auth request" in caplog.text


def test_a_shared_pin_from_salt_is_checked_for_a_master_without_its_own(tmp_path):
    """A minion moved over from Salt has one ``minion_master.pub`` (Salt's masters share a key
    pair): a master with another key is refused, the one with that key is served."""
    (tmp_path / "pki").mkdir()
    (tmp_path / "pki" / "minion_master.pub").write_text(crypto.public_pem(rsa_key("m-a")))

    async def main():
        agent, a, b = two(tmp_path)
        a.start(), b.start()
        async with Running(agent):
            jid = await asyncio.wait_for(_published_after_connect(agent, a), 5)
            await a.wait_ret(jid)
            await b.wait_hellos(2)  # asked again, refused again
            status = agent.links[1].status
        await a.stop(), await b.stop()
        return status, b.auths

    status, b_auths = run(main())
    assert status == "refused" and b_auths == []  # the minion signed nothing for the wrong key
    assert (tmp_path / "pki" / "minion_master_a_4506.pub").exists()
    assert not (tmp_path / "pki" / "minion_master_b_4506.pub").exists()


async def _status(agent: MinionAgent, index: int, status: str) -> None:
    while agent.links[index].status != status:
        await asyncio.sleep(0.02)


async def _published_after_connect(agent: MinionAgent, master: RawMaster) -> str:
    await agent.connected.wait()
    await master.wait_for(lambda r: r["cmd"] == "grains")
    return await master.publish("m1", "test.echo", ["x"])


async def grains(master: RawMaster, count: int) -> None:
    """Until ``master`` was told this minion's grains ``count`` times (once per session)."""
    await master._wait_count(lambda: sum(r["cmd"] == "grains" for r in master.requests), count, "grains", 5)


# -- failover ------------------------------------------------------------------------------------------


def test_failover_serves_the_first_then_the_next_then_fails_back(tmp_path):
    async def main():
        agent, a, b = two(tmp_path, master_type="failover", master_alive_interval=0.2, master_failback=True)
        a.start(), b.start()
        async with Running(agent):
            await a.wait_for(lambda r: r["cmd"] == "grains")
            assert b.auths == [] and b.hellos == 0  # one master at a time, the first of the list
            await a.stop()  # the first master dies
            await b.wait_for(lambda r: r["cmd"] == "grains", timeout=5)
            jid = await b.publish("m1", "test.echo", ["on-b"])
            on_b = await b.wait_ret(jid)
            a.start()  # back: failback moves the minion to it again
            await grains(a, 2)
            jid = await a.publish("m1", "test.echo", ["on-a"])
            on_a = await a.wait_ret(jid)
        await a.stop(), await b.stop()
        return on_b, on_a

    on_b, on_a = run(main())
    assert (on_b["return"], on_a["return"]) == ("on-b", "on-a")


# -- the master list -------------------------------------------------------------------------------


def opts(**extra):
    return apply_config(extra, MINION_DEFAULTS, "test")


def test_master_addresses_read_hosts_and_salt_host_port_forms():
    got = master_addresses(opts(master=["m1", "m2:4516", "[::1]:4526", "fe80::1"], master_port=4506))
    assert got == [
        MasterAddress("m1", 4506, 4505),
        MasterAddress("m2", 4516, 4505),
        MasterAddress("::1", 4526, 4505),
        MasterAddress("fe80::1", 4506, 4505),
    ]
    assert [a.name for a in got] == ["m1:4506", "m2:4516", "[::1]:4526", "[fe80::1]:4506"]
    assert master_addresses(opts(master="salt")) == [MasterAddress("salt", 4506, 4505)]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([], "empty list"),
        (["m1", "m1:4506"], "same master twice"),
        (["m1", ""], "must be addresses"),
        (["m1:70000"], "1-65535"),
    ],
)
def test_bad_master_lists_are_refused_with_the_key_named(value, message):
    with pytest.raises(ConfigError, match=message):
        master_addresses(opts(master=value))


def test_a_master_list_of_non_strings_is_a_config_error():
    with pytest.raises(ConfigError, match="'master'"):
        opts(master=["m1", 4506])


def test_master_type_intervals_and_pins(tmp_path, caplog):
    assert master_mode(opts()) == HOT and master_mode(opts(master_type="failover")) == FAILOVER
    with caplog.at_level(logging.WARNING):
        assert master_mode(opts(master_type="distributed")) == HOT
    assert "master_type 'distributed' is not supported" in caplog.text
    assert alive_interval(opts(master_alive_interval=3)) == 3.0
    assert alive_interval(opts(ping_interval=7)) == 7.0  # 0 / unset: the heartbeat's
    assert failback_interval(opts(master_alive_interval=3)) is None
    assert failback_interval(opts(master_failback=True, master_alive_interval=3)) == 3.0
    assert failback_interval(opts(master_failback=True, master_failback_interval=9)) == 9.0
    with pytest.raises(ConfigError, match="master_alive_interval"):
        alive_interval(opts(master_alive_interval="soon"))
    assert pin_path(tmp_path, "m1:4506", False) == tmp_path / "minion_master.pub"
    assert pin_path(tmp_path, "[::1]:4506", True) == tmp_path / "minion_master____1__4506.pub"


# -- each master's publish port, from its auth ---------------------------------------------------


def subscribed_ports(tmp_path, a_ports: tuple[int, int], **extra) -> tuple[list[int | None], int, str]:
    """(the port each master's transport subscribes to once both served a job, the auths, the
    status of the first master) for masters naming (challenge, signed reply) ports ``a_ports``
    and 4520 / 4520."""

    async def main():
        agent, a, b = two(tmp_path, **extra)
        a.challenge_port, a.publish_port = a_ports
        b.publish_port = 4520
        a.start(), b.start()
        async with Running(agent):
            await told(b)
            jid_b = await b.publish("m1", "test.echo", ["from-b"])
            await b.wait_ret(jid_b)
            if a_ports[0] == a_ports[1]:
                await told(a)
                await a.wait_ret(await a.publish("m1", "test.echo", ["from-a"]))
            else:
                await _status(agent, 0, "refused")
            ports = [next(iter(hub.clients.values())).port if hub.clients else None for hub in (a.hub, b.hub)]
        await a.stop(), await b.stop()
        return ports, agent.auth_count, agent.links[0].status

    return run(main())


def test_each_master_names_its_publish_port_and_the_minion_subscribes_there(tmp_path):
    ports, auths, _ = subscribed_ports(tmp_path, (4510, 4510))
    assert ports == [4510, 4520] and auths == 2


def test_a_publish_port_of_the_minions_own_wins_over_the_masters(tmp_path):
    ports, auths, _ = subscribed_ports(tmp_path, (4510, 4510), publish_port=4600)
    assert ports == [None, None] and auths == 2  # never moved from the configured 4600


def test_a_challenge_port_the_signed_reply_does_not_confirm_refuses_the_auth(tmp_path, caplog):
    caplog.set_level(logging.ERROR, "briny.minion.auth")
    ports, auths, status = subscribed_ports(tmp_path, (4510, 4999))
    assert status == "refused" and auths == 1  # only the other master served
    assert "names another publish port than its challenge" in caplog.text
