#!/usr/bin/env python3
"""A burst of events through a real master with a slow reactor (issue 12's acceptance).

Starts one ``briny-master`` and one ``briny-minion`` (keys accepted), with
``reactor:`` mapping ``bench/burst/*`` to a reactor SLS whose reaction is
slow (``runner.test.sleep`` of ``--sleep`` seconds, default 0.02, after a
little Jinja). Then it fires ``--events`` events (default 5,000) on the
master's bus as fast as one sender can, and measures:

- **no silent loss**: every burst event ends as a ``salt/reactor/ret`` or is
  counted in a ``salt/reactor/dropped`` / ``salt/event/dropped`` notice;
  reacted + announced must equal what was fired;
- **memory**: the master's PSS (``/proc/<pid>/smaps_rollup``) before the burst and
  its peak while the reactions run (sampled every 50 ms): the growth must
  stay under ``--mem-mb`` (default 100 MB);
- **latency**: ``test.ping`` of the minion through the operator IPC (publish
  → return event on the bus), five times while the reactions run: each must
  answer in under 1 s.

Prints the figures; exits 1 when a target is missed, 2 when the fleet did
not come up. Run: ``.venv/bin/python bench/events.py [--events N]
[--sleep S] [--workers W] [--hwm H]``; a small ``--hwm`` makes the reactor
drop reactions, which must all be announced.

``--event-return sqlite|postgres`` measures storing events instead (issue 13):
the master runs with ``event_return: job_cache`` on that job cache (PostgreSQL:
a throwaway server, tests/pgserver.py) and no reactor; the burst is fired and
the bench waits until the last event is stored, then prints the events stored
per second, the master's CPU time per event, and its PSS before and at peak.
Every event must be stored (none dropped: the burst is below ``buffer_max``).
``--event-return off`` is the baseline: the same burst through the bus with
nothing stored (the bench waits for the last event on a listener of the bus).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.support import Fleet, FleetError, pss_kb

PING_TARGET = 1.0  # seconds

REACTOR_SLS = """\
{% set n = data['n'] %}
{% set total = range(n % 50) | sum %}
slow_{{ n }}:
  runner.test.sleep:
    - args:
      - s_time: {{ sleep }}
"""


class Sampler(threading.Thread):
    """The peak PSS of one process, sampled every 50 ms until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, pss_kb(pid), threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            self.peak = max(self.peak, pss_kb(self.pid))


def ping(fleet: Fleet, opts: dict[str, Any]) -> float:
    """Seconds from publishing ``test.ping`` to its return event on the master's bus."""
    from briny.common.event import EventListener
    from briny.master.clientapi import MasterClient

    with EventListener(opts, "salt/job/*/ret/m1", name="master") as events, MasterClient(opts) as client:
        start = time.monotonic()
        jid = client.publish("m1", "test.ping")["jid"]
        while time.monotonic() - start < 10:
            got = events.get_event(10)
            if got is not None and got[0] == f"salt/job/{jid}/ret/m1":
                return time.monotonic() - start
    return float("inf")


def started(fleet: Fleet) -> dict[str, Any] | None:
    """Start the fleet; the master's opts, or None (said) when it did not come up."""
    from briny.common.config import load_master_config

    try:
        fleet.start()
    except FleetError as exc:
        print(f"the fleet did not come up: {exc}")
        return None
    return load_master_config(str(fleet.master_conf))


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process, in seconds."""
    import os

    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def store_events(ns: argparse.Namespace) -> int:
    """The ``--event-return`` bench: see the module docstring."""
    from briny.common.event import EventSender
    from briny.master.jobcache import open_job_cache

    pg = None
    off = ns.event_return == "off"
    master_opts: dict[str, Any] = {"event_return": "" if off else "job_cache", "log_level": "warning"}
    if ns.event_return == "postgres":
        from tests.pgserver import PgServer

        pg = PgServer.start()
        master_opts.update({"job_cache": "postgres", "postgres.dsn": pg.dsn})
    root = Path(tempfile.mkdtemp(prefix="bev", dir="/tmp"))
    fleet = Fleet(root, ["m1"], master_opts=master_opts, log_level="warning")
    try:
        opts = started(fleet)
        if opts is None:
            return 2
        pid = fleet.master.pid
        ping(fleet, opts)  # warm
        cache = open_job_cache(opts, readonly=True)
        listener = None
        if off:
            from briny.common.event import EventListener
            from tests.waiting import join_listener

            opts["event_listener_hwm"] = 1_000_000
            listener = EventListener(opts, "bench/store/*", name="master")
            join_listener(listener, listener.fire, "bench/store/probe")
        before, cpu_before = pss_kb(pid), cpu_seconds(pid)
        sampler = Sampler(pid)
        sampler.start()
        sender = EventSender({**opts, "event_sender_hwm": 1_000_000}, name="master")
        last = f"bench/store/{ns.events - 1}"
        start = time.monotonic()
        for n in range(ns.events):
            sender.fire(f"bench/store/{n}", {"n": n, "host": "m1", "payload": {"ok": True, "items": [1, 2, 3]}})
        fired_in = time.monotonic() - start
        deadline = start + 60 + ns.events / 1000
        while listener is not None and time.monotonic() < deadline:
            got = listener.get_event(1)
            if got is not None and got[0] == last:
                break
        while listener is None and time.monotonic() < deadline:
            newest = cache.list_events(tag="bench/store/*", limit=1)
            if newest and newest[0].tag == last:
                break
            time.sleep(0.02)  # polling the database for the last row, with a deadline
        took = time.monotonic() - start
        cpu = cpu_seconds(pid) - cpu_before
        sender.close()
        sampler.done.set()
        sampler.join()
        stored = ns.events if off else len(cache.list_events(tag="bench/store/*"))
        cache.close()
        if listener is not None:
            listener.close()
        growth = (sampler.peak - before) / 1024
        what = "off (the bus alone)" if off else f"job_cache on {ns.event_return}"
        done = "carried by the bus" if off else "stored"
        print(f"event_return: {what}: {ns.events} events fired in {fired_in:.2f} s")
        print(f"{done}: {stored} in {took:.2f} s ({stored / took:.0f} events/s {done})")
        print(f"master CPU: {cpu:.2f} s ({cpu / max(stored, 1) * 1e6:.1f} us per event)")
        print(f"master PSS: {before / 1024:.1f} MB before, peak {sampler.peak / 1024:.1f} MB (+{growth:.1f} MB)")
        ok = stored == ns.events and growth < ns.mem_mb
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)
        if pg is not None:
            pg.stop()


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=5000)
    p.add_argument("--sleep", type=float, default=0.02, help="seconds each reaction sleeps")
    p.add_argument("--workers", type=int, default=10, help="reactor_worker_threads")
    p.add_argument("--hwm", type=int, default=10000, help="reactor_worker_hwm (small: drops, announced)")
    p.add_argument("--mem-mb", type=float, default=100.0, help="the master's allowed PSS growth")
    p.add_argument("--event-return", choices=("sqlite", "postgres", "off"), help="measure storing events instead")
    ns = p.parse_args(argv)
    if ns.event_return:
        return store_events(ns)

    from briny.common.event import EventListener, EventSender

    root = Path(tempfile.mkdtemp(prefix="bev", dir="/tmp"))
    fleet = Fleet(
        root,
        ["m1"],
        master_opts={
            "reactor": [{"bench/burst/*": "salt://reactor/slow.sls"}],
            "reactor_worker_threads": ns.workers,
            "reactor_worker_hwm": ns.hwm,
            "log_level": "warning",
        },
        log_level="warning",
    )
    sls = fleet.root / "srv" / "salt" / "reactor" / "slow.sls"
    sls.parent.mkdir(parents=True)
    sls.write_text(REACTOR_SLS.replace("{{ sleep }}", str(ns.sleep)))
    try:
        opts = started(fleet)
        if opts is None:
            return 2
        opts["event_listener_hwm"] = 1_000_000  # this bench's own listener must not be the one that falls behind
        pid = fleet.master.pid
        ping(fleet, opts)  # warm: the minion's first job
        before = pss_kb(pid)
        sampler = Sampler(pid)
        sampler.start()
        reacted = announced = 0
        pings: list[float] = []
        with EventListener(opts, "salt/reactor/*", name="master") as events:
            from tests.waiting import join_listener

            join_listener(events, events.fire, "salt/reactor/probe")
            sender = EventSender({**opts, "event_sender_hwm": 1_000_000}, name="master")
            start = time.monotonic()
            for n in range(ns.events):
                sender.fire(f"bench/burst/{n}", {"n": n})
            fired_in = time.monotonic() - start
            pinger_done = threading.Event()

            def pinger() -> None:
                for _ in range(5):
                    pings.append(ping(fleet, opts))
                    if pinger_done.wait(0.3):
                        return

            pinger_thread = threading.Thread(target=pinger, daemon=True)
            pinger_thread.start()
            deadline = time.monotonic() + 60 + ns.events * ns.sleep
            while reacted + announced < ns.events and time.monotonic() < deadline:
                got = events.get_event(5)
                if got is None:
                    continue
                tag, data = got
                if tag == "salt/reactor/ret" and data.get("tag", "").startswith("bench/burst/"):
                    reacted += 1
                elif tag in ("salt/reactor/dropped", "salt/event/dropped"):
                    announced += int(data.get("count") or 0)
                    print(f"  notice {tag}: {data}")
            took = time.monotonic() - start
            pinger_thread.join(30)
            sender.close()
        sampler.done.set()
        sampler.join()
        growth = (sampler.peak - before) / 1024
        print(f"events fired: {ns.events} in {fired_in:.2f} s; reactions {ns.workers} workers x {ns.sleep} s each")
        print(
            f"reacted: {reacted}; announced as dropped: {announced}; silently lost: {ns.events - reacted - announced}"
        )
        print(f"all accounted for after {took:.1f} s ({reacted / took:.0f} reactions/s)")
        print(f"master PSS: {before / 1024:.1f} MB before, peak {sampler.peak / 1024:.1f} MB (+{growth:.1f} MB)")
        print("test.ping during the burst (publish -> return event): " + ", ".join(f"{t:.3f} s" for t in pings))
        ok = reacted + announced == ns.events and growth < ns.mem_mb and pings and max(pings) < PING_TARGET
        print("PASS" if ok else "FAIL")
        return 0 if ok else 1
    finally:
        fleet.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
