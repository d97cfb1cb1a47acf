"""Custom ``_modules``, ``_states`` and ``_grains`` on the master reach the minions (issue 6):
synced from the file server before a highstate or with ``sync_mods=`` (never by a plain
``state.sls``, issue 20), then used by states, by jobs, and (grains) by the master's targeting."""

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
    # as Salt's: a state.sls loads only what was synced (nothing yet), unless sync_mods= syncs it
    res = fleet.briny("--static", "--out", "json", "c1", "state.sls", "custom", "-t", "30")
    (ret,) = res.json()["c1"].values()
    assert ret["result"] is False and "'marker.present' is not available." in ret["comment"], ret
    assert not (out / "c1").exists()
    res = fleet.briny("--static", "--out", "json", "c2", "state.sls", "custom", "sync_mods=states,modules", "-t", "30")
    assert res.returncode == 0, res.stdout + res.stderr
    assert (out / "c2").read_text() == "hello world from c2"
    # a highstate syncs everything first
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
