"""Benchmark of the requisite engine alone (no compile): chains and trees of test states.

Usage: ``.venv/bin/python bench/engine.py [SIZES...]``. For each size it builds
low chunks as Salt's compiler prints them, wired with require / watch /
onchanges (a chain, with every tenth state also hanging off a tree root), runs
:func:`briny.common.state.engine.run_low_chunks` with a tiny in-memory ``test``
state module, and prints the wall time and the ratio to the previous size.
Target: 10,000 states well under 1 s, and doubling at most doubles the time.

``--e2e`` measures what issue 3's acceptance names instead: the wall time of
``briny-call --local state.sls`` (a new process: start-up, grains, compile,
run, output) on a generated tree of 5,000 / 10,000 / 20,000 test states wired
with require / watch / onchanges. Target: 10,000 states under 2 s (Salt
3007: about 88 s), doubling at most doubles the time (+10%).
"""

from __future__ import annotations

import gc
import sys
import tempfile
import time
from pathlib import Path

from briny.common import loader
from briny.common.state.engine import run_low_chunks
from briny.common.state.runcontext import RunContext

FAKE_TEST = """
def succeed_with_changes(name, **kwargs):
    return {"name": name, "changes": {"testing": {"old": "Unchanged", "new": "changed"}},
            "result": None if __opts__["test"] else True, "comment": "Success!"}

def succeed_without_changes(name, **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": "Success!"}

def mod_watch(name, **kwargs):
    return {"name": name, "changes": {"watched": True}, "result": True, "comment": "Watch statement fired."}
"""

KINDS = ("require", "watch", "onchanges")


def build(n: int) -> list[dict]:
    chunks = []
    for i in range(n):
        low = {
            "state": "test",
            "__id__": f"s{i}",
            "name": f"s{i}",
            "__sls__": "bench",
            "__env__": "base",
            "order": 10000 + i,
            "fun": "succeed_with_changes" if i % 3 else "succeed_without_changes",
        }
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
    ret = run_low_chunks(chunks, RunContext.from_opts(opts, salt, states, jid="1"))
    elapsed = time.perf_counter() - start
    assert len(ret) == n, len(ret)
    return elapsed


def write_tree(root: Path, n: int, per_file: int = 500) -> None:
    """SLS files of test states; state i depends on i-1 by require, watch or onchanges."""
    files = (n + per_file - 1) // per_file
    (root / "gen").mkdir(parents=True)
    (root / "gen" / "init.sls").write_text("include:\n" + "".join(f"  - .p{f}\n" for f in range(files)))
    for f in range(files):
        parts = []
        for i in range(f * per_file, min(n, (f + 1) * per_file)):
            fun = "succeed_with_changes" if i % 3 else "succeed_without_changes"
            parts.append(f"s{i}:\n  test.{fun}:\n    - name: item {i}\n")
            if i:
                parts.append(f"    - {KINDS[i % 3]}:\n      - test: s{i - 1}\n")
        (root / "gen" / f"p{f}.sls").write_text("".join(parts))


def e2e(sizes: list[int]) -> int:
    import subprocess

    prev = None
    worst10k = 0.0
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp:
            tree, conf = Path(tmp) / "srv", Path(tmp) / "etc"
            conf.mkdir()
            write_tree(tree, n)
            (conf / "minion").write_text(
                f"id: bench\nfile_client: local\nroot_dir: {tmp}\nfile_roots:\n  base: [{tree}]\npillar_roots: {{}}\n"
            )
            cmd = [
                sys.executable,
                "-m",
                "briny.minion.call",
                "--local",
                "-c",
                str(conf),
                "state.sls",
                "gen",
                "--out=quiet",
            ]
            times = []
            for _ in range(3):
                start = time.perf_counter()
                proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
                times.append(time.perf_counter() - start)
                if proc.returncode != 0:
                    print(proc.stderr[-2000:])
                    return 1
            t = min(times)
            ratio = f"  x{t / prev:.2f} vs previous" if prev else ""
            print(f"briny-call --local state.sls, {n:>6} states: {t:.3f} s{ratio}")
            if n == 10000:
                worst10k = t
            prev = t
    if worst10k:
        print(f"target: 10,000 states under 2 s -> {worst10k:.3f} s: {'OK' if worst10k < 2 else 'OVER TARGET'}")
    return 0


def main(argv: list[str]) -> int:
    if "--e2e" in argv:
        return e2e([int(a) for a in argv if a.isdigit()] or [5000, 10000, 20000])
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
