"""common/daemonize.with_pidfile: the pidfile a daemon runs under (briny-master, briny-api)."""

from __future__ import annotations

import os
from pathlib import Path

from briny.common.daemonize import with_pidfile


def test_the_pidfile_names_this_process_while_main_runs_and_is_gone_after(tmp_path: Path) -> None:
    path = tmp_path / "run" / "d.pid"
    seen: list[str] = []

    def main() -> int:
        seen.append(path.read_text())
        return 7

    assert with_pidfile("briny-test", str(path), None, main) == 7
    assert seen == [f"{os.getpid()}\n"] and not path.exists()


def test_a_pidfile_that_cannot_be_written_is_told_to_the_parent_and_nothing_runs(tmp_path: Path) -> None:
    (tmp_path / "notadir").write_text("a file where the pidfile's folder should be")
    path = tmp_path / "notadir" / "d.pid"
    read_end, write_end = os.pipe()
    ran: list[bool] = []
    try:
        assert with_pidfile("briny-test", str(path), write_end, lambda: ran.append(True) or 0) == 1
        told = os.read(read_end, 4096).decode()
    finally:
        os.close(read_end)
    assert ran == []
    assert told.startswith(f"briny-test: cannot write the pidfile {path}: "), told
