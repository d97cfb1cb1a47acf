#!/usr/bin/env python3
"""How long compiling N generated states takes: SLS text → ordered low chunks.

Prints, for 1,000 and 10,000 states (and 20,000 to show the growth), the
wall time of the whole compile (render the files, build high data, apply
extend / ``_in`` / exclude, make and order the chunks) for two trees:

- ``yaml``:  plain YAML SLS files (100 states per file, included from one init);
- ``jinja``: the same states produced by Jinja loops (``#!jinja|yaml``).

Every state requires the previous one and every tenth watches a file state,
so requisite handling is on the measured path. Target (issue 2): 10,000
states well under a second. Run: ``.venv/bin/python bench/compile.py``.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from briny.common.state.compiler import StateCompiler
from briny.common.config import load_minion_config
from briny.common.fileclient import LocalFileClient
from briny.common.state.stages import RenderEnv

PER_FILE = 100


def make_tree(root: Path, n: int, jinja: bool) -> None:
    files = (n + PER_FILE - 1) // PER_FILE
    (root / "gen").mkdir(parents=True)
    (root / "gen" / "init.sls").write_text("include:\n" + "".join(f"  - .part{f}\n" for f in range(files)))
    for f in range(files):
        lo, hi = f * PER_FILE, min(n, (f + 1) * PER_FILE)
        if jinja:
            text = (
                f"{{% for i in range({lo}, {hi}) %}}\n"
                "state{{ i }}:\n  test.succeed_without_changes:\n    - name: item {{ i }}\n"
                "{% if i > 0 %}    - require:\n      - test: state{{ i - 1 }}\n{% endif %}"
                "{% if i % 10 == 0 %}    - watch_in:\n      - test: state{{ i }}\n{% endif %}"
                "{% endfor %}\n"
            )
        else:
            parts = ["#!yaml\n"]
            for i in range(lo, hi):
                parts.append(f"state{i}:\n  test.succeed_without_changes:\n    - name: item {i}\n")
                if i > 0:
                    parts.append(f"    - require:\n      - test: state{i - 1}\n")
            text = "".join(parts)
        (root / "gen" / f"part{f}.sls").write_text(text)


def measure(n: int, jinja: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        make_tree(Path(tmp), n, jinja)
        opts = load_minion_config(None, {"file_client": "local", "id": "bench", "file_roots": {"base": [tmp]}})
        env = RenderEnv(opts=opts, client=LocalFileClient(opts["file_roots"]), salt={}, grains={}, pillar={})
        start = time.perf_counter()
        compiled = StateCompiler(env).for_sls(["gen"], "base")
        elapsed = time.perf_counter() - start
        if compiled.errors:
            sys.exit(f"compile failed: {compiled.errors[:3]}")
        return elapsed, len(compiled.chunks)


def main() -> int:
    results = {}
    print(f"{'tree':6} {'states':>7} {'seconds':>8} {'states/s':>10}")
    for kind in ("yaml", "jinja"):
        for n in (1000, 10000, 20000):
            secs, count = min(measure(n, kind == "jinja") for _ in range(3))
            assert count == n, (count, n)
            results[(kind, n)] = secs
            print(f"{kind:6} {n:7d} {secs:8.3f} {n / secs:10.0f}")
    for kind in ("yaml", "jinja"):
        ratio = results[(kind, 20000)] / results[(kind, 10000)]
        print(f"{kind}: 20k/10k time ratio {ratio:.2f} (linear = 2.0)")
    worst = max(results[("yaml", 10000)], results[("jinja", 10000)])
    verdict = "OK" if worst < 1.0 else "OVER TARGET"
    print(f"target: 10,000 states under 1 s -> worst {worst:.3f} s: {verdict}")
    return 0 if worst < 1.0 else 1


if __name__ == "__main__":
    sys.exit(main())
