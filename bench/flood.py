#!/usr/bin/env python3
"""A flood of a master's request port by peers without a key (issue 19): its memory, its log, its
minions.

Starts one real ``briny-master`` on 127.0.0.1 (``auto_accept``, ``log_level: warning``, the
limits of ``docs/PROTOCOL.md`` at their defaults unless given), authenticates one legitimate
minion from this process, then runs a flood from a second process for ``--seconds``:
``--reading`` connections that send auth frames as fast as the master takes them and read every
answer, and ``--deaf`` connections that send as fast and never read (ZeroMQ's receive queue of
one message and a 4 KiB kernel buffer: nothing is taken off the wire). Each connection cycles
through a hello for a good id (a challenge), a hello for a bad id (a refusal and its warning)
and a signed auth naming a challenge never issued (a refusal before any RSA); with ``--hellos``
only the first (the largest answer: a challenge carrying the master's key). Meanwhile:

- the legitimate minion pings every 100 ms (sealed ``ping``, 1 s timeout): **lost** pings and the
  slowest answer;
- every second a new minion id authenticates (hello, challenge, signed auth): the slowest join;
- the master's RSS (``VmRSS``) every 100 ms: **peak growth** over the baseline before the flood;
- the master's log file: bytes written during the flood, per second.

After the flood (its process exits, closing its connections) it waits ``--settle`` seconds and
reports the RSS then (**after**: the growth still held). Targets: peak growth < 50 MiB, after
within 10 MiB of the baseline, no ping lost. Exits 1 when one is missed.

Run: ``.venv/bin/python bench/flood.py [--reading 4] [--deaf 4] [--seconds 16] [--settle 12]
[--peer-rate N] [--send-hwm N] [--hellos]`` (``--peer-rate 1000000`` takes the per-connection rate limit
out of the way, so the deaf connections fill their reply queues: the queue bound alone).

**The publish port** (``--subscribers N``): a ``briny-swarm`` of ``--minions`` (20) minions
joins the master; then for ``--seconds`` the operator IPC publishes ``test.arg_type`` with a
``--payload``-byte argument (its return is a few bytes; ``--payload 0``: ``test.ping``) to all of
them, ``--rate`` jobs a second (each job one sealed publish per minion, ~``payload`` + 0.6 KiB),
while a second process holds N SUB connections to the
publish port that subscribe to everything (the empty prefix; ``--topic ID``: one minion's topic)
and never read (a receive queue of one message, a 4 KiB kernel buffer). Reports the master's
**peak RSS growth** over the baseline after the swarm joined (target < 50 MiB) and the returns
of every job in the job cache (**no job lost**: every minion returned every job).
``--pub-hwm N`` sets the master's ``pub_hwm`` (100000: the limit before it existed);
``--subscribers 0`` gives the same load without deaf subscribers, to compare.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import zmq
import zmq.asyncio

from briny.common import crypto, handshake, wire
from briny.common.transport import ZmqClient
from tests.e2e.support import Fleet, FleetError

MIB = 1024 * 1024


def rss_bytes(pid: int) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for {pid}")


# -- the flood (its own process) ------------------------------------------------------------


def _frames(hellos: bool) -> list[bytes]:
    pub = crypto.public_pem(crypto.generate_rsa())
    token = os.urandom(handshake.TOKEN_BYTES)
    forged = wire.clear(
        "auth", "forged", {"pub": pub, "token": token, "challenge": os.urandom(32), "sig": os.urandom(256), "ext": 1}
    ).encode()
    if hellos:
        return [handshake.hello("flooder", token)] * 3
    return [handshake.hello("flooder", token), handshake.hello("../bad", token), forged]


async def _flood(port: int, reading: int, deaf: int, seconds: float, hellos: bool, out: Any) -> None:
    ctx = zmq.asyncio.Context()
    frames = _frames(hellos)
    sent = [0] * (reading + deaf)
    got = [0] * reading
    end = time.monotonic() + seconds
    socks = []
    for i in range(reading + deaf):
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        if i >= reading:
            sock.setsockopt(zmq.RCVHWM, 1)
            sock.setsockopt(zmq.RCVBUF, 4096)
        sock.connect(f"tcp://127.0.0.1:{port}")
        socks.append(sock)

    async def send(i: int) -> None:
        n = 0
        while time.monotonic() < end:
            await socks[i].send_multipart([n.to_bytes(8, "big"), frames[n % 3]])
            n += 1
            sent[i] = n
            if n % 64 == 0:
                await asyncio.sleep(0)

    async def read(i: int) -> None:
        while True:
            await socks[i].recv_multipart()
            got[i] += 1

    readers = [asyncio.ensure_future(read(i)) for i in range(reading)]
    await asyncio.gather(*(send(i) for i in range(reading + deaf)))
    await asyncio.sleep(0.5)  # the last answers to the reading connections
    for task in readers:
        task.cancel()
    for sock in socks:
        sock.close()
    ctx.term()
    out.put({"sent_reading": sum(sent[:reading]), "sent_deaf": sum(sent[reading:]), "answers_read": sum(got)})


def flood_process(port: int, reading: int, deaf: int, seconds: float, hellos: bool, out: Any) -> None:
    asyncio.run(_flood(port, reading, deaf, seconds, hellos, out))


# -- the legitimate side (this process) -------------------------------------------------------


class Minion:
    """One legitimate identity: the handshake and sealed pings over a ZmqClient."""

    def __init__(self, client: ZmqClient, minion_id: str, key: crypto.RSAPrivate) -> None:
        self.client, self.id, self.key = client, minion_id, key
        self.session: bytes | None = None

    async def auth(self, timeout: float = 5.0) -> str:
        token = os.urandom(handshake.TOKEN_BYTES)
        raw = await self.client.request(handshake.hello(self.id, token), timeout)
        if raw is None:
            return "no_reply"
        offer = handshake.read_challenge(wire.decode(raw), self.id, token)
        frame = handshake.auth_request(
            self.id, self.key, crypto.public_pem(self.key), token, offer.challenge, crypto.fingerprint(offer.master_pub)
        )
        raw = await self.client.request(frame, timeout)
        if raw is None:
            return "no_reply"
        reply = handshake.read_auth_reply(wire.decode(raw), self.id, token, offer.challenge)
        if reply.status == "accepted":
            self.session = crypto.rsa_decrypt(self.key, reply.session_enc)
        return reply.status

    async def ping(self, timeout: float = 1.0) -> float | None:
        """Seconds to the answer, None when lost."""
        assert self.session is not None
        env = wire.sealed("req", self.id, self.session, {"cmd": "ping"})
        start = time.monotonic()
        raw = await self.client.request(env.encode(), timeout)
        if raw is None:
            return None
        wire.open_reply(wire.decode(raw), self.session, env.nonce)
        return time.monotonic() - start


async def legit(fleet: Fleet, pid: int, seconds: float, settle: float, ns: argparse.Namespace) -> dict[str, Any]:
    ctx = zmq.asyncio.Context()
    keys = [crypto.generate_rsa() for _ in range(int(seconds) + 2)]
    client = ZmqClient("127.0.0.1", fleet.ret_port, fleet.pub_port, ctx=ctx)
    pinger = Minion(client, "pinger", keys[0])
    assert await pinger.auth() == "accepted"
    for _ in range(20):
        assert await pinger.ping() is not None
    log_path = fleet.master_dir / "master.log"
    await asyncio.sleep(1.0)
    base = rss_bytes(pid)
    log_before = log_path.stat().st_size
    queue: Any = multiprocessing.Queue()
    proc = multiprocessing.Process(
        target=flood_process, args=(fleet.ret_port, ns.reading, ns.deaf, seconds, ns.hellos, queue), daemon=True
    )
    start = time.monotonic()
    proc.start()
    peak = base
    pings = lost = 0
    slowest = 0.0
    joins: list[float] = []
    join_fail = 0
    next_join = start + 1.0
    next_ping = start
    while proc.is_alive():
        now = time.monotonic()
        peak = max(peak, rss_bytes(pid))
        if now >= next_ping:
            next_ping = now + 0.1
            took = await pinger.ping()
            pings += 1
            if took is None:
                lost += 1
            else:
                slowest = max(slowest, took)
        if now >= next_join and len(joins) + join_fail + 1 < len(keys):
            next_join = now + 1.0
            new = ZmqClient("127.0.0.1", fleet.ret_port, fleet.pub_port, ctx=ctx)
            t0 = time.monotonic()
            status = await Minion(new, f"new{len(joins) + join_fail}", keys[len(joins) + join_fail + 1]).auth()
            new.close()
            if status == "accepted":
                joins.append(time.monotonic() - t0)
            else:
                join_fail += 1
        await asyncio.sleep(0.02)
    flood_end = time.monotonic()
    counts = queue.get(timeout=10)
    log_grew = log_path.stat().st_size - log_before
    while time.monotonic() - flood_end < settle:
        took = await pinger.ping()
        pings += 1
        lost += took is None
        await asyncio.sleep(0.2)
    after = rss_bytes(pid)
    client.close()
    ctx.term()
    return {
        **counts,
        "flood_s": flood_end - start,
        "base": base,
        "peak": peak,
        "after": after,
        "pings": pings,
        "lost": lost,
        "slowest": slowest,
        "joins": joins,
        "join_fail": join_fail,
        "log_bytes": log_grew,
    }


# -- deaf subscribers of the publish port ----------------------------------------------------


def deaf_subscribers_process(port: int, conns: int, seconds: float, topic: bytes, out: Any) -> None:
    """Hold ``conns`` SUB connections subscribed to ``topic`` that never read, for ``seconds``."""
    ctx = zmq.Context()
    socks = []
    for _ in range(conns):
        sock = ctx.socket(zmq.SUB)
        sock.setsockopt(zmq.LINGER, 0)
        sock.setsockopt(zmq.RCVHWM, 1)
        sock.setsockopt(zmq.RCVBUF, 4096)
        sock.setsockopt(zmq.SUBSCRIBE, topic)
        sock.connect(f"tcp://127.0.0.1:{port}")
        socks.append(sock)
    time.sleep(seconds)  # holding the connections open, reading nothing, is the whole point
    for sock in socks:
        sock.close()
    ctx.term()
    out.put(conns)


def publish_flood(ns: argparse.Namespace) -> int:
    from bench.swarm import family, swarm_config, wait_connected
    from briny.common.config import load_master_config
    from briny.common.exceptions import MasterNotRunning
    from briny.common.transport import topic_for
    from briny.master.jobcache import open_job_cache
    from tests.e2e.support import script

    root = Path(tempfile.mkdtemp(prefix="bpubflood", dir="/tmp"))
    extra: dict[str, Any] = {"ping_interval": 10, "timeout": 60}
    if ns.pub_hwm is not None:
        extra["pub_hwm"] = ns.pub_hwm
    fleet = Fleet(root, [], auto_accept=True, log_level="warning", master_opts=extra)
    swarm: subprocess.Popen[bytes] | None = None
    n = ns.minions
    try:
        conf = swarm_config(fleet, fleet.root)
        fleet.start_master(timeout=60)
        pid = fleet.master.pid
        with open(fleet.root / "swarm.console", "ab") as console:
            swarm = subprocess.Popen(
                [*script("briny-swarm"), "-c", str(conf), "-n", str(n)],
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=console,
            )
        wait_connected(fleet, n, 120)
        cache = open_job_cache(load_master_config(str(fleet.master_conf)), readonly=True)
        job = ("test.arg_type", "x" * ns.payload) if ns.payload else ("test.ping",)
        warm = fleet.publish("*", *job)
        fleet.wait(lambda: len(cache.get_returns(warm)) >= n, 60, "the warm-up job's returns", interval=0.1)
        time.sleep(2.0)  # the master settles after the swarm's joins
        base = peak = rss_bytes(pid)
        queue: Any = multiprocessing.Queue()
        topic = topic_for(ns.topic) if ns.topic else b""
        proc = multiprocessing.Process(
            target=deaf_subscribers_process,
            args=(fleet.pub_port, ns.subscribers, ns.seconds + 1.0, topic, queue),
            daemon=True,
        )
        proc.start()
        time.sleep(1.0)  # the deaf connections subscribe
        jids: list[str] = []
        unanswered = 0
        start = time.monotonic()
        while time.monotonic() - start < ns.seconds:
            due = start + (len(jids) + unanswered) / ns.rate
            if time.monotonic() >= due:
                try:
                    jids.append(fleet.publish("*", *job))
                except MasterNotRunning:  # a master too busy to answer the operator within 5 s
                    unanswered += 1  # its slot is skipped, not made up for
            peak = max(peak, rss_bytes(pid))
            time.sleep(0.002)
        while proc.is_alive():
            peak = max(peak, rss_bytes(pid))
            time.sleep(0.05)
        returns: dict[str, int] = {}

        def all_in() -> bool:
            for jid in jids:
                if returns.get(jid, 0) < n:
                    returns[jid] = len(cache.get_returns(jid))
            return all(returns[j] >= n for j in jids)

        try:
            fleet.wait(all_in, ns.settle + 60, "every job's returns", interval=0.5)
        except FleetError:
            pass  # counted below
        after = rss_bytes(pid)
        peak = max(peak, after)
        cache.close()
        swarm.terminate()
        try:
            swarm.wait(30)
        except subprocess.TimeoutExpired:
            pass  # killed below
    except FleetError as exc:
        print(f"the fleet did not come up: {exc}", file=sys.stderr)
        return 2
    finally:
        if swarm is not None and swarm.poll() is None:
            for child in family(swarm.pid)[1:]:
                os.kill(child, signal.SIGKILL)
            swarm.kill()
            swarm.wait(10)
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)
    lost = sum(n - returns.get(j, 0) for j in jids)
    grow = (peak - base) / MIB
    print(
        f"publish port: {ns.subscribers} deaf subscriber connections ({'topic ' + ns.topic if ns.topic else 'everything'}) "
        f"for {ns.seconds:.0f} s while {len(jids)} jobs ({job[0]}, {ns.payload}-byte argument) went to {n} minions "
        f"({len(jids) * n} publishes; master {'pub_hwm=' + str(ns.pub_hwm) if ns.pub_hwm is not None else 'defaults'})"
    )
    print(
        f"master RSS: {base / MIB:.1f} MiB before, peak {peak / MIB:.1f} MiB ({grow:+.1f} MiB), "
        f"{after / MIB:.1f} MiB after ({(after - base) / MIB:+.1f} MiB)"
    )
    print(
        f"returns: {len(jids) * n - lost} of {len(jids) * n}, {lost} lost; "
        f"{unanswered} publishes the operator IPC did not answer within 5 s"
    )
    ok = grow < 50 and lost == 0
    print("targets (peak < +50 MiB, no job lost):", "met" if ok else "MISSED")
    return 0 if ok else 1


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reading", type=int, default=4)
    parser.add_argument("--deaf", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=16.0)
    parser.add_argument("--settle", type=float, default=12.0)
    parser.add_argument("--peer-rate", type=float, default=None, help="the master's auth_peer_rate")
    parser.add_argument("--send-hwm", type=int, default=None, help="the master's ret_send_hwm")
    parser.add_argument("--hellos", action="store_true", help="good hellos only (the largest answers)")
    parser.add_argument("--subscribers", type=int, default=None, help="deaf SUB connections to the publish port")
    parser.add_argument("--minions", type=int, default=20, help="the swarm's minions (--subscribers)")
    parser.add_argument("--rate", type=float, default=50.0, help="jobs a second (--subscribers)")
    parser.add_argument("--payload", type=int, default=4096, help="bytes of each job's argument (--subscribers)")
    parser.add_argument("--topic", default="", help="the minion id the deaf subscribers subscribe to (default: all)")
    parser.add_argument("--pub-hwm", type=int, default=None, help="the master's pub_hwm")
    ns = parser.parse_args(argv)
    if ns.subscribers is not None:
        return publish_flood(ns)
    root = Path(tempfile.mkdtemp(prefix="bflood", dir="/tmp"))
    extra: dict[str, Any] = {}
    if ns.peer_rate is not None:
        extra["auth_peer_rate"] = ns.peer_rate
    if ns.send_hwm is not None:
        extra["ret_send_hwm"] = ns.send_hwm
    fleet = Fleet(root, [], auto_accept=True, log_level="warning", master_opts=extra)
    try:
        fleet.start_master()
        pid = fleet.master.pid
        r = asyncio.run(legit(fleet, pid, ns.seconds, ns.settle, ns))
    except FleetError as exc:
        print(f"the master did not come up: {exc}", file=sys.stderr)
        return 2
    finally:
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)
    grow, held = (r["peak"] - r["base"]) / MIB, (r["after"] - r["base"]) / MIB
    print(
        f"flood: {ns.reading} reading + {ns.deaf} deaf connections for {r['flood_s']:.1f} s "
        f"(master {' '.join(f'{k}={v}' for k, v in extra.items()) or 'defaults'}"
        f"{', hellos only' if ns.hellos else ''}): "
        f"{r['sent_reading']} frames sent by the reading ones ({r['answers_read']} answered), "
        f"{r['sent_deaf']} by the deaf ones"
    )
    print(
        f"master RSS: {r['base'] / MIB:.1f} MiB before, peak {r['peak'] / MIB:.1f} MiB ({grow:+.1f} MiB), "
        f"{r['after'] / MIB:.1f} MiB {ns.settle:.0f} s after ({held:+.1f} MiB)"
    )
    print(
        f"legitimate: {r['pings']} pings, {r['lost']} lost, slowest {r['slowest'] * 1000:.0f} ms; "
        f"{len(r['joins'])} new minions joined (slowest {max(r['joins'], default=0) * 1000:.0f} ms), "
        f"{r['join_fail']} failed"
    )
    print(f"master log: {r['log_bytes']} bytes during the flood ({r['log_bytes'] / r['flood_s']:.0f} bytes/s)")
    ok = grow < 50 and held < 10 and r["lost"] == 0 and r["join_fail"] == 0
    print("targets (peak < +50 MiB, after < +10 MiB, no ping lost, every join):", "met" if ok else "MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
