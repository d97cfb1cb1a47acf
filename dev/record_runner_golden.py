#!/usr/bin/env python3
"""Record what the reference Salt's ``salt-run`` answers for the runners of ``tests/golden/runners``.

    python3 dev/record_runner_golden.py [--saltref /tmp/saltref] [NAME ...]

Starts a real ``salt-master`` and the minions of
``tests/golden/runners/minions.yaml`` (``record_orch_golden.SaltFleet``: 127.0.0.1,
free ports, auto_accept, the pillar tree ``tests/golden/runners/pillar``),
waits until they answer, runs ``mine.update`` on them so their mines are
filled, runs each call of ``calls.yaml`` with ``--out=json`` and writes
``expected/NAME.json`` (``args``, exit status ``rc``, masked ``data``). Stops
what it started by pid. A dev tool: the test suite never runs it.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import record_orch_golden as orch  # beside this file

ROOT = orch.ROOT
CASE = ROOT / "tests" / "golden" / "runners"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--saltref", default=os.path.join(tempfile.gettempdir(), "saltref"))
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (logs)")
    a = ap.parse_args()
    calls = yaml.safe_load((CASE / "calls.yaml").read_text())
    minions = yaml.safe_load((CASE / "minions.yaml").read_text())
    names = a.names or list(calls)
    out_dir = CASE / "expected"
    out_dir.mkdir(exist_ok=True)
    fleet_args = {"tree": CASE / "tree", "minions": minions, "pillar": CASE / "pillar"}
    with orch.recording(a.saltref, "rungold-", a.keep, **fleet_args) as (fleet, work):
        subprocess.run(
            [str(fleet.bin / "salt"), "-c", str(fleet.master_conf), "*", "mine.update", "--out=json"],
            capture_output=True,
            timeout=60,
            check=True,
        )
        for name in names:
            call = calls[name]
            args = [str(x) for x in call["args"]]
            rc, data, err = fleet.run_json(args)
            shaped = orch.goldenlib.runner_shape(data, call)
            record = orch.goldenlib.orch_mask({"args": args, "rc": rc, "data": shaped}, str(work))
            (out_dir / f"{name}.json").write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
            print(name, rc, "stderr:", err.strip()[-200:])
    return 0


if __name__ == "__main__":
    sys.exit(main())
