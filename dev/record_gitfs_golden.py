#!/usr/bin/env python3
"""Record what the reference Salt serves through gitfs for the cases of ``tests/golden/gitfs``.

    python3 dev/record_gitfs_golden.py [--saltref /tmp/saltref] [NAME ...]

For each case of ``tests/golden/gitfs/cases.yaml``: makes its bare repositories (the tests'
own helper, ``tests/unit/master/gitfs_cases.py``), starts a real ``salt-master`` with the
case's gitfs config and one minion (``record_orch_golden.SaltFleet``: 127.0.0.1, free ports,
private folders; Salt's gitfs uses GitPython from the reference's venv), runs
``fileserver.update``, each ``runs`` call with ``salt-run --out=json`` and each ``minion``
call with ``salt '*' ... --out=json``, and writes ``expected/NAME.json``. Stops what it
started by pid. A dev tool: the test suite never runs it.
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
sys.path.insert(0, str(ROOT))
from tests.unit.master import gitfs_cases

CASE = ROOT / "tests" / "golden" / "gitfs"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*")
    ap.add_argument("--saltref", default=os.path.join(tempfile.gettempdir(), "saltref"))
    a = ap.parse_args()
    cases = gitfs_cases.cases()
    out_dir = CASE / "expected"
    out_dir.mkdir(exist_ok=True)
    for name in a.names or list(cases):
        work = pathlib.Path(tempfile.mkdtemp(prefix=f"gitfsgold-{name}-", dir="/tmp"))
        tree = work / "tree"
        tree.mkdir()
        fleet = orch.SaltFleet(pathlib.Path(a.saltref), work / "salt", tree=tree, minions={"m1": {}})
        conf_file = fleet.master_conf / "master"
        master = yaml.safe_load(conf_file.read_text())
        master.update(gitfs_cases.build(cases[name], work / "repos"))
        master["gitfs_provider"] = "gitpython"
        conf_file.write_text(yaml.safe_dump(master))
        record: dict[str, object] = {"runs": {}, "minion": {}}
        try:
            fleet.start()
            rc, data, err = fleet.run_json(["fileserver.update"])
            print(name, "update", rc, data, err.strip()[-300:])
            for call in cases[name]["runs"]:
                rc, data, err = fleet.run_json([str(x) for x in call])
                record["runs"][" ".join(call)] = data  # type: ignore[index]
                print(name, call, rc, err.strip()[-200:])
            for call in cases[name].get("minion", []):
                p = subprocess.run(
                    [str(fleet.bin / "salt"), "-c", str(fleet.master_conf), "m1", *call, "--out=json", "--static"],
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                record["minion"][" ".join(call)] = json.loads(p.stdout or "{}").get("m1")  # type: ignore[index]
                print(name, call, p.returncode, p.stderr.strip()[-200:])
        finally:
            fleet.stop()
        text = json.dumps(record, indent=1, sort_keys=True).replace(str(work), "{work}")
        (out_dir / f"{name}.json").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
