#!/usr/bin/env python3
"""One master loaded by a ``briny-swarm``: auth, ping, highstate and memory at 100 / 1,000 / 5,000
minions, against issue 13's targets.

For each size N it starts one ``briny-master`` (``tests/e2e/support.py``'s
:class:`Fleet`, ``auto_accept``) and one ``briny-swarm -n N`` process (its keys
made beforehand with the swarm's own :func:`briny.minion.swarm.ensure_keys`, timed
as **keygen**), then measures:

- **auth**: from the swarm's start until the master has a live session with all
  N (its ``minions`` answer);
- **ping**: wall time of ``briny --static '*' test.ping`` (the whole CLI
  process), best of 3 after a warm-up; every run must bring N ``True``; measured
  again (best of 2) after the highstates, and printed;
- **highstate**: a ``state.apply`` of a 20-state tree of ``test`` states (every
  fourth with ``fire_event``: 5 ``salt/state_result`` events per minion), best
  of 2 after a cold run, timed from the publish (the operator IPC) until all N
  returns are in the job cache; the job cache must hold N returns of 20 results
  each, and the master's bus must carry every ``state_result`` event (counted
  by a listener);
- **master RSS** (``VmRSS``) after the highstates, and the swarm's;
- the **CPU seconds** the master, the swarm and the ``briny`` CLI spent during
  the best ping and the best highstate (``/proc/PID/stat``; the three share
  the machine's cores, so a wall time well above the master's CPU time is
  someone else's).

Prints one table, each cost per minion, whether it grows linearly (the cost per
minion at the largest size at most 1.5x the one at the smallest), and the
targets; exits 1 when a target is missed or something was lost.

Run: ``.venv/bin/python bench/swarm.py [N ...]`` (default ``100 1000 5000``).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.support import Fleet, FleetError, script

STATES, EVERY = 20, 4  # states in the tree; every EVERY-th fires an event
EVENTS = len(range(0, STATES, EVERY))
TREE = {
    "top.sls": "base:\n  '*':\n    - bench\n",
    "bench.sls": (
        f"{{% for i in range({STATES}) %}}\n"
        "bench-{{ i }}:\n"
        "  test.{{ 'succeed_with_changes' if i % 3 else 'succeed_without_changes' }}:\n"
        f"{{% if i % {EVERY} == 0 %}}    - fire_event: True\n{{% endif %}}"
        "{% if i %}    - require:\n      - test: bench-{{ i - 1 }}\n{% endif %}"
        "{% endfor %}\n"
    ),
}
TARGETS = {  # (size, measure): seconds or MB
    (1000, "ping"): 1.0,
    (1000, "highstate"): 10.0,
    (5000, "ping"): 3.0,
    (5000, "master_mb"): 500.0,
    (5000, "auth"): 60.0,
}
PING_INTERVAL = 10  # the swarm's heartbeat, and the master's "connected" window (2x)


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_s() -> float:
    """CPU seconds of this process's waited-for children (the ``briny`` CLI runs)."""
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


class Cpu:
    """CPU seconds the master, the swarm and the CLI spend between :meth:`start` and :meth:`stop`."""

    def __init__(self, master: int, swarm: int) -> None:
        self.pids = {"master": master, "swarm": swarm}
        self.at: dict[str, float] = {}

    def _now(self) -> dict[str, float]:
        return {**{k: sum(cpu_s(p) for p in family(pid)) for k, pid in self.pids.items()}, "cli": children_cpu_s()}

    def start(self) -> None:
        self.at = self._now()

    def stop(self) -> dict[str, float]:
        now = self._now()
        return {k: now[k] - self.at[k] for k in now}


def family(pid: int) -> list[int]:
    """``pid`` and its descendants (a swarm of several processes)."""
    from briny.minion.host.procs import descendants

    return [pid, *descendants(pid)]


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Collector(threading.Thread):
    """Counts the master bus's return and state_result events per jid, in a thread of its own."""

    def __init__(self, opts: dict[str, Any]) -> None:
        super().__init__(daemon=True)
        from briny.common.event import EventListener

        self.listener = EventListener(opts, "salt/*", name="master")
        self.returns: Counter[str] = Counter()
        self.results: Counter[str] = Counter()
        self.dropped = 0
        self.seen = threading.Event()
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            event = self.listener.get_event(0.2)
            if event is None:
                continue
            tag, data = event
            self.seen.set()
            parts = tag.split("/")
            if tag.startswith("salt/job/") and len(parts) == 5 and parts[3] == "ret":
                self.returns[parts[2]] += 1
            elif tag.startswith("salt/state_result/") and len(parts) >= 4:
                self.results[parts[2]] += 1
            elif tag == "salt/event/dropped":
                self.dropped += int(data.get("count", 1) or 1)

    def close(self) -> None:
        self._halt.set()
        self.join(5)
        self.listener.close()


def swarm_config(fleet: Fleet, root: Path) -> Path:
    conf = root / "swarm" / "conf"
    conf.mkdir(parents=True, exist_ok=True)
    body = {
        **fleet.minion_base,
        "id": "sw",
        "root_dir": str(root / "swarm"),
        "log_file": "swarm.log",
        "log_level": "warning",
        "ping_interval": PING_INTERVAL,
        "auth_timeout": 30,
        "recon_default": 1000,
        "recon_max": 5000,
    }
    (conf / "minion").write_text(yaml.safe_dump(body))
    return conf


def wait_connected(fleet: Fleet, n: int, timeout: float) -> float:
    start = time.monotonic()
    fleet.wait(lambda: len(fleet.minions_state()["connected"]) >= n, timeout, f"{n} swarm minions", interval=0.25)
    return time.monotonic() - start


def ping(fleet: Fleet, cpu: Cpu, n: int, runs: int = 3) -> tuple[float, int, dict[str, float]]:
    """Best wall time of ``briny '*' test.ping``, the returns lost over all runs, and the CPU
    seconds of the master, the swarm and the CLI in the best run."""
    best, lost, used = float("inf"), 0, {}
    for run in range(runs + 1):
        cpu.start()
        res = fleet.briny("--static", "--out", "json", "-t", "60", "*", "test.ping", timeout=180)
        spent = cpu.stop()
        data = res.json() if res.stdout.strip() else {}
        got = sum(1 for v in data.values() if v is True) if isinstance(data, dict) else 0
        if run:
            if res.elapsed < best:
                best, used = res.elapsed, spent
            lost += n - got
    return best, lost, used


def highstate(
    fleet: Fleet, collector: Collector, cpu: Cpu, n: int, runs: int = 2
) -> tuple[float, int, int, int, dict[str, float]]:
    """(best seconds from publish to N returns in the job cache, smallest count of returns with
    all STATES results, of stored returns, of state_result events seen in one run, the CPU
    seconds of the master and the swarm in the best run)."""
    from briny.common.config import load_master_config
    from briny.master.jobcache import open_job_cache

    opts = load_master_config(str(fleet.master_conf))
    best, min_full, min_stored, min_events, used = float("inf"), n, n, n * EVENTS, {}
    for run in range(runs + 1):
        cpu.start()
        start = time.monotonic()
        jid = fleet.publish("*", "state.apply")
        cache = open_job_cache(opts, readonly=True)
        try:
            rets: dict[str, Any] = {}

            def stored(rets: dict[str, Any] = rets, cache: Any = cache, jid: str = jid) -> bool:
                rets.clear()
                rets.update(cache.get_returns(jid))
                return len(rets) >= n

            fleet.wait(stored, 300, f"{n} returns of the highstate {jid} in the job cache", interval=0.05)
        finally:
            cache.close()
        elapsed = time.monotonic() - start
        spent = cpu.stop()
        full = sum(1 for r in rets.values() if isinstance(r.get("return"), dict) and len(r["return"]) == STATES)
        deadline = time.monotonic() + 30
        while collector.results[jid] < n * EVENTS and time.monotonic() < deadline:
            time.sleep(0.05)
        if run:
            if elapsed < best:
                best, used = elapsed, spent
            min_full, min_stored = min(min_full, full), min(min_stored, len(rets))
            min_events = min(min_events, collector.results[jid])
    return best, min_full, min_stored, min_events, used


def measure(n: int, root: Path, procs: int = 1) -> dict[str, Any]:
    from briny.common.config import load_master_config, load_minion_config
    from briny.minion.swarm import ensure_keys, plan

    fleet = Fleet(
        root / f"n{n}",
        [],
        auto_accept=True,
        log_level="warning",
        master_opts={"ping_interval": PING_INTERVAL, "timeout": 60},
    )
    swarm: subprocess.Popen[bytes] | None = None
    collector: Collector | None = None
    out: dict[str, Any] = {"n": n}
    try:
        conf = swarm_config(fleet, fleet.root)
        for rel, text in TREE.items():
            (fleet.root / "srv" / "salt" / rel).write_text(text)
        keys = ensure_keys(plan(load_minion_config(str(conf)), n))
        out["keygen"] = keys.seconds
        fleet.start_master(timeout=60)
        collector = Collector(load_master_config(str(fleet.master_conf)))
        collector.start()
        start = time.monotonic()
        with open(fleet.root / "swarm" / "console.log", "ab") as console:  # the child keeps its own copy
            swarm = subprocess.Popen(
                [*script("briny-swarm"), "-c", str(conf), "-n", str(n), "--procs", str(procs)],
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=console,
            )
        wait_connected(fleet, n, 600)
        out["auth"] = time.monotonic() - start
        cpu = Cpu(fleet.master.pid, swarm.pid)
        out["ping"], out["ping_lost"], used = ping(fleet, cpu, n)
        out["ping_cpu"] = {k: round(v, 2) for k, v in used.items()}
        out["highstate"], out["hs_full"], out["hs_stored"], out["hs_events"], used = highstate(fleet, collector, cpu, n)
        out["hs_cpu"] = {k: round(v, 2) for k, v in used.items() if k != "cli"}
        # the ping again once state runs have been through the swarm (its heap, its collector)
        out["ping_after"], lost_after, _ = ping(fleet, cpu, n, runs=2)
        out["ping_lost"] += lost_after
        out["events_dropped"] = collector.dropped
        out["master_mb"] = rss_mb(fleet.master.pid)
        out["swarm_mb"] = sum(rss_mb(p) for p in family(swarm.pid))
        swarm.send_signal(signal.SIGTERM)
        out["swarm_exit"] = swarm.wait(60)
    finally:
        if collector is not None:
            collector.close()
        if swarm is not None and swarm.poll() is None:
            for pid in family(swarm.pid)[1:]:  # its other processes (--procs) first: they outlive it
                os.kill(pid, signal.SIGKILL)
            swarm.kill()
            swarm.wait(10)
        fleet.close()
    return out


def report(rows: list[dict[str, Any]]) -> int:
    failed = 0
    cols = ["keygen", "auth", "ping", "highstate", "master_mb", "swarm_mb"]
    print(f"\n{'minions':>8} " + " ".join(f"{c:>10}" for c in cols) + "  lost/complete")
    for row in rows:
        n = row["n"]
        lost = (
            f"ping lost {row['ping_lost']}, highstate {row['hs_stored']}/{n} stored, "
            f"{row['hs_full']}/{n} with {STATES} results, events {row['hs_events']}/{n * EVENTS}"
            f" (dropped {row['events_dropped']}), swarm exit {row['swarm_exit']}"
        )
        print(f"{n:>8} " + " ".join(f"{row[c]:>10.2f}" for c in cols) + f"  {lost}")
        print(f"{'':>8} CPU seconds in the best ping {row['ping_cpu']}, highstate {row['hs_cpu']}")
        print(f"{'':>8} ping after the highstates: {row['ping_after']:.2f} s (best of 2)")
        if row["ping_lost"] or row["hs_stored"] < n or row["hs_full"] < n or row["hs_events"] < n * EVENTS:
            failed = 1
        if row["swarm_exit"] != 0:
            failed = 1
    if len(rows) > 1:
        lo, hi = rows[0], rows[-1]
        print(f"\nper minion, {lo['n']} -> {hi['n']} (linear when the ratio is at most 1.5):")
        for c in ("keygen", "auth", "ping", "highstate", "master_mb"):
            a, b = lo[c] / lo["n"], hi[c] / hi["n"]
            ratio = b / a if a else float("inf")
            print(f"  {c:>10}: {a * 1000:8.3f} -> {b * 1000:8.3f} ms (or KB) per minion, ratio {ratio:.2f}")
    print("\ntargets:")
    for (n, c), target in TARGETS.items():
        row = next((r for r in rows if r["n"] == n), None)
        if row is None:
            continue
        ok = row[c] <= target
        failed |= 0 if ok else 1
        print(f"  {n:>5} {c:>10}: {row[c]:8.2f} <= {target:g}  {'ok' if ok else 'MISSED'}")
    return failed


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("sizes", nargs="*", type=int, default=[100, 1000, 5000])
    p.add_argument("--root", help="keep the fleets under this folder (default: a temporary one)")
    p.add_argument("--procs", type=int, default=1, help="run the swarm in this many processes (default 1)")
    ns = p.parse_args()
    root = Path(ns.root) if ns.root else Path(tempfile.mkdtemp(prefix="bsw", dir="/tmp"))
    rows = []
    for n in ns.sizes:
        try:
            rows.append(measure(n, root, ns.procs))
        except FleetError as exc:
            print(f"{n} minions: the fleet did not come up: {exc}", file=sys.stderr)
            return 2
        print(f"{n}: {rows[-1]}", flush=True)
    return report(rows)


if __name__ == "__main__":
    sys.exit(main())
