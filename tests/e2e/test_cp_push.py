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


def test_briny_cp_sends_files_whole_and_in_chunks(make_fleet: Any, tmp_path: Path) -> None:
    fleet = make_fleet(["c1", "c2"], auto_accept=True, master_opts={"salt_cp_chunk_size": 1000})
    fleet.start()
    src = tmp_path / "src.txt"
    src.write_text("hello\n")
    src.chmod(0o640)
    dest = tmp_path / "dest"
    dest.mkdir()
    res = fleet.cli("briny-cp", "--out", "json", "*", str(src), str(dest))
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.json() == {"c1": {str(dest / "src.txt"): True}, "c2": {str(dest / "src.txt"): True}}
    assert (dest / "src.txt").read_text() == "hello\n"
    missing = fleet.cli("briny-cp", "--out", "json", "c1", str(src), str(tmp_path / "nowhere" / "x" / "y"))
    assert missing.json() == {"c1": "Destination unavailable"} and missing.returncode == 1
    folder = fleet.cli("briny-cp", "c1", str(tmp_path), str(dest))
    assert folder.returncode == 1
    assert 'is a directory, only files are supported in non-chunked mode. Use "--chunked"' in folder.stdout

    tree = tmp_path / "tree"
    (tree / "sub").mkdir(parents=True)
    (tree / "empty").mkdir()
    big = os.urandom(5000)  # six chunks of 1000 bytes
    (tree / "sub" / "big.bin").write_bytes(big)
    (tree / "sub" / "big.bin").chmod(0o600)
    (tree / "a.txt").write_text("a")
    out = tmp_path / "out"
    for flags in (["-C"], ["-C", "-n"]):
        res = fleet.cli("briny-cp", *flags, "--out", "json", "-L", "c1", str(tree), str(out) + "/")
        assert res.returncode == 0, res.stdout + res.stderr
        assert res.json() == {
            "c1": {
                str(out / "tree" / "a.txt"): True,
                str(out / "tree" / "sub" / "big.bin"): True,
                str(out / "tree" / "empty"): True,
            }
        }
        assert (out / "tree" / "sub" / "big.bin").read_bytes() == big
        assert oct((out / "tree" / "sub" / "big.bin").stat().st_mode & 0o777) == "0o600"
        assert (out / "tree" / "empty").is_dir() and (out / "tree" / "a.txt").read_text() == "a"
    assert fleet.cli("briny-cp", "-C", "--out", "json", "c1", str(src), str(tmp_path / "one.txt")).json() == {
        "c1": {str(tmp_path / "one.txt"): True}
    }
    assert (tmp_path / "one.txt").read_text() == "hello\n" and oct(
        (tmp_path / "one.txt").stat().st_mode & 0o777
    ) == "0o640"
    none = fleet.cli("briny-cp", "nobody*", str(src), str(dest))
    assert none.returncode == 2 and "No minions matched" in none.stdout
