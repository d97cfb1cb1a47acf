#!/usr/bin/env python3
"""The master's cost per auth, and its memory under a flood of auth hellos (issue 11, items 3-4).

Starts one real ``briny-master`` on 127.0.0.1 (no minion daemons) with
``K`` minion keys already accepted, then drives the auth handshake from
this process over ZeroMQ (one DEALER per concurrent client), so the
client's RSA work is not counted against the master:

- **cost**: ``N`` accepted auths, ``C`` in flight at once; the master's
  CPU time (utime + stime from ``/proc/<pid>/stat``) over the run, minus
  its idle CPU over the same wall time (measured first), divided by ``N``
  = CPU ms per auth; wall-clock auths/s; and what that gives for issue
  13's 5,000 minions on this machine (``5000 × cost / cores``);
- **flood**: three rounds of ``H`` auth hellos (the first step of the
  handshake, which anyone can send) from one socket, and the master's PSS
  after each: the first round raises it once (socket queues, the
  allocator's high-water mark), the next ones must not (the challenges are
  a fixed ring); then ``20`` real auths must still pass.

Run: ``.venv/bin/python bench/auth.py [--auths N] [--clients C] [--keys K] [--hellos H]``
(defaults 2000, 16, 20, 200000). Prints the figures; exits 2 when the
master did not come up or an auth was not accepted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import zmq
import zmq.asyncio

from briny.common import crypto, handshake, wire
from tests.e2e.support import Fleet, FleetError, pss_kb

TICKS = os.sysconf("SC_CLK_TCK")
FLEET_TARGET = 5000  # issue 13: minions that must authenticate within 60 s on 2 cores


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (all its threads), in seconds."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


class Client:
    """One DEALER on the master's ret port: requests matched by correlation id."""

    def __init__(self, ctx: zmq.asyncio.Context, port: int) -> None:
        self.sock = ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.LINGER, 0)
        self.sock.connect(f"tcp://127.0.0.1:{port}")

    async def ask(self, frame: bytes, timeout: float = 30.0) -> bytes:
        corr = os.urandom(8)
        await self.sock.send_multipart([corr, frame])
        while True:
            parts = await asyncio.wait_for(self.sock.recv_multipart(), timeout)
            if len(parts) == 2 and parts[0] == corr:
                return parts[1]

    async def auth(self, minion_id: str, key: crypto.RSAPrivate, pub: str) -> str:
        """One full handshake (hello, challenge, signed auth); the status the master answered."""
        token = os.urandom(handshake.TOKEN_BYTES)
        offer = handshake.read_challenge(
            wire.decode(await self.ask(handshake.hello(minion_id, token))), minion_id, token
        )
        frame = handshake.auth_request(
            minion_id, key, pub, token, offer.challenge, crypto.fingerprint(offer.master_pub)
        )
        reply = handshake.read_auth_reply(wire.decode(await self.ask(frame)), minion_id, token, offer.challenge)
        return reply.status


async def run_auths(
    port: int, ids: list[str], keys: list[crypto.RSAPrivate], total: int, clients: int
) -> tuple[float, int]:
    """``total`` handshakes, ``clients`` at a time; (wall seconds, accepted count)."""
    ctx = zmq.asyncio.Context()
    pubs = [crypto.public_pem(k) for k in keys]
    counter = iter(range(total))
    accepted = 0

    async def worker(index: int) -> None:
        nonlocal accepted
        client = Client(ctx, port)
        try:
            for n in counter:
                i = (n + index) % len(ids)
                if await client.auth(ids[i], keys[i], pubs[i]) == "accepted":
                    accepted += 1
        finally:
            client.sock.close()

    start = time.monotonic()
    await asyncio.gather(*(worker(i) for i in range(clients)))
    wall = time.monotonic() - start
    ctx.term()
    return wall, accepted


async def flood(port: int, hellos: int, window: int = 512) -> float:
    """Send ``hellos`` auth hellos, ``window`` of them in flight at once (as fast as the master
    answers, without piling them up in its socket queue), reading the answers; seconds."""
    ctx = zmq.asyncio.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.setsockopt(zmq.SNDHWM, 0)
    sock.setsockopt(zmq.RCVHWM, 0)
    sock.connect(f"tcp://127.0.0.1:{port}")
    frame = handshake.hello("flood", os.urandom(handshake.TOKEN_BYTES))
    start = time.monotonic()
    got = 0

    async def reader() -> None:
        nonlocal got
        while got < hellos:
            await asyncio.wait_for(sock.recv_multipart(), 30)
            got += 1

    task = asyncio.ensure_future(reader())
    for i in range(hellos):
        while i - got >= window:
            await asyncio.sleep(0.001)
        await sock.send_multipart([i.to_bytes(8, "big"), frame])
    await task
    elapsed = time.monotonic() - start
    sock.close()
    ctx.term()
    return elapsed


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--auths", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--keys", type=int, default=20)
    parser.add_argument("--hellos", type=int, default=200000)
    ns = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="bauth", dir="/tmp"))
    ids = [f"b{i}" for i in range(ns.keys)]
    keys = [crypto.generate_rsa() for _ in ids]
    fleet = Fleet(root, [], log_level="warning")
    try:
        accepted_dir = fleet.master_dir / "pki" / "minions"
        accepted_dir.mkdir(parents=True, exist_ok=True)
        for minion_id, key in zip(ids, keys):
            (accepted_dir / minion_id).write_text(crypto.public_pem(key))
        fleet.start_master()
        pid = fleet.master.pid
        time.sleep(1.0)
        idle_start, idle_cpu = time.monotonic(), cpu_seconds(pid)
        time.sleep(3.0)
        idle_rate = (cpu_seconds(pid) - idle_cpu) / (time.monotonic() - idle_start)
        asyncio.run(run_auths(fleet.ret_port, ids, keys, 50, 4))  # warm-up
        before = cpu_seconds(pid)
        wall, accepted = asyncio.run(run_auths(fleet.ret_port, ids, keys, ns.auths, ns.clients))
        used = cpu_seconds(pid) - before - idle_rate * wall
        if accepted != ns.auths:
            print(f"only {accepted} of {ns.auths} auths were accepted", file=sys.stderr)
            return 2
        per_auth = used / ns.auths
        cores = len(os.sched_getaffinity(0))
        print(
            f"auth cost: {ns.auths} accepted auths ({ns.clients} in flight, {ns.keys} keys) in "
            f"{wall:.2f} s = {ns.auths / wall:.0f} auths/s wall; master CPU {used:.2f} s = "
            f"{per_auth * 1000:.2f} ms per auth (idle {idle_rate * 1000:.1f} ms/s subtracted)"
        )
        print(
            f"  {FLEET_TARGET} minions at that cost on {cores} cores: "
            f"{FLEET_TARGET * per_auth / cores:.1f} s of master CPU (target: within 60 s)"
        )
        if ns.hellos:
            pss = [pss_kb(pid)]
            for round_ in (1, 2, 3):
                took = asyncio.run(flood(fleet.ret_port, ns.hellos))
                pss.append(pss_kb(pid))
                print(
                    f"hello flood {round_}: {ns.hellos} hellos in {took:.2f} s ({ns.hellos / took:.0f}/s); "
                    f"master PSS {pss[-2] / 1024:.1f} MB -> {pss[-1] / 1024:.1f} MB "
                    f"({(pss[-1] - pss[-2]) / 1024:+.1f} MB)"
                )
            _, accepted2 = asyncio.run(run_auths(fleet.ret_port, ids, keys, 20, 2))
            print(f"  after the floods: {accepted2} of 20 auths accepted")
    except FleetError as exc:
        print(f"the master did not come up: {exc}", file=sys.stderr)
        return 2
    finally:
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
