"""Custom ``_modules``, ``_states`` and ``_grains`` on the master reach the minions (issue 6):
synced from the file server before a highstate, then used by states, by jobs, and (grains) by
the master's targeting."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.customtree import CUSTOM_MODULES


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


@pytest.mark.slow
def test_custom_modules_and_states_come_from_the_master(make_fleet, tmp_path):
    fleet = make_fleet(["c1", "c2"], auto_accept=True)
    out = tmp_path / "out"
    out.mkdir()
    write(
        Path(fleet.master_opts["file_roots"]["base"][0]),
        {
            "top.sls": "base:\n  '*':\n    - custom\n",
            "_grains/flavour.py": """
            def flavour():
                return {"flavour": "mint-" + __opts__["id"]}
            """,
            **CUSTOM_MODULES,
            "custom.sls": f"""
            mark:
              marker.present:
                - name: {out}/{{{{ grains['id'] }}}}
                - who: world
            """,
        },
    )
    fleet.start()
    res = fleet.briny("--static", "--out", "json", "*", "state.apply", "-t", "30")
    assert res.returncode == 0, res.stdout + res.stderr
    for minion in ("c1", "c2"):
        assert (out / minion).read_text() == f"hello world from {minion}"
    res = fleet.briny("--static", "--out", "json", "*", "greet.hello", "you")
    assert res.json() == {"c1": "hello you from c1", "c2": "hello you from c2"}
    res = fleet.briny("--static", "--out", "json", "*", "grains.get", "flavour")
    assert res.json() == {"c1": "mint-c1", "c2": "mint-c2"}
    res = fleet.briny("--static", "--out", "json", "-G", "flavour:mint-c2", "test.ping")
    assert res.json() == {"c2": True}
