#!/usr/bin/env python3
"""Record what the reference Salt's ``salt-run state.orchestrate`` answers, for the orchestrate golden.

    python3 dev/record_orch_golden.py [--saltref /tmp/saltref] [NAME ...]

Starts a real ``salt-master`` and three ``salt-minion`` processes (db1, web1,
web2) on 127.0.0.1 under a temporary folder (free ports, auto_accept, the
state tree ``tests/golden/orchestrate/tree``), waits until the three answer
``test.ping``, runs each call of ``tests/golden/orchestrate/calls.yaml``
twice (``--out=json`` and the default highstate text, ``--no-color``) and
writes ``tests/golden/orchestrate/expected/NAME.json`` (exit status, masked
data) and ``NAME.txt`` (exit status line, masked text). Stops what it
started by pid. A dev tool: it needs the reference Salt
(``../shared/tools/salt-reference.sh``); the test suite never runs it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pathlib
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "golden"))
import goldenlib

CASE = ROOT / "tests" / "golden" / "orchestrate"
MINIONS = ("db1", "web1", "web2")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def master_config(
    work: pathlib.Path, pub: int, ret: int, tree: pathlib.Path, pillar: pathlib.Path | None = None, **more: object
) -> dict[str, object]:
    """A reference salt-master's config on 127.0.0.1 under ``work`` (shared with
    ``dev/record_events_golden.py``); ``pillar``: the pillar root (default ``work/pillar``)."""
    return {
        "root_dir": str(work / "master"),
        "user": os.environ.get("USER") or "root",
        "interface": "127.0.0.1",
        "publish_port": pub,
        "ret_port": ret,
        "worker_threads": 2,
        "sock_dir": str(work / "master" / "s"),
        "log_file": str(work / "master" / "master.log"),
        "file_roots": {"base": [str(tree)]},
        "pillar_roots": {"base": [str(pillar or work / "pillar")]},
        "timeout": 10,
        **more,
    }


def stop_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGTERM to each process still running, then wait (SIGKILL after 20 s)."""
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    for p in procs:
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)


class SaltFleet:
    def __init__(
        self,
        saltref: pathlib.Path,
        work: pathlib.Path,
        tree: pathlib.Path = CASE / "tree",
        minions: dict[str, dict[str, object]] | None = None,
        pillar: pathlib.Path | None = None,
    ) -> None:
        """``minions``: id → extra minion config (default: db1, web1, web2 with none);
        ``pillar``: the pillar root (default: an empty folder)."""
        self.bin = saltref / "bin"
        self.minions = minions if minions is not None else {mid: {} for mid in MINIONS}
        self.work = work
        self.procs: list[subprocess.Popen[bytes]] = []
        pub, ret = free_port(), free_port()
        self.master_conf = work / "master" / "conf"
        self.master_conf.mkdir(parents=True)
        master = master_config(work, pub, ret, tree, pillar, auto_accept=True)
        (work / "pillar").mkdir()
        (self.master_conf / "master").write_text(yaml.safe_dump(master))
        self.minion_confs = {}
        for mid, extra in self.minions.items():
            conf = work / mid / "conf"
            conf.mkdir(parents=True)
            minion = {
                "id": mid,
                "root_dir": str(work / mid),
                "master": "127.0.0.1",
                "master_port": ret,
                "publish_port": pub,
                "sock_dir": str(work / mid / "s"),
                "log_file": str(work / mid / "minion.log"),
                "acceptance_wait_time": 1,
                **extra,
            }
            (conf / "minion").write_text(yaml.safe_dump(minion))
            self.minion_confs[mid] = conf

    def _spawn(self, name: str, conf: pathlib.Path) -> None:
        with open(conf.parent / "console.log", "ab") as log:  # the child keeps its own copy
            self.procs.append(
                subprocess.Popen([str(self.bin / name), "-c", str(conf), "-l", "warning"], stdout=log, stderr=log)
            )

    def start(self, timeout: float = 120.0) -> None:
        self._spawn("salt-master", self.master_conf)
        time.sleep(0)  # the minions retry until the master answers
        for conf in self.minion_confs.values():
            self._spawn("salt-minion", conf)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = subprocess.run(
                [
                    str(self.bin / "salt"),
                    "-c",
                    str(self.master_conf),
                    "*",
                    "test.ping",
                    "--out=json",
                    "--static",
                    "-t",
                    "5",
                ],
                capture_output=True,
                text=True,
                timeout=60,
            )
            try:
                up = json.loads(p.stdout or "{}")
            except ValueError:
                up = {}
            if all(up.get(m) is True for m in self.minions):
                return
        raise SystemExit(f"the Salt minions did not come up within {timeout} s; see {self.work}")

    def run(self, args: list[str]) -> tuple[int, str, str]:
        p = subprocess.run(
            [str(self.bin / "salt-run"), "-c", str(self.master_conf), *args],
            capture_output=True,
            text=True,
            timeout=300,
        )
        return p.returncode, p.stdout, p.stderr

    def run_json(self, args: list[str]) -> tuple[int, object, str]:
        """``salt-run ARGS --out=json``: (exit status, the data, or ``{"unparsed": text}``, stderr)."""
        rc, out, err = self.run([*args, "--out=json"])
        try:
            return rc, json.loads(out), err
        except ValueError:
            return rc, {"unparsed": out + err}, err

    def stop(self) -> None:
        stop_all(self.procs)


@contextlib.contextmanager
def recording(saltref: str, prefix: str, keep: bool, **fleet: object) -> Iterator[tuple[SaltFleet, pathlib.Path]]:
    """A started :class:`SaltFleet` in a new temporary folder (``fleet``: its keyword arguments),
    stopped after; the folder is removed unless ``keep``."""
    work = pathlib.Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    salt = SaltFleet(pathlib.Path(saltref), work, **fleet)  # type: ignore[arg-type]
    try:
        salt.start()
        yield salt, work
    finally:
        salt.stop()
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--saltref", default=os.path.join(tempfile.gettempdir(), "saltref"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (logs)")
    a = ap.parse_args()
    calls = yaml.safe_load((CASE / "calls.yaml").read_text())
    names = a.names or list(calls)
    out_dir = CASE / "expected"
    out_dir.mkdir(exist_ok=True)
    with recording(a.saltref, "orchgold-", a.keep) as (fleet, work):
        for name in names:
            args = [str(x) for x in calls[name]]
            rc, data, err = fleet.run_json(args)
            record = goldenlib.orch_mask({"args": args, "rc": rc, "data": data}, str(work))
            (out_dir / f"{name}.json").write_text(json.dumps(record, indent=1) + "\n")
            rc_text, text, err_text = fleet.run([*args, "--no-color"])
            (out_dir / f"{name}.txt").write_text(goldenlib.orch_mask_text(f"rc={rc_text}\n{text}", str(work)))
            print(name, rc, rc_text, "stderr:", err.strip()[:200])
    return 0


if __name__ == "__main__":
    sys.exit(main())
