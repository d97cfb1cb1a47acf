"""The runners over the master's cache and doc.execution through briny-run, on real daemons,
against what salt-run 3007.17 answered on the same fleet (tests/golden/runners).

Two minions (web1, db1) with the golden's grains and ``mine_functions`` connect to a master
serving the golden's pillar tree; after a ``mine.update``, ``briny-run`` reads what the master
cached (grains sent at connect, the pillar each minion fetched, the mines) and asks the minions
for their docs.
"""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import pytest
import yaml

from .support import Fleet

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "golden"))
import goldenlib

pytestmark = pytest.mark.slow

GOLDEN = goldenlib.GOLDEN / "runners"
CALLS = yaml.safe_load((GOLDEN / "calls.yaml").read_text())
MINIONS = yaml.safe_load((GOLDEN / "minions.yaml").read_text())
LIVE = ["cache_grains_all", "cache_grains_grain", "cache_pillar_all", "cache_pillar_pillar", "cache_mine_all"]
LIVE += ["mine_get_several", "mine_get_pillar"]


def expected(name: str) -> dict:
    return yaml.safe_load((GOLDEN / "expected" / f"{name}.json").read_text())


def test_runners_over_a_real_master(tmp_path: Path) -> None:
    fleet = Fleet(
        tmp_path,
        list(MINIONS),
        grains={m: extra["grains"] for m, extra in MINIONS.items()},
        master_opts={"pillar_roots": {"base": [str(GOLDEN / "pillar")]}},
        log_level="warning",
    )
    for mid, extra in MINIONS.items():
        fleet.add_minion(mid, mine_functions=extra["mine_functions"])
    with fleet:
        fleet.start()
        updated = fleet.briny("*", "mine.update", "--out", "json", "--static")
        assert updated.returncode == 0 and updated.json() == {m: True for m in MINIONS}, updated.stdout
        for name in LIVE:
            call, golden = CALLS[name], expected(name)
            res = fleet.run(*golden["args"], "--out", "json")
            assert (res.returncode, goldenlib.runner_shape(res.json(), call)) == (golden["rc"], golden["data"]), name
        docs = fleet.run("doc.execution", "--out", "json")
        assert docs.returncode == 0, docs.stderr
        shown = goldenlib.runner_shape(docs.json(), CALLS["doc_execution"])
        salt_docs = expected("doc_execution")["data"]
        assert shown["test.ping"] == salt_docs["test.ping"] == "@DOC@"
        assert set(shown) - {"test.echo_pid"} <= set(salt_docs)  # briny's own test.echo_pid
        assert all(fnmatch.fnmatchcase(k, "test.*") or k.startswith("sys.list_") for k in shown)
        # a minion whose key is deleted leaves the caches (its pillar file goes with it)
        assert fleet.key("-d", "db1", "-y").returncode == 0
        fleet.wait(
            lambda: set(fleet.run("cache.pillar", "--out", "json").json()) == {"web1"}, 30, "db1 leaves cache.pillar"
        )
        pillar_dir = fleet.master_dir / "cache" / "pillar"
        fleet.wait(lambda: sorted(p.name for p in pillar_dir.iterdir()) == ["web1.msgpack"], 30, "db1's file removed")
