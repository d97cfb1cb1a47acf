#!/usr/bin/env python3
"""Targeting N minions (default 5000) through the master's grains cache, against a plain dict.

What one publish costs the worker that targets it: ``check_minions`` over N
accepted ids with the grains of each read through
:meth:`briny.master.grainscache.GrainsCache.get` (a lock per read: the
cache's thread rule, ``docs/DEVELOPING.md`` "Threads"), compared with the
same match over a plain dict (what it cost before the lock), for a glob, a
grain and a compound target. Best of 7 runs each, in milliseconds. The
grains are put on an asyncio loop, as the master does.

    .venv/bin/python bench/targeting.py [N]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time

from briny.master.grainscache import GrainsCache
from briny.master.targeting import check_minions

TARGETS = (("web*", "glob"), ("os:Debian", "grain"), ("G@os:Debian and web*", "compound"))


def best(fn, runs: int = 7) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    ids = [f"web{i}" if i % 2 else f"db{i}" for i in range(n)]
    plain = {m: {"id": m, "os": "Debian" if k % 3 else "Arch", "num_cpus": 4} for k, m in enumerate(ids)}
    with tempfile.TemporaryDirectory() as tmp:
        cache = GrainsCache(tmp)

        async def fill() -> None:
            for minion_id, grains in plain.items():
                cache.put(minion_id, grains)

        asyncio.run(fill())
        cache.close()
        print(f"targeting {n} minions (best of 7, ms)    cache.get (locked)   plain dict")
        for tgt, kind in TARGETS:
            locked = best(lambda tgt=tgt, kind=kind: check_minions(tgt, kind, ids, cache.get))
            bare = best(lambda tgt=tgt, kind=kind: check_minions(tgt, kind, ids, plain.get))
            print(f"  {kind:9} {tgt:28} {locked:12.2f} {bare:14.2f}")
        print(f"  snapshot() of {n} minions: {best(cache.snapshot):.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
