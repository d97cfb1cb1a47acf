"""The os grains of RHEL-family and SUSE hosts equal what Salt 3007 reports for the same
os-release files (tests/golden/grains/, recorded by dev/record_os_grains_golden.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from briny.minion.host import _grains_os

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "grains"
ROOTS = sorted(p.name for p in (GOLDEN / "roots").iterdir())


@pytest.mark.parametrize("root", ROOTS)
def test_os_grains_equal_salt(root: str) -> None:
    want = json.loads((GOLDEN / f"{root}.json").read_text())
    got = _grains_os.os_grains("Linux", "x86_64", str(GOLDEN / "roots" / root))
    assert {k: got.get(k) for k in want} == want
    assert got["osarch"] == "x86_64"
    # No grain Salt leaves out on that host is added.
    lsb_extra = {k for k in got if k.startswith("lsb_distrib_")} - set(want)
    assert not lsb_extra


def test_all_ten_distributions_are_kept() -> None:
    assert len(ROOTS) == 10
    families = {json.loads((GOLDEN / f"{r}.json").read_text())["os_family"] for r in ROOTS}
    assert families == {"RedHat", "Suse"}


def test_release_file_gives_the_release_when_os_release_has_none(tmp_path: Path) -> None:
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "os-release").write_text('NAME="Rocky Linux"\nID="rocky"\nID_LIKE="rhel centos fedora"\n')
    (tmp_path / "etc" / "redhat-release").write_text("Rocky Linux release 9.4 (Blue Onyx)\n")
    got = _grains_os.os_grains("Linux", "x86_64", str(tmp_path))
    assert (got["os"], got["os_family"], got["osrelease"], got["osmajorrelease"]) == ("Rocky", "RedHat", "9.4", 9)
    assert got["osfinger"] == "Rocky Linux-9"
