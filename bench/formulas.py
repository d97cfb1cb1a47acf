#!/usr/bin/env python3
"""How long ``state.sls ... test=True`` takes on the eight public formulas, briny against Salt.

For each formula of the corpus (``../shared/formulas/corpus.json``: the
saltstack-formulas trees issue 10 measures with), runs its first SLS case
with ``salt-call --local`` (the reference Salt 3007, ``/tmp/saltref``) and
with briny's ``briny-call --local`` (this checkout's ``.venv``), both with the
same minion config written by ``formulas.py --setup`` (``$FORMULAS/_conf/<name>``),
``--runs`` times each, alternating, and prints the median wall time of each
(the whole command: start, compile, the test run, output) and Salt / briny.
The last line is the sum over the eight formulas. Nothing on the host
changes (test=True runs only).

Run (after ``python3 ../shared/tools/formulas.py --setup`` once):

    .venv/bin/python bench/formulas.py [--runs 3] [-k SUBSTR]

Environment: ``FORMULAS`` (default ``<tempdir>/formulas``), ``SALT_CALL``,
``BRINY_CALL``, ``FORMULAS_CORPUS`` (the corpus.json to read), as the
formulas tool takes them.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
ROOT = os.environ.get("FORMULAS", os.path.join(tempfile.gettempdir(), "formulas"))
SALT = os.environ.get("SALT_CALL", os.path.join(tempfile.gettempdir(), "saltref", "bin", "salt-call"))
BRINY = os.environ.get("BRINY_CALL", str(HERE / ".venv" / "bin" / "briny-call"))


def corpus_path() -> Path:
    given = os.environ.get("FORMULAS_CORPUS")
    if given:
        return Path(given)
    for base in (HERE.parent, HERE.parent.parent, Path("/work")):
        cand = base / "shared" / "formulas" / "corpus.json"
        if cand.exists():
            return cand
    sys.exit("corpus.json not found: set FORMULAS_CORPUS")


def run_once(tool: str, name: str, sls: str) -> tuple[float, int]:
    """(wall seconds, number of states in the result) of one test=True run."""
    cmd = [tool, "--local", "-c", f"{ROOT}/_conf/{name}", "state.sls", sls, "test=True", "--out=json"]
    start = time.perf_counter()
    p = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=600)
    took = time.perf_counter() - start
    try:
        states = len(json.loads(p.stdout)["local"])
    except (ValueError, KeyError, TypeError):
        states = -1
    return took, states


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-k", default="", help="only formulas whose name contains this")
    o = ap.parse_args()
    formulas = json.loads(corpus_path().read_text())["formulas"]
    print(f"state.sls <first case> test=True, median of {o.runs} runs (seconds, wall)")
    print(f"{'formula':<10} {'sls':<24} {'states':>6} {'salt':>7} {'briny':>7} {'salt/briny':>10}")
    tot_s = tot_b = 0.0
    for f in formulas:
        name, sls = f["name"], f["sls"][0]
        if o.k and o.k not in name:
            continue
        if not os.path.isdir(f"{ROOT}/_conf/{name}"):
            print(f"{name:<10} not set up (run formulas.py --setup)")
            continue
        salt_t, briny_t, states = [], [], -1
        for _ in range(o.runs):
            t, _n = run_once(SALT, name, sls)
            salt_t.append(t)
            t, states = run_once(BRINY, name, sls)
            briny_t.append(t)
        ms, mb = statistics.median(salt_t), statistics.median(briny_t)
        tot_s += ms
        tot_b += mb
        short = sls if len(sls) <= 24 else sls[:21] + "..."
        print(f"{name:<10} {short:<24} {states:>6} {ms:>7.2f} {mb:>7.2f} {ms / mb:>9.1f}x")
        sys.stdout.flush()
    if tot_b:
        print(f"{'all':<10} {'':<24} {'':>6} {tot_s:>7.2f} {tot_b:>7.2f} {tot_s / tot_b:>9.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
