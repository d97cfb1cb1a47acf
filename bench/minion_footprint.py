#!/usr/bin/env python3
"""What a minion costs its host, and how fast the operator's commands answer (issue 25).

Starts one ``briny-master`` and N ``briny-minion`` processes on 127.0.0.1 in a
temporary root (``tests/e2e/support.py``'s :class:`Fleet`, ``auto_accept``),
for N = 20 (``--minions``) and then N = 1 (a host with one minion alone), and prints:

- **PSS per minion** (``/proc/PID/smaps_rollup``, summed over the daemon and its job
  launcher) idle, after a highstate (a 20-state tree of ``test`` states, every
  fourth with ``fire_event``), and after ``--pings`` (default 1,000) ``test.ping``
  jobs published back to back (the last job's returns awaited);
- **RSS summed** (daemon + launcher) of the minion alone;
- **start-up**: from the exec of ``briny-minion`` to its ``READY=1`` datagram
  (``NOTIFY_SOCKET``) saying ``connected`` (authenticated, subscribed, ready for jobs),
  best of ``--runs``;
- **briny-call --local test.ping**, **briny --version** and the N-minion
  **briny '*' test.ping** wall time (the whole process), best of ``--runs``;
- **idle CPU** of the minions (daemon + launcher, ``utime + stime``) over
  ``--idle`` seconds (default 10; 600 for the issue's figure), as % of a core.

With ``--salt`` (the default when ``/tmp/saltref/bin/salt-call`` exists) the
reference Salt 3007 is measured in the same run, beside briny: ``salt-master``
and N ``salt-minion`` on free ports with private dirs (PSS of all a minion's
processes, idle and after a ``test.ping``), ``salt-call --local test.ping``,
``salt --version`` and the N-minion ``salt '*' test.ping``.

The targets (issue 25) are printed beside each figure; the exit status is 1 when
one is missed. Run: ``.venv/bin/python bench/minion_footprint.py [--minions 20]
[--pings 1000] [--idle 600] [--no-salt]``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.e2e.support import Fleet, FleetError, free_ports, script

SALT = Path(os.environ.get("SALT_BIN", os.path.join(tempfile.gettempdir(), "saltref", "bin")))
STATES, EVERY = 20, 4
TREE = {
    "top.sls": "base:\n  '*':\n    - bench\n",
    "bench.sls": (
        f"{{% for i in range({STATES}) %}}\n"
        "bench-{{ i }}:\n"
        "  test.succeed_with_changes:\n"
        "    - name: bench-{{ i }}\n"
        f"{{% if i % {EVERY} == 0 %}}    - fire_event: True\n{{% endif %}}"
        "{% endfor %}\n"
    ),
}
TARGETS = {
    "pss_idle": 15.0,  # MB per minion, the N-minion run
    "rss_alone": 25.0,  # MB, one minion alone
    "growth": 1.0,  # MB over idle, after a highstate / the pings
    "startup": 0.5,  # s
    "call_local": 0.080,  # s
    "version": 0.050,  # s
    "ping": 0.150,  # s, 20 minions
    "cpu": 0.1,  # % of a core
}
MB = 1024.0


# -- /proc ---------------------------------------------------------------------------------------


def tree_pids(pid: int) -> list[int]:
    """``pid`` and its descendants (the minion's daemon and launcher; idle, no job runs)."""
    out = [pid]
    for p in out:
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                out.extend(int(c) for c in (task / "children").read_text().split())
            except OSError:
                continue
    return out


def rollup(pid: int, key: str) -> int:
    """One ``smaps_rollup`` field of ``pid`` in KiB (0 when the process is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return 0
    return 0


def mem_mb(pid: int, key: str = "Pss") -> float:
    return sum(rollup(p, key) for p in tree_pids(pid)) / MB


def cpu_ticks(pid: int) -> int:
    total = 0
    for p in tree_pids(pid):
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total


def settle(seconds: float = 2.0) -> None:
    time.sleep(seconds)  # let a finished job's process be reaped and the minion go idle


def best(argv: list[str], runs: int, env: dict[str, str] | None = None, ok: Any = None) -> float:
    """Best wall time of ``argv`` over ``runs`` (after a warm-up); raises when a run fails."""
    times = []
    for n in range(runs + 1):
        start = time.perf_counter()
        res = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=env)
        took = time.perf_counter() - start
        if res.returncode != 0 or (ok is not None and not ok(res.stdout)):
            raise FleetError(f"{argv} failed ({res.returncode}):\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}")
        if n:
            times.append(took)
    return min(times)


# -- briny ---------------------------------------------------------------------------------------


def minion_pids(fleet: Fleet) -> dict[str, int]:
    return {mid: d.pid for mid, d in fleet.minions.items()}


def pss_per_minion(fleet: Fleet) -> float:
    pids = minion_pids(fleet).values()
    return sum(mem_mb(p) for p in pids) / len(pids)


def highstate(fleet: Fleet, n: int) -> None:
    res = fleet.briny("--static", "--out", "json", "-t", "60", "*", "state.apply", timeout=180)
    data = res.json()
    good = res.stdout.count('"result": true')
    if len(data) != n or good != n * STATES:
        raise FleetError(f"highstate: {len(data)} of {n} returned, {good} states succeeded:\n{res.stdout[-1500:]}")


def pings(fleet: Fleet, count: int) -> float:
    start = time.perf_counter()
    jid = ""
    for _ in range(count):
        jid = fleet.publish("*", "test.ping")
    fleet.wait_returns(jid, fleet.ids, timeout=60 + count * len(fleet.ids) / 20)
    return time.perf_counter() - start


def startup_times(fleet: Fleet, runs: int) -> float:
    """Exec of ``briny-minion`` to its READY=1 ``connected`` datagram, best of ``runs``."""
    daemon = next(iter(fleet.minions.values()))
    sock_path = str(fleet.root / "notify.sock")
    times = []
    for _ in range(runs):
        fleet.stop(daemon)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
            if os.path.exists(sock_path):
                os.unlink(sock_path)
            sock.bind(sock_path)
            sock.settimeout(30)
            daemon.env["NOTIFY_SOCKET"] = sock_path
            start = time.perf_counter()
            fleet.start_minion(daemon.name)
            while True:
                msg = sock.recv(4096).decode()
                if "READY=1" in msg:
                    break
            took = time.perf_counter() - start
            if "accepted" not in msg and "connected" not in msg:
                raise FleetError(f"minion ready but not connected: {msg!r}")
            times.append(took)
        daemon.env.pop("NOTIFY_SOCKET")
    fleet.wait_connected([daemon.name])
    return min(times)


def measure_briny(root: Path, n: int, args: argparse.Namespace) -> dict[str, float]:
    ids = [f"m{i:02d}" for i in range(n)]
    out: dict[str, float] = {}
    defaults = {"ping_interval": None}  # the daemons' own heartbeat (every 10 s), as deployed
    with Fleet(root / f"briny{n}", ids, auto_accept=True, master_opts=defaults, minion_opts=defaults) as fleet:
        for name, body in TREE.items():
            (fleet.root / "srv" / "salt" / name).write_text(body)
        fleet.start(timeout=120)
        settle(3)
        out["pss_idle"] = pss_per_minion(fleet)
        if n == 1:
            out["rss_alone"] = mem_mb(fleet.minions[ids[0]].pid, "Rss")
            before = cpu_ticks(fleet.minions[ids[0]].pid)
            time.sleep(args.idle)
            used = cpu_ticks(fleet.minions[ids[0]].pid) - before
            out["cpu"] = 100.0 * used / os.sysconf("SC_CLK_TCK") / args.idle
        highstate(fleet, n)
        highstate(fleet, n)
        settle()
        out["pss_highstate"] = pss_per_minion(fleet)
        out["pings_s"] = pings(fleet, args.pings if n == 1 else args.pings_fleet)
        settle()
        out["pss_pings"] = pss_per_minion(fleet)
        env = {**os.environ}
        if n == 1:
            conf = str(fleet.minions[ids[0]].conf_dir)
            out["call_local"] = best([*script("briny-call"), "-c", conf, "--local", "test.ping"], args.runs)
            out["version"] = best([*script("briny"), "--version"], args.runs)
            out["startup"] = startup_times(fleet, args.runs)
        else:
            mconf = str(fleet.master_conf)
            out["ping"] = best(
                [*script("briny"), "-c", mconf, "--static", "--out", "json", "*", "test.ping"],
                args.runs,
                env,
                ok=lambda text: text.count("true") == n,
            )
    return out


# -- the reference Salt ----------------------------------------------------------------------------


class SaltFleet:
    """``salt-master`` and N ``salt-minion`` under ``root`` on free ports, keys auto-accepted."""

    def __init__(self, root: Path, ids: list[str]) -> None:
        self.root, self.ids = root, ids
        self.ret, self.pub = free_ports(2)
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.mconf = root / "master.d"
        user = os.environ.get("USER") or __import__("pwd").getpwuid(os.getuid()).pw_name
        common = {"user": user, "log_level": "warning", "transport": "zeromq"}
        self._write(
            self.mconf / "master",
            {
                **common,
                "root_dir": str(root / "master"),
                "interface": "127.0.0.1",
                "ret_port": self.ret,
                "publish_port": self.pub,
                "auto_accept": True,
                "file_roots": {"base": [str(root / "srv")]},
                "sock_dir": str(root / "master" / "s"),
            },
        )
        for mid in ids:
            self._write(
                root / mid / "conf" / "minion",
                {
                    **common,
                    "id": mid,
                    "root_dir": str(root / mid),
                    "master": "127.0.0.1",
                    "master_port": self.ret,
                    "publish_port": self.pub,
                    "sock_dir": str(root / mid / "s"),
                    "file_roots": {"base": [str(root / "srv")]},
                },
            )

    @staticmethod
    def _write(path: Path, body: dict[str, Any]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(body))

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.root / f"{name}.console", "ab")  # noqa: SIM115 - closed with the process
        self.procs[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()

    def salt(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        argv = [str(SALT / "salt"), "-c", str(self.mconf), *args]
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)

    def start(self, timeout: float = 300) -> None:
        self._spawn("master", [str(SALT / "salt-master"), "-c", str(self.mconf)])
        for mid in self.ids:
            self._spawn(mid, [str(SALT / "salt-minion"), "-c", str(self.root / mid / "conf")])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            res = self.salt("--static", "--out", "json", "-t", "30", "*", "test.ping")
            if res.stdout.count("true") >= len(self.ids):
                return
            time.sleep(1)
        raise FleetError("the Salt minions did not all answer test.ping")

    def pss_per_minion(self) -> float:
        return sum(mem_mb(self.procs[m].pid) for m in self.ids) / len(self.ids)

    def close(self) -> None:
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.terminate()  # by pid: the process this bench started
        for proc in self.procs.values():
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def measure_salt(root: Path, n: int, args: argparse.Namespace) -> dict[str, float]:
    ids = [f"s{i:02d}" for i in range(n)]
    fleet = SaltFleet(root / f"salt{n}", ids)
    out: dict[str, float] = {}
    try:
        fleet.start()
        settle(3)
        out["pss_idle"] = fleet.pss_per_minion()
        if n == 1:
            out["rss_alone"] = mem_mb(fleet.procs[ids[0]].pid, "Rss")
            conf = str(fleet.root / ids[0] / "conf")
            out["call_local"] = best([str(SALT / "salt-call"), "-c", conf, "--local", "test.ping"], args.runs)
            out["version"] = best([str(SALT / "salt"), "--version"], args.runs)
        else:
            argv = [
                str(SALT / "salt"),
                "-c",
                str(fleet.mconf),
                "--static",
                "--out",
                "json",
                "-t",
                "60",
                "*",
                "test.ping",
            ]
            out["ping"] = best(argv, args.runs, ok=lambda text: text.count("true") == n)
        settle()
        out["pss_pings"] = fleet.pss_per_minion()
    finally:
        fleet.close()
    return out


# -- report --------------------------------------------------------------------------------------

ROWS = [
    ("pss_idle", "PSS per minion, idle (MB)", "20"),
    ("pss_highstate", "PSS per minion, after highstate (MB)", "20"),
    ("pss_pings", "PSS per minion, after the pings (MB)", "20"),
    ("pss_idle", "PSS, one minion alone, idle (MB)", "1"),
    ("pss_highstate", "PSS, one minion alone, after highstate (MB)", "1"),
    ("pss_pings", "PSS, one minion alone, after the pings (MB)", "1"),
    ("rss_alone", "RSS summed, one minion alone (MB)", "1"),
    ("startup", "start-up, exec to connected (s)", "1"),
    ("call_local", "briny-call --local test.ping (s)", "1"),
    ("version", "briny --version (s)", "1"),
    ("ping", "briny '*' test.ping, N minions (s)", "20"),
    ("cpu", "idle CPU, % of a core", "1"),
]


def report(results: dict[str, dict[str, dict[str, float]]], n: int) -> int:
    missed = 0
    print(f"\n{'figure':48} {'briny':>10} {'salt':>10} {'target':>8}")
    for key, label, size in ROWS:
        size_n = str(n) if size == "20" else "1"
        ours = results["briny"].get(size_n, {}).get(key)
        theirs = results.get("salt", {}).get(size_n, {}).get(key)
        target = TARGETS.get(key)
        if key == "pss_idle" and size == "1":
            target = None
        if key in ("pss_highstate", "pss_pings"):
            idle = results["briny"].get(size_n, {}).get("pss_idle")
            target = None if idle is None else idle + TARGETS["growth"]
        if key == "ping" and n != 20:
            target = None
        fmt = (
            (lambda v: "-" if v is None else f"{v:.3f}")
            if key in ("startup", "call_local", "version", "ping", "cpu")
            else (lambda v: "-" if v is None else f"{v:.1f}")
        )
        flag = ""
        if ours is not None and target is not None and ours > target:
            flag, missed = "  MISSED", missed + 1
        print(
            f"{label.replace('N minions', f'{n} minions'):48} {fmt(ours):>10} {fmt(theirs):>10} {fmt(target):>8}{flag}"
        )
    pings = results["briny"].get("1", {}).get("pings_s")
    if pings:
        print(f"(the pings took {pings:.1f} s on one minion)")
    return 1 if missed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--minions", type=int, default=20)
    parser.add_argument("--pings", type=int, default=1000, help="test.ping jobs on the minion alone")
    parser.add_argument("--pings-fleet", type=int, default=50, help="test.ping jobs on the N minions")
    parser.add_argument("--idle", type=float, default=10.0, help="idle CPU window, seconds (600 for the figure)")
    parser.add_argument("--runs", type=int, default=5, help="runs per timing (best of)")
    parser.add_argument("--salt", action=argparse.BooleanOptionalAction, default=(SALT / "salt-call").exists())
    parser.add_argument("--only-one", action="store_true", help="only the one-minion run")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bmf", dir="/tmp"))
    results: dict[str, dict[str, dict[str, float]]] = {"briny": {}, "salt": {}}
    sizes = [1] if args.only_one else [args.minions, 1]
    try:
        for n in sizes:
            print(f"briny, {n} minion(s)...", flush=True)
            results["briny"][str(n)] = measure_briny(root, n, args)
            print({k: round(v, 3) for k, v in results["briny"][str(n)].items()}, flush=True)
            if args.salt:
                print(f"salt, {n} minion(s)...", flush=True)
                results["salt"][str(n)] = measure_salt(root, n, args)
                print(results["salt"][str(n)], flush=True)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return report(results, args.minions)


if __name__ == "__main__":
    sys.exit(main())
