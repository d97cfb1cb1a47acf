#!/usr/bin/env python3
"""Record the master-bus events of the reference Salt, for the event-shape golden.

    python3 dev/record_events_golden.py [--saltref /tmp/saltref] [--keep] [NAME ...]

Starts a real ``salt-master`` and one ``salt-minion`` (``m1``, a beacon
``diskusage`` every second) on 127.0.0.1 under a temporary folder (free
ports, the minion's key accepted with ``salt-key``, the state tree
``tests/golden/events/tree``, a reactor for ``golden/react`` and the
``golden/custom`` state result), listens to the
master's bus with Salt's own Python API (``salt.utils.event.get_master_event``
in the reference's interpreter, one JSON line per event), then runs each
action of ``tests/golden/events/actions.yaml`` and keeps every event the bus
carried until it is quiet again. ``tests/golden/events/expected/NAME.json``
holds, per action, the events in the order received, tag and data masked by
``goldenlib.event_mask`` (jids, stamps, times, pids, keys). Stops what it
started by pid. A dev tool: it needs the reference Salt; the test suite
never runs it (``tests/e2e/test_event_shapes.py`` compares briny's events
with what is recorded here).
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "golden"))
sys.path.insert(0, str(ROOT / "dev"))
import goldenlib
from record_orch_golden import free_port, master_config, stop_all

CASE = ROOT / "tests" / "golden" / "events"
QUIET = 4.0  # seconds without an event (beacons aside) that end an action

LISTENER = r"""
import json, sys, time
import salt.config, salt.utils.event
opts = salt.config.master_config(sys.argv[1])
bus = salt.utils.event.get_master_event(opts, opts["sock_dir"], listen=True)
print(json.dumps({"tag": "@listening@", "data": {}}), flush=True)
while True:
    ev = bus.get_event(full=True, wait=1, auto_reconnect=True)
    if ev:
        print(json.dumps(ev, default=repr), flush=True)
"""


class Recorder:
    def __init__(self, saltref: pathlib.Path, work: pathlib.Path) -> None:
        self.saltref, self.bin, self.work = saltref, saltref / "bin", work
        self.procs: list[subprocess.Popen[bytes]] = []
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        pub, ret = free_port(), free_port()
        self.master_conf = work / "master" / "conf"
        self.master_conf.mkdir(parents=True)
        (work / "pillar").mkdir()
        (work / "pillar" / "top.sls").write_text("base:\n  '*':\n    - p\n")
        (work / "pillar" / "p.sls").write_text("color: blue\n")
        master = master_config(
            work,
            pub,
            ret,
            CASE / "tree",
            reactor=[
                {"golden/react": [str(CASE / "tree" / "reactor" / "react.sls")]},
                {"salt/state_result/*/m1/golden/custom": [str(CASE / "tree" / "reactor" / "state.sls")]},
            ],
        )
        (self.master_conf / "master").write_text(yaml.safe_dump(master))
        self.minion_conf = work / "m1" / "conf"
        self.minion_conf.mkdir(parents=True)
        minion = {
            "id": "m1",
            "root_dir": str(work / "m1"),
            "master": "127.0.0.1",
            "master_port": ret,
            "publish_port": pub,
            "sock_dir": str(work / "m1" / "s"),
            "log_file": str(work / "m1" / "minion.log"),
            "acceptance_wait_time": 1,
            "beacons": {"diskusage": [{"/": "0%"}, {"interval": 1}]},
        }
        (self.minion_conf / "minion").write_text(yaml.safe_dump(minion))

    def _spawn(self, argv: list[str], log_name: str, **kw: Any) -> subprocess.Popen[bytes]:
        with open(self.work / log_name, "ab") as log:  # the child keeps its own copy
            p = subprocess.Popen(argv, stderr=log, **kw)
        self.procs.append(p)
        return p

    def _listen(self) -> None:
        code = self.work / "listener.py"
        code.write_text(LISTENER)
        p = self._spawn(
            [str(self.bin / "python3"), str(code), str(self.master_conf / "master")],
            "listener.log",
            stdout=subprocess.PIPE,
        )

        def pump() -> None:
            assert p.stdout is not None
            for line in p.stdout:
                self.events.put(json.loads(line))

        threading.Thread(target=pump, daemon=True).start()

    def salt(self, name: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.bin / name), "-c", str(self.master_conf), *args], capture_output=True, text=True, timeout=timeout
        )

    def start(self, timeout: float = 120.0) -> list[dict[str, Any]]:
        """Master, listener, minion; the key accepted; every event of the start-up, in order."""
        self._spawn([str(self.bin / "salt-master"), "-c", str(self.master_conf), "-l", "warning"], "master.console")
        deadline = time.monotonic() + timeout
        while not (self.work / "master" / "s" / "master_event_pub.ipc").exists():
            if time.monotonic() > deadline:
                raise SystemExit("the Salt master did not start")
            time.sleep(0.2)
        self._listen()
        first = self.events.get(timeout=60)
        assert first["tag"] == "@listening@", first
        self._spawn([str(self.bin / "salt-minion"), "-c", str(self.minion_conf), "-l", "warning"], "minion.console")
        seen = self.until(lambda evs: any(e["tag"] == "salt/auth" for e in evs), 60)
        while "m1" not in self.salt("salt-key", "-l", "pre", "--out=json").stdout:
            time.sleep(0.2)
        self.salt("salt-key", "-y", "-a", "m1")
        seen += self.until(lambda evs: any(e["tag"] == "salt/minion/m1/start" for e in evs), 90)
        return seen + self.quiet()

    def until(self, done: Any, timeout: float) -> list[dict[str, Any]]:
        got: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while not done(got):
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"timed out; got {[e['tag'] for e in got]}; see {self.work}")
            try:
                got.append(self.events.get(timeout=left))
            except queue.Empty:
                continue
        return got

    def quiet(self, keep_beacons: bool = False, ignore: tuple[str, ...] = ()) -> list[dict[str, Any]]:
        """Every event until none but beacons (and tags starting with ``ignore``, kept once) came
        for QUIET seconds."""
        got: list[dict[str, Any]] = []
        last = time.monotonic()
        while time.monotonic() - last < QUIET:
            try:
                ev = self.events.get(timeout=0.2)
            except queue.Empty:
                continue
            got.append(ev)
            if keep_beacons:
                if len(got) >= 3:  # a few beacon events, then stop
                    break
            elif ev["tag"].startswith("salt/beacon/"):
                got.pop()
            elif ignore and ev["tag"].startswith(ignore):
                if sum(e["tag"] == ev["tag"] for e in got) > 1:
                    got.pop()
            else:
                last = time.monotonic()
        return got

    def stop(self) -> None:
        stop_all(list(reversed(self.procs)))


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--saltref", default=os.path.join(tempfile.gettempdir(), "saltref"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (logs)")
    a = ap.parse_args()
    actions = yaml.safe_load((CASE / "actions.yaml").read_text())
    names = a.names or list(actions)
    work = pathlib.Path(tempfile.mkdtemp(prefix="evgold-", dir="/tmp"))
    rec = Recorder(pathlib.Path(a.saltref), work)
    out_dir = CASE / "expected"
    out_dir.mkdir(exist_ok=True)

    def save(name: str, argv: list[str], events: list[dict[str, Any]]) -> None:
        masked = [goldenlib.event_mask(e) for e in events]
        (out_dir / f"{name}.json").write_text(json.dumps({"action": argv, "events": masked}, indent=1) + "\n")
        print(name, [e["tag"] for e in masked])

    try:
        started = rec.start()
        if "start" in names:
            save("start", ["salt-minion (key accepted with salt-key -a)"], started)
        for name in names:
            spec = actions[name]
            if name == "start":
                continue
            argv = [str(x) for x in spec.get("argv", ())]
            if argv:
                p = rec.salt(*argv)
                if p.returncode not in spec.get("rc", (0,)):
                    print(name, "exit", p.returncode, p.stdout[-500:], p.stderr[-500:])
            save(name, argv, rec.quiet(bool(spec.get("beacons")), tuple(spec.get("ignore", ()))))
    finally:
        rec.stop()
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print("kept", work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
