#!/usr/bin/env python3
"""briny-api against Salt's salt-api (rest_cherrypy), end to end, in one run.

usage: bench/api_vs_salt.py [--salt /tmp/saltref/bin] [--concurrency 8] [--events 5000]

Starts the reference Salt (salt-master, salt-minion m1, salt-api: dev/api_golden.py's
Reference) and a briny master, minion m1 and briny-api (tests/e2e/apisupport.py) on 127.0.0.1,
the same external_auth file users, and measures for each, with ``--concurrency`` requests in
flight (aiohttp client, keep-alive):

- ``GET /`` requests/s (the HTTP stack alone);
- ``POST /`` ``runner test.arg`` requests/s (token check, ACL, a runner);
- ``POST /`` ``local test.ping`` on m1 requests/s (a whole job: publish, return, answer);
- ``/events`` events/s: one stream open, ``--events`` events fired on the master bus by a local
  process (Salt's own event API for Salt, briny's EventSender for briny), timed from the first
  fire to the last event read from the stream, and how many arrived.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dev.api_golden import Reference
from tests.e2e.apisupport import api_fleet, login, start_api


async def rate(port: int, token: str, method: str, body: Any, total: int, concurrency: int) -> float:
    import aiohttp

    headers = {"X-Auth-Token": token, "Accept": "application/json"}
    left = total
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as session:

        async def worker() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                async with session.request(method, f"http://127.0.0.1:{port}/", json=body, headers=headers) as r:
                    assert r.status == 200, (r.status, await r.text())
                    await r.read()

        start = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return total / (time.perf_counter() - start)


async def events_rate(port: int, token: str, fire: list[str], count: int) -> tuple[float, int]:
    import aiohttp

    async with aiohttp.ClientSession() as session:
        async with session.get(f"http://127.0.0.1:{port}/events", headers={"X-Auth-Token": token},
                               timeout=aiohttp.ClientTimeout(total=300)) as r:  # fmt: skip
            await r.content.readline()
            proc = await asyncio.create_subprocess_exec(*fire)
            start = time.perf_counter()
            seen = 0
            last = f"bench/api/{count - 1}"
            try:
                while True:
                    line = await asyncio.wait_for(r.content.readline(), 30)
                    if line.startswith(b"tag: bench/api/"):
                        seen += 1
                        if line.strip().decode()[5:] == last:
                            break
            except TimeoutError:
                pass
            elapsed = time.perf_counter() - start
            await asyncio.wait_for(proc.wait(), 60)
    return seen / elapsed, seen


SALT_FIRE = """
import sys, salt.config, salt.utils.event
opts = salt.config.master_config(sys.argv[1])
bus = salt.utils.event.get_event("master", opts["sock_dir"], opts=opts, listen=False)
for i in range(int(sys.argv[2])):
    bus.fire_event({"i": i}, "bench/api/%d" % i)
bus.destroy()
"""
BRINY_FIRE = """
import sys
from briny.common.config import load_master_config
from briny.common.event import EventSender
sender = EventSender(load_master_config(sys.argv[1]), "master")
for i in range(int(sys.argv[2])):
    sender.fire("bench/api/%d" % i, {"i": i})
sender.close()
"""


def measure(name: str, port: int, token: str, fire: list[str], ns: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"stack": name}
    out["GET /"] = asyncio.run(rate(port, token, "GET", None, ns.requests, ns.concurrency))
    runner = [{"client": "runner", "fun": "test.arg", "arg": ["a"]}]
    out["runner"] = asyncio.run(rate(port, token, "POST", runner, ns.requests // 4, ns.concurrency))
    ping = [{"client": "local", "tgt": "m1", "fun": "test.ping"}]
    out["local ping"] = asyncio.run(rate(port, token, "POST", ping, ns.requests // 8, ns.concurrency))
    out["events/s"], out["events seen"] = asyncio.run(events_rate(port, token, fire, ns.events))
    return out


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--salt", default="/tmp/saltref/bin")  # noqa: S108 - where dev installs the reference
    p.add_argument("--requests", type=int, default=800)
    p.add_argument("--concurrency", type=int, default=8)
    p.add_argument("--events", type=int, default=5000)
    ns = p.parse_args()
    rows = []
    ref = Reference(ns.salt)
    try:
        tokens = ref.start()
        fire = [f"{ns.salt}/python", "-c", textwrap.dedent(SALT_FIRE), str(ref.conf / "master"), str(ns.events)]
        rows.append(measure("salt-api 3007.17 (CherryPy)", ref.port, tokens["alice"], fire, ns))
    finally:
        ref.close()
    with tempfile.TemporaryDirectory(prefix="bapi", dir="/tmp") as tmp:
        fleet, port = api_fleet(Path(tmp))
        api = None
        try:
            api = start_api(fleet, port)
            token = login(port, "alice", "alice-pw")["token"]
            fire = [sys.executable, "-c", textwrap.dedent(BRINY_FIRE), str(fleet.master_conf), str(ns.events)]
            rows.append(measure("briny-api (aiohttp)", port, token, fire, ns))
        finally:
            if api is not None:
                api.close()
            fleet.close()
    print(f"{'stack':<28} {'GET / r/s':>10} {'runner r/s':>11} {'local ping r/s':>15} {'events/s':>9} {'seen':>6}")
    for r in rows:
        print(f"{r['stack']:<28} {r['GET /']:>10.0f} {r['runner']:>11.0f} {r['local ping']:>15.1f} "
              f"{r['events/s']:>9.0f} {r['events seen']:>6}/{ns.events}")  # fmt: skip
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
