#!/usr/bin/env python3
"""Record what the reference Salt returns for the compiler golden cases.

    python3 dev/record_golden.py [CASE ...] [--salt-call PATH] [-j N]

For every case under tests/golden/compiler/ (or only those named) it runs
`salt-call --local -c CONF FUN ARGS --out=json` for each call that
tests/golden/goldenlib.py lists (show_top, show_highstate, show_lowstate,
show_sls / show_low_sls for each SLS in case.yaml, extra calls), in a fresh
temporary directory each, and writes tests/golden/compiler/<case>/expected.json.

A dev tool: it needs the reference Salt (../shared/tools/salt-reference.sh);
the test suite never runs it. The requisite corpus is recorded with
../shared/tools/salt-golden.py instead:

    python3 /work/shared/tools/salt-golden.py tests/golden/requisites/cases \
        tests/golden/requisites/expected
"""

import argparse
import concurrent.futures
import json
import os
import pathlib
import shutil
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "golden"))
import goldenlib


def run_call(salt_call, case, args):
    work = pathlib.Path(tempfile.mkdtemp(prefix="golden-"))
    try:
        conf, repl = goldenlib.build_compiler_case(case, work)
        for setup in goldenlib.compiler_setup(case):
            rc, data = goldenlib.record_call(salt_call, conf, setup, work)
            if rc != 0:
                raise RuntimeError(f"{case}: setup {setup} failed ({rc}): {data}")
        rc, data = goldenlib.record_call(salt_call, conf, args, work)
        return {"args": args, "rc": rc, "data": goldenlib.mask(data, repl)}
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--salt-call", default=os.path.join(tempfile.gettempdir(), "saltref", "bin", "salt-call"))
    ap.add_argument("-j", "--jobs", type=int, default=8)
    a = ap.parse_args()
    cases = a.cases or goldenlib.compiler_cases()
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        futures = {
            case: [pool.submit(run_call, a.salt_call, case, call) for call in goldenlib.compiler_calls(case)]
            for case in cases
        }
        for case, futs in futures.items():
            rec = {"calls": [f.result() for f in futs]}
            out = goldenlib.COMPILER / case / "expected.json"
            out.write_text(json.dumps(rec, indent=1) + "\n")
            print(case, " ".join(str(c["rc"]) for c in rec["calls"]))


if __name__ == "__main__":
    sys.exit(main())
