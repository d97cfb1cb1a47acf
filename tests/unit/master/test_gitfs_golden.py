"""briny's gitfs against the reference Salt's: the cases of tests/golden/gitfs (dev/record_gitfs_golden.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from briny.master.fileserver import FileServer
from briny.master.runners import RunnerContext, get_runner
from tests.unit.master import gitfs_cases

CASES = gitfs_cases.cases()
EXPECTED = gitfs_cases.CASES_FILE.parent / "expected"


def _call(ctx: RunnerContext, call: list[str]) -> Any:
    kwargs = dict(arg.split("=", 1) for arg in call[1:])
    return get_runner(call[0])(ctx, **kwargs)


@pytest.mark.parametrize("name", sorted(CASES))
def test_fileserver_runners_and_master_listing_match_salt(name: str, tmp_path: Path) -> None:
    golden = json.loads((EXPECTED / f"{name}.json").read_text())
    (tmp_path / "tree").mkdir()
    opts = {
        "__role": "master",
        "cachedir": str(tmp_path / "cache"),
        "file_roots": {"base": [str(tmp_path / "tree")]},
        **gitfs_cases.build(CASES[name], tmp_path / "repos"),
    }
    ctx = RunnerContext(opts)
    assert get_runner("fileserver.update")(ctx)["gitfs"]["errors"] == []
    for call in CASES[name]["runs"]:
        assert _call(ctx, call) == golden["runs"][" ".join(call)], call
    for call in CASES[name].get("minion", []):
        if call[0] == "cp.list_master":  # what the master lists for a minion: its file_list
            assert _call(ctx, ["fileserver.file_list", *call[1:]]) == golden["minion"][" ".join(call)], call
        if call[0] == "cp.get_file_str":  # what the master serves for a path: the first remote holding it
            found = FileServer(opts).resolve(call[1].removeprefix("salt://"), "base")
            assert found is not None and Path(found[1]).read_text() == golden["minion"][" ".join(call)], call
