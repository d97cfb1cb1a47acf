#!/usr/bin/env python3
"""Record what the reference Salt returns for a folder of sandbox cases.

    python3 dev/record_sandbox_golden.py CASES_DIR OUT_DIR [CASE ...] [--salt-call PATH]

The same runs, layout, masks and output (OUT_DIR/NAME.json with "run",
"test" and "low") as ../shared/tools/salt-golden.py, built by
tests/golden/goldenlib.py so the recorder and the test harness lay cases out
alike, plus one thing salt-golden.py has not: a case's ``NAME.minion`` file
(YAML, @SANDBOX@ replaced) is appended to the minion config, for cases that
need a config key (``hosts.file`` pointing into the sandbox, ...).

A dev tool: it needs the reference Salt (../shared/tools/salt-reference.sh)
and runs the cases live on this host; the test suite never runs it.
"""

import argparse
import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "golden"))
import goldenlib


def run(salt_call, cases_dir, case, args):
    work = pathlib.Path(tempfile.mkdtemp(prefix="golden-"))
    try:
        conf, sandbox = goldenlib.build_requisite_case(work, cases_dir, case=case)
        rc, data = goldenlib.record_call(salt_call, conf, args, work)
        repl = [(str(sandbox), "@SANDBOX@")]
        return {"rc": rc, "data": goldenlib.mask(data, repl), "disk": goldenlib.snapshot(sandbox)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases_dir", type=pathlib.Path)
    ap.add_argument("out_dir", type=pathlib.Path)
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--salt-call", default=os.path.join(tempfile.gettempdir(), "saltref", "bin", "salt-call"))
    a = ap.parse_args()
    a.out_dir.mkdir(parents=True, exist_ok=True)
    for case in a.cases or goldenlib.requisite_cases(a.cases_dir):
        rec = {kind: run(a.salt_call, a.cases_dir, case, make(case)) for kind, make in goldenlib.REQUISITE_RUNS.items()}
        (a.out_dir / f"{case}.json").write_text(json.dumps(rec, indent=1, sort_keys=True) + "\n")
        print(case, " ".join(f"{k}={v['rc']}" for k, v in rec.items()))


if __name__ == "__main__":
    sys.exit(main())
