"""Benchmark of the requisite engine alone (no compile): chains and trees of test states.

Usage: ``.venv/bin/python bench/engine.py [SIZES...]``. For each size it builds
low chunks as Salt's compiler prints them, wired with require / watch /
onchanges (a chain, with every tenth state also hanging off a tree root), runs
:func:`briny.common.engine.run_low_chunks` with a tiny in-memory ``test``
state module, and prints the wall time and the ratio to the previous size.
Target: 10,000 states well under 1 s, and doubling at most doubles the time.
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

from briny.common import loader
from briny.common.engine import run_low_chunks

FAKE_TEST = '''
def succeed_with_changes(name, **kwargs):
    return {"name": name, "changes": {"testing": {"old": "Unchanged", "new": "changed"}},
            "result": None if __opts__["test"] else True, "comment": "Success!"}

def succeed_without_changes(name, **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": "Success!"}

def mod_watch(name, **kwargs):
    return {"name": name, "changes": {"watched": True}, "result": True, "comment": "Watch statement fired."}
'''

KINDS = ("require", "watch", "onchanges")


def build(n: int) -> list[dict]:
    chunks = []
    for i in range(n):
        low = {"state": "test", "__id__": f"s{i}", "name": f"s{i}", "__sls__": "bench",
               "__env__": "base", "order": 10000 + i,
               "fun": "succeed_with_changes" if i % 3 else "succeed_without_changes"}
        if i:
            kind = KINDS[i % 3]
            low[kind] = [{"test": f"s{i - 1}"}]
            if i % 10 == 0:
                low.setdefault("require", []).append({"test": "s0"})
        chunks.append(low)
    chunks.reverse()  # arrive in any order; the engine sorts
    return chunks


def run(n: int, states_dir: Path) -> float:
    opts = {"test": False, "id": "bench", "failhard": False}
    salt = loader.minion_mods(opts)
    states = loader.states(opts, salt, extra_dirs=[states_dir])
    chunks = build(n)
    start = time.perf_counter()
    ret = run_low_chunks(chunks, salt=salt, states=states, opts=opts, jid="1")
    elapsed = time.perf_counter() - start
    assert len(ret) == n, len(ret)
    return elapsed


def main(argv: list[str]) -> int:
    sizes = [int(a) for a in argv] or [2500, 5000, 10000, 20000]
    with tempfile.TemporaryDirectory() as tmp:
        states_dir = Path(tmp)
        (states_dir / "test.py").write_text(FAKE_TEST)
        run(200, states_dir)  # warm up imports
        prev = None
        for n in sizes:
            times = []
            for _ in range(3):  # best of three, from a collected heap
                gc.collect()
                times.append(run(n, states_dir))
            t = min(times)
            ratio = f"  x{t / prev:.2f} vs previous" if prev else ""
            print(f"{n:>6} states: {t:.3f} s{ratio}")
            prev = t
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
