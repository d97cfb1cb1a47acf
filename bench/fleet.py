#!/usr/bin/env python3
"""A real fleet on 127.0.0.1: ping time, job-return throughput and memory, against issue 5's targets.

For each fleet size N (default ``3 20``) it starts one ``briny-master`` and
N ``briny-minion`` processes (keys accepted with ``briny-key -A``), then
measures:

- **ping**: wall time of ``briny '*' test.ping`` (the whole CLI process),
  best of 5 after one warm-up run; every run must bring back N ``True``
  returns (a missing one is a lost return);
- **throughput**: 10 jobs (``test.echo``) published back to back through
  the operator IPC, timed until all 10 × N returns are on the master's
  event bus, then checked against the job cache (returns/s);
- **memory**: PSS (``/proc/<pid>/smaps_rollup``) of the master and of the
  minions after 2 s at rest (one idle minion, and the largest), and of the
  largest minion again after the highstates; a minion's figure is its
  daemon's plus its job launcher's (``multiprocessing: True``);
- **highstate** (issue 6): wall time of ``briny '*' state.apply`` of a
  20-state tree (a Jinja loop of test states, five with ``fire_event``, and
  a ``file.managed`` from ``salt://`` with a template), best of 3 after a
  first (cold) run that compiles and fetches; every minion's 20 results must
  come back and every ``salt/state_result`` event (5 per minion) must reach
  the master's bus.

Targets (this 2-core machine): 20 minions ping in under 0.5 s with no lost
return; a minion at rest under 40 MB PSS (issue 5); ``state.apply`` of the
20-state tree on 20 minions in under 1.5 s with every return and every event
(issue 6). Prints the figures and exits 1 when a target is missed, 2 when the
fleet did not come up.

Run: ``.venv/bin/python bench/fleet.py [--threads] [N ...]`` (default 3 10 20);
``--threads`` runs the minions' jobs in threads (``multiprocessing: False``)
instead of a process per job.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.support import Fleet, FleetError, pss_kb

PING_TARGET = 0.5  # seconds, 20 minions
MINION_PSS_TARGET = 40.0  # MB
PING_RUNS = 5
JOBS = 10
APPLY_TARGET = 1.5  # seconds, 20 minions
APPLY_RUNS = 3
TREE = {
    "top.sls": "base:\n  '*':\n    - bench\n",
    "bench.sls": (
        "{% for i in range(18) %}\n"
        "bench-{{ i }}:\n"
        "  test.{{ 'succeed_with_changes' if i % 3 else 'succeed_without_changes' }}:\n"
        "{% if i % 4 == 0 %}    - fire_event: True\n{% endif %}"
        "{% if i %}    - require:\n      - test: bench-{{ i - 1 }}\n{% endif %}"
        "{% endfor %}\n"
        "bench-dir:\n  file.directory:\n    - name: {{ opts['cachedir'] }}/bench\n"
        "bench-file:\n  file.managed:\n    - name: {{ opts['cachedir'] }}/bench/motd\n"
        "    - source: salt://motd.j2\n    - template: jinja\n    - fire_event: True\n"
        "    - require:\n      - file: bench-dir\n"
    ),
    "motd.j2": "Welcome to {{ grains['id'] }}\n",
}
STATES, EVENTS = 20, 6  # results per minion; fire_event states per minion (5 tests + 1 file)


def ping_times(fleet: Fleet, n: int) -> tuple[list[float], int]:
    """Wall times of ``briny '*' test.ping`` (after a warm-up) and the count of lost returns."""
    times: list[float] = []
    lost = 0
    for run in range(PING_RUNS + 1):
        res = fleet.briny("--static", "--out", "json", "*", "test.ping", timeout=60)
        data = res.json() if res.stdout.strip() else {}
        got = sum(1 for v in data.values() if v is True) if isinstance(data, dict) else 0
        if run > 0:
            times.append(res.elapsed)
            lost += n - got
    return times, lost


def throughput(fleet: Fleet, n: int) -> tuple[float, int, int]:
    """(seconds for JOBS jobs × n returns, returns seen on the bus, returns in the job cache)."""
    from briny.common.config import load_master_config
    from briny.common.event import EventListener
    from briny.master.clientapi import MasterClient
    from briny.master.jobcache import open_job_cache

    opts = load_master_config(str(fleet.master_conf))
    wanted = JOBS * n
    seen: set[tuple[str, str]] = set()
    jids: list[str] = []
    with EventListener(opts, "salt/job/*/ret/*", name="master") as events, MasterClient(opts) as client:
        time.sleep(0.1)  # the subscription reaches the bus
        start = time.monotonic()
        for i in range(JOBS):
            pub = client.publish("*", "test.echo", [f"job{i}"], {}, "glob", 10)
            jids.append(str(pub["jid"]))
        deadline = start + 30
        while len(seen) < wanted and time.monotonic() < deadline:
            event = events.get_event(timeout=max(0.01, deadline - time.monotonic()))
            if event is None:
                continue
            parts = event[0].split("/")
            if len(parts) == 5 and parts[2] in jids:
                seen.add((parts[2], parts[4]))
        elapsed = time.monotonic() - start
    time.sleep(0.5)  # the job cache writer flushes
    cache = open_job_cache(opts, readonly=True)
    try:
        stored = sum(len(cache.get_returns(jid)) for jid in jids)
    finally:
        cache.close()
    return elapsed, len(seen), stored


def apply_times(fleet: Fleet, n: int) -> tuple[list[float], int, int]:
    """Wall times of ``briny '*' state.apply`` (after a cold run), and the smallest counts of
    results and ``state_result`` events seen in one run (want n*STATES and n*EVENTS)."""
    from briny.common.config import load_master_config
    from briny.common.event import EventListener

    tree = fleet.root / "srv" / "salt"
    for rel, text in TREE.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    opts = load_master_config(str(fleet.master_conf))
    times: list[float] = []
    min_results = min_events = 10**9
    for run in range(APPLY_RUNS + 1):
        with EventListener(opts, "salt/state_result/*", name="master") as events:
            time.sleep(0.1)
            res = fleet.briny("--static", "--out", "json", "-t", "30", "*", "state.apply", timeout=120)
            data = res.json() if res.stdout.strip() else {}
            results = sum(len(v) for v in data.values() if isinstance(v, dict)) if isinstance(data, dict) else 0
            seen = sum(1 for _ in events.iter(timeout=1.0, count=n * EVENTS))
        if run > 0:
            times.append(res.elapsed)
            min_results, min_events = min(min_results, results), min(min_events, seen)
    return times, min_results, min_events


def minion_pss_mb(pid: int) -> float:
    """A minion's memory: the daemon and its job launcher (its child processes at rest)."""
    from briny.minion.host.procs import descendants

    total = pss_kb(pid)
    for child in descendants(pid):
        try:
            total += pss_kb(child)
        except OSError:
            continue  # a job process that just ended
    return total / 1024


def measure(n: int, root: Path, threads: bool = False) -> dict[str, Any]:
    ids = [f"bm{i:02d}" for i in range(n)]
    fleet = Fleet(root / f"n{n}", ids, log_level="warning", minion_opts={"multiprocessing": False} if threads else None)
    try:
        start = time.monotonic()
        fleet.start(timeout=120)
        up = time.monotonic() - start
        times, lost = ping_times(fleet, n)
        elapsed, seen, stored = throughput(fleet, n)
        time.sleep(2.0)  # at rest (before the highstate loads Jinja and the compiler)
        minion_pss = {m: minion_pss_mb(d.pid) for m, d in fleet.minions.items()}
        master_pss = pss_kb(fleet.master.pid) / 1024
        apply, results, events = apply_times(fleet, n)
        after_apply = max(minion_pss_mb(d.pid) for d in fleet.minions.values())
        return {
            "n": n,
            "up": up,
            "ping_best": min(times),
            "ping_median": sorted(times)[len(times) // 2],
            "ping_lost": lost,
            "jobs_s": elapsed,
            "returns_seen": seen,
            "returns_stored": stored,
            "returns_wanted": JOBS * n,
            "apply_best": min(apply),
            "apply_results": results,
            "apply_events": events,
            "master_pss": master_pss,
            "minion_pss_after_apply": after_apply,
            "minion_pss": minion_pss[ids[0]],
            "minion_pss_max": max(minion_pss.values()),
        }
    finally:
        fleet.close()


def main(argv: list[str]) -> int:
    threads = "--threads" in argv
    sizes = [int(a) for a in argv if a != "--threads"] or [3, 10, 20]
    root = Path(tempfile.mkdtemp(prefix="bfb", dir="/tmp"))
    failed = False
    try:
        for n in sizes:
            try:
                r = measure(n, root, threads)
            except FleetError as exc:
                print(f"N={n}: the fleet did not come up: {str(exc)[:2000]}", file=sys.stderr)
                return 2
            rate = r["returns_seen"] / r["jobs_s"] if r["jobs_s"] > 0 else 0.0
            ping_ok = r["ping_best"] < PING_TARGET and r["ping_lost"] == 0
            jobs_ok = r["returns_seen"] == r["returns_wanted"] == r["returns_stored"]
            mem_ok = r["minion_pss_max"] < MINION_PSS_TARGET
            apply_ok = (
                r["apply_results"] == n * STATES
                and r["apply_events"] == n * EVENTS
                and (n < 20 or r["apply_best"] < APPLY_TARGET)
            )
            failed = failed or not (ping_ok and jobs_ok and mem_ok and apply_ok)
            print(f"N={n} minions (fleet up in {r['up']:.1f} s)")
            print(
                f"  briny '*' test.ping   best {r['ping_best']:.3f} s, median {r['ping_median']:.3f} s "
                f"of {PING_RUNS}, lost returns {r['ping_lost']}   "
                f"[target < {PING_TARGET} s, none lost: {'ok' if ping_ok else 'MISSED'}]"
            )
            print(
                f"  {JOBS} jobs back to back  {r['returns_seen']}/{r['returns_wanted']} returns in "
                f"{r['jobs_s']:.3f} s ({rate:.0f} returns/s), {r['returns_stored']} in the job cache   "
                f"[{'ok' if jobs_ok else 'MISSED'}]"
            )
            print(
                f"  briny '*' state.apply best {r['apply_best']:.3f} s of {APPLY_RUNS} (20 states), "
                f"results {r['apply_results']}/{n * STATES}, state_result events "
                f"{r['apply_events']}/{n * EVENTS}   [target at N=20 < {APPLY_TARGET} s, all back: "
                f"{'ok' if apply_ok else 'MISSED'}]"
            )
            print(
                f"  memory (PSS)          master {r['master_pss']:.1f} MB, idle minion {r['minion_pss']:.1f} MB "
                f"(largest {r['minion_pss_max']:.1f} MB; {r['minion_pss_after_apply']:.1f} MB after state.apply)   "
                f"[minion target < {MINION_PSS_TARGET:.0f} MB: {'ok' if mem_ok else 'MISSED'}]"
            )
            sys.stdout.flush()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
