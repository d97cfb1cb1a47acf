"""The runners over the master's cache (cache.*, mine.get), salt.cmd, doc.runner and
sys.list_runners, through briny-run, compared with what salt-run 3007.17 answered
(tests/golden/runners, recorded by dev/record_runner_golden.py).

The master's cache folder is filled the way the daemon fills it: grains through the grains
cache on a loop, each minion's pillar by its ``pillar`` request (compiled from the golden's
pillar tree and kept on disk), each mine by a ``mine`` update of what the minion's
``mine_functions`` return (run with briny's execution modules).
"""

from __future__ import annotations

import asyncio
import io
import json
import types
from pathlib import Path
from typing import Any

import pytest
import yaml

from briny.common import loader
from briny.common.config import load_master_config
from briny.master import runcli
from briny.master.grainscache import GrainsCache
from briny.master.mine import MineStore
from briny.master.pillar import MinionPillars
from briny.master.pillarcache import PillarFiles
from briny.master.runners import list_modules
from tests.golden.goldenlib import runner_shape

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "runners"
CALLS = yaml.safe_load((GOLDEN / "calls.yaml").read_text())
MINIONS = yaml.safe_load((GOLDEN / "minions.yaml").read_text())
# shown with the master's cache alone (doc.execution asks the minions: tests/e2e/test_runners.py)
OFFLINE = [n for n in CALLS if n != "doc_execution"]
# briny's own runners, which Salt does not have (README.md says so)
BRINY_ONLY = {"jobs.list_events"}


def expected(name: str) -> dict[str, Any]:
    return json.loads((GOLDEN / "expected" / f"{name}.json").read_text())


def mine_data(extra: dict[str, Any]) -> dict[str, Any]:
    """What a minion's ``mine_functions`` return, run with briny's execution modules."""
    mods = loader.minion_mods({"__role": "minion"}, {}, {})
    out: dict[str, Any] = {}
    for alias, spec in extra["mine_functions"].items():
        args = list(spec)
        fun = alias
        if args and isinstance(args[0], dict) and "mine_function" in args[0]:
            fun = args.pop(0)["mine_function"]
        out[alias] = mods[fun](*args)
    return out


@pytest.fixture
def master(tmp_path: Path, pubkeys: list[str]) -> Path:
    """A master config dir whose cache holds what two minions (web1, db1) left there."""
    conf = tmp_path / "conf"
    conf.mkdir()
    root = tmp_path / "root"
    (conf / "master").write_text(
        yaml.safe_dump(
            {
                "root_dir": str(root),
                "pki_dir": "pki",
                "cachedir": "cache",
                "sock_dir": "sock",
                "pillar_roots": {"base": [str(GOLDEN / "pillar")]},
                "file_roots": {"base": [str(GOLDEN / "tree")]},
            }
        )
    )
    opts = load_master_config(conf)
    accepted = Path(opts["pki_dir"]) / "minions"
    accepted.mkdir(parents=True, exist_ok=True)
    grains = GrainsCache(opts["cachedir"])

    async def report() -> None:
        for i, (mid, extra) in enumerate(MINIONS.items()):
            (accepted / mid).write_text(pubkeys[i])
            grains.put(mid, {"id": mid, "os": "Debian", **extra["grains"]})

    asyncio.run(report())
    grains.flush()
    pillars = MinionPillars(opts, grains.get)
    mines = MineStore(opts, grains.get)
    for mid, extra in MINIONS.items():
        answer = pillars.handle_request(types.SimpleNamespace(id=mid), {})
        assert "pillar" in answer, answer
        assert mines.answer(mid, {"op": "update", "data": mine_data(extra)}) == {"ok": True}
    grains.close()
    return conf


def briny_run(conf: Path, *args: str) -> tuple[int, Any]:
    out, err = io.StringIO(), io.StringIO()
    rc = runcli.run(["-c", str(conf), "--out", "json", *args], out=out, err=err)
    text = out.getvalue()
    return rc, json.loads(text) if text.strip() else err.getvalue()


@pytest.mark.parametrize("name", OFFLINE)
def test_runner_answers_what_salt_answers(master: Path, name: str) -> None:
    call, golden = CALLS[name], expected(name)
    rc, data = briny_run(master, *golden["args"])
    data = runner_shape(data, call)
    if name == "sys_list_runners":  # a minion's execution function, not a runner, in Salt too
        assert data == golden["data"] == "'sys.list_runners' is not available."
        assert rc == 1  # salt-run exits 0 there; briny-run fails (runcli's docstring)
    elif name.startswith("salt_cmd_list_runners"):
        assert rc == golden["rc"] == 0
        assert data and set(data) <= set(golden["data"])  # Salt has runners briny has not (yet)
        assert set(data) == {m for m in list_modules() if any(f"{m}.".startswith(p.rstrip("*")) for p in data)}
    elif name == "doc_runner":
        assert rc == golden["rc"] == 0
        assert set(data) - BRINY_ONLY <= set(golden["data"]), set(data) - BRINY_ONLY - set(golden["data"])
        assert all(v == "@DOC@" or v is None for v in data.values())  # {function: its docstring}
        for fun in (
            "cache.grains",
            "cache.pillar",
            "cache.mine",
            "mine.get",
            "salt.cmd",
            "doc.runner",
            "jobs.list_jobs",
        ):
            assert data[fun] == "@DOC@"
    else:
        assert (rc, data) == (golden["rc"], golden["data"])


def test_pillar_targets_read_the_pillar_each_minion_last_got(master: Path) -> None:
    opts = load_master_config(master)
    files = PillarFiles(opts)
    assert files.ids() == ["db1", "web1"]
    files.store("web1", {"role": "db"})  # a later fetch, after a pillar edit
    assert briny_run(master, "cache.pillar", "role:db", "tgt_type=pillar") == (
        0,
        {"db1": {"role": "db", "ports": [5432]}, "web1": {"role": "db"}},
    )
    files.remove("db1")  # its key was deleted
    assert briny_run(master, "cache.pillar") == (0, {"web1": {"role": "db"}})
    assert briny_run(master, "cache.pillar", "db1") == (0, {"db1": {}})  # targeted, never fetched


def test_a_deleted_key_leaves_the_caches_out(master: Path) -> None:
    opts = load_master_config(master)
    (Path(opts["pki_dir"]) / "minions" / "db1").unlink()
    assert briny_run(master, "cache.mine") == (0, {"web1": {"greeting": "hello web1", "test.ping": True}})
    assert briny_run(master, "cache.pillar")[1].keys() == {"web1"}
    assert briny_run(master, "mine.get", "*", "test.ping") == (0, {"web1": True})


def test_bad_input_fails_with_a_clear_error(master: Path) -> None:
    rc, err = briny_run(master, "cache.grains")
    assert rc == 1 and "cache.grains" in err and "tgt" in err
    rc, err = briny_run(master, "cache.grains", "x", "tgt_type=bogus")
    assert rc == 1 and "bogus" in err
    rc, err = briny_run(master, "mine.get", "*")
    assert rc == 1 and "fun" in err
    rc, err = briny_run(master, "salt.cmd")
    assert rc == 1 and "fun" in err
    rc, err = briny_run(master, "salt.cmd", "file.read", "/nonexistent/briny")
    assert rc == 1 and "salt.cmd" in err


def test_salt_cmd_with_pillar_compiles_the_masters_own(tmp_path: Path) -> None:
    pillar = tmp_path / "pillar"
    pillar.mkdir()
    (pillar / "top.sls").write_text("base:\n  'boss_master':\n    - boss\n")
    (pillar / "boss.sls").write_text("role: boss\n")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "master").write_text(f"id: boss_master\nroot_dir: {tmp_path}\npillar_roots: {{base: [{pillar}]}}\n")
    assert briny_run(conf, "salt.cmd", "pillar.get", "role") == (0, "")
    assert briny_run(conf, "salt.cmd", "pillar.get", "role", "with_pillar=True") == (0, "boss")
    assert briny_run(conf, "salt.cmd", "grains.get", "id") == (0, "boss_master")
