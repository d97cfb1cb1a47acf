"""``cp.push`` through real daemons: the file lands in the master's cachedir per minion; a file over
``file_recv_max_size`` and a hostile ``upload_path`` are refused while the minions keep answering.
Off by default: ``tests/e2e/test_cli_surface.py``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow


def test_push_lands_per_minion_and_refusals_keep_the_minions_serving(make_fleet: Any, tmp_path: Path) -> None:
    fleet = make_fleet(["p1", "p2"], auto_accept=True, master_opts={"file_recv": True, "file_recv_max_size": 1})
    fleet.start()
    src = tmp_path / "payload" / "report.bin"
    src.parent.mkdir()
    body = os.urandom(600 * 1024)  # three chunks of the default file_buffer_size
    src.write_bytes(body)
    res = fleet.briny("--out", "json", "--static", "*", "cp.push", str(src))
    assert res.returncode == 0 and res.json() == {"p1": True, "p2": True}, res.stdout + res.stderr
    files = fleet.master_dir / "cache" / "minions"
    for minion in ("p1", "p2"):
        landed = files / minion / "files" / Path(*src.parts[1:])
        assert landed.read_bytes() == body
    res = fleet.briny("--out", "json", "p1", "cp.push", str(src), "upload_path=/up/here.bin")
    assert res.json() == {"p1": True}
    assert (files / "p1" / "files" / "up" / "here.bin").read_bytes() == body

    big = tmp_path / "big.bin"
    big.write_bytes(b"x" * (1024 * 1024 + 1))
    res = fleet.briny("--out", "json", "p1", "cp.push", str(big))
    assert res.returncode == 0 and res.json() == {"p1": False}
    landed_big = files / "p1" / "files" / Path(*big.parts[1:])
    assert not landed_big.exists() or landed_big.stat().st_size <= 1024 * 1024
    assert "larger than file_recv_max_size (1 MB)" in (fleet.master_dir / "master.log").read_text()

    res = fleet.briny("--out", "json", "p2", "cp.push", str(src), "upload_path=../../../../etc/briny-pwned")
    assert res.json() == {"p2": False}
    assert not Path("/etc/briny-pwned").exists()
    # a symlink planted in a minion's folder is not followed
    outside = tmp_path / "outside"
    outside.mkdir()
    (files / "p2" / "files" / "escape").symlink_to(outside)
    res = fleet.briny("--out", "json", "p2", "cp.push", str(src), "upload_path=/escape/x")
    assert res.json() == {"p2": False}
    assert os.listdir(outside) == []
    assert fleet.briny("--out", "json", "--static", "*", "test.ping").json() == {"p1": True, "p2": True}
