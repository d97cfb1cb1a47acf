"""The gitfs golden cases (``tests/golden/gitfs/cases.yaml``): their repositories and master config."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.unit.master.gitrepos import commit, git, make_repo

CASES_FILE = Path(__file__).resolve().parents[2] / "golden" / "gitfs" / "cases.yaml"


def cases() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(CASES_FILE.read_text())
    return loaded


def build(case: dict[str, Any], repos: Path) -> dict[str, Any]:
    """Make the case's bare repositories under ``repos``; its master config with ``{repos}`` filled."""
    repos.mkdir(parents=True, exist_ok=True)
    for name, steps in case["repos"].items():
        first = steps[0]
        _bare, work = make_repo(repos, name, first.get("files", {}), branch=first["branch"])
        for step in steps[1:]:
            if "tag" in step:
                git("tag", step["tag"], cwd=work)
                git("push", "-q", "origin", step["tag"], cwd=work)
            else:
                commit(work, step.get("files", {}), branch=step["branch"])
    text = yaml.safe_dump(case["master"]).replace("{repos}", str(repos))
    master: dict[str, Any] = yaml.safe_load(text)
    return master
