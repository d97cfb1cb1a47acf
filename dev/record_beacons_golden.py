#!/usr/bin/env python3
"""Record what the reference Salt's ``beacons.*`` answer on a running masterless minion, for the golden.

    python3 dev/record_beacons_golden.py [--saltref /tmp/saltref]

Starts one ``salt-minion`` (``master_type: disable``, ``file_client: local``, the ``config`` of
``tests/golden/beacons/calls.yaml``) under a temporary folder, waits for its event bus, runs each
call of ``calls.yaml`` in order with ``salt-call --local --out=json`` (which reaches the running
minion over its event bus) and writes ``tests/golden/beacons/expected.json``: a list of ``{"name",
"args", "rc", "data"}``, the config folder masked as ``@CONF@``. Stops what it started by pid. A
dev tool: it needs the reference Salt (``../shared/tools/salt-reference.sh``); the test suite
never runs it.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import signal
import subprocess
import tempfile
import time

import yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASE = ROOT / "tests" / "golden" / "beacons"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--saltref", default=pathlib.Path(tempfile.gettempdir()) / "saltref", type=pathlib.Path)
    a = p.parse_args()
    spec = yaml.safe_load((CASE / "calls.yaml").read_text())
    work = pathlib.Path(tempfile.mkdtemp(prefix="beacons-golden-"))
    conf = work / "etc"
    conf.mkdir()
    minion = {
        "id": "solo",
        "master_type": "disable",
        "file_client": "local",
        "root_dir": str(work / "root"),
        "file_roots": {"base": [str(work / "srv")]},
        "log_file": str(work / "minion.log"),
        **spec["config"],
    }
    (conf / "minion").write_text(yaml.safe_dump(minion))
    proc = subprocess.Popen(
        [str(a.saltref / "bin" / "salt-minion"), "-c", str(conf)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not list((work / "root").rglob("minion_event_*_pull.ipc")):
            if time.monotonic() > deadline or proc.poll() is not None:
                raise SystemExit(f"the reference salt-minion did not start its event bus ({work})")
            time.sleep(0.2)
        out = []
        for name, *args in spec["calls"]:
            done = subprocess.run(
                [str(a.saltref / "bin" / "salt-call"), "--local", "-c", str(conf), *map(str, args), "--out=json"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            data = json.loads(done.stdout)["local"] if done.stdout.strip() else None
            text = json.dumps(data).replace(str(conf), "@CONF@")
            out.append({"name": name, "args": args, "rc": done.returncode, "data": json.loads(text)})
            print(name, done.returncode)
        (CASE / "expected.json").write_text(json.dumps(out, indent=1) + "\n")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
