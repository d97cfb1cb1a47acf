#!/usr/bin/env python3
"""Record what the reference Salt answers for the functions corpus (tests/golden/functions).

    python3 dev/record_functions_golden.py [CASE ...] [--salt-call PATH]

Each case of ``tests/golden/functions/calls.yaml`` runs its calls in order with
``salt-call --local`` on one fresh minion (salt-golden.py's layout, built by
tests/golden/goldenlib.py as the test harness builds it), with the corpus's
local HTTP server up; ``expected/CASE.json`` keeps each call's exit status
and masked ``--out=json`` data, what the calls left in the sandbox and the
minion's grains file. A dev tool: it needs the reference Salt
(../shared/tools/salt-reference.sh) and runs the cases on this host; the test
suite never runs it (tests/integration/test_golden_functions.py compares).
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


def record(salt_call, case, port, dns_port):
    work = pathlib.Path(tempfile.mkdtemp(prefix="golden-"))
    old_path = os.environ["PATH"]
    try:
        conf, sandbox, calls = goldenlib.build_functions_case(work, case, port, dns_port)
        os.environ["PATH"] = goldenlib.functions_path(case, sandbox, old_path)
        out = []
        for args in calls:
            rc, data = goldenlib.record_call(salt_call, conf, args, work)
            masked_args = goldenlib.functions_mask(args, sandbox, port)
            out.append({"args": masked_args, "rc": rc, "data": goldenlib.functions_mask(data, sandbox, port)})
        return {"calls": out, **goldenlib.functions_outcome(conf, sandbox, port)}
    finally:
        os.environ["PATH"] = old_path
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="*")
    ap.add_argument("--salt-call", default=os.path.join(tempfile.gettempdir(), "saltref", "bin", "salt-call"))
    a = ap.parse_args()
    goldenlib.FUNCTIONS_EXPECTED.mkdir(parents=True, exist_ok=True)
    port, stop = goldenlib.serve_http()
    dns_port, stop_dns = goldenlib.serve_dns()
    try:
        for case in a.cases or sorted(goldenlib.functions_cases()):
            missing = [c for c in goldenlib.functions_cases()[case].get("needs", []) if not shutil.which(c)]
            if missing:
                sys.exit(f"{case} needs {', '.join(missing)} on this host")
            rec = record(a.salt_call, case, port, dns_port)
            (goldenlib.FUNCTIONS_EXPECTED / f"{case}.json").write_text(json.dumps(rec, indent=1) + "\n")
            print(case, " ".join(str(c["rc"]) for c in rec["calls"]))
    finally:
        stop()
        stop_dns()


if __name__ == "__main__":
    sys.exit(main())
