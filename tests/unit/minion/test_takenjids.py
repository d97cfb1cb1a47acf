"""The jids a minion took survive its restart, in a file that stays bounded."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from briny.minion.takenjids import TakenJids


def test_a_new_instance_on_the_same_file_knows_the_jids_taken_before(tmp_path: Path) -> None:
    path = tmp_path / "cache" / "jids_taken"
    first = TakenJids(path)
    first.add("20261124000000000001")
    first.add("20261124000000000002")
    again = TakenJids(path)  # the daemon restarted (killed: nothing was closed)
    assert "20261124000000000001" in again and "20261124000000000002" in again
    assert "20261124000000000003" not in again
    assert (path.stat().st_mode & 0o777) == 0o600


def test_only_the_last_jids_are_kept_and_the_file_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "jids_taken"
    taken = TakenJids(path, keep=5)
    for n in range(23):
        taken.add(f"j{n}")
        assert len(path.read_text().splitlines()) <= 10
    assert len(taken) == 5 and "j22" in taken and "j17" not in taken
    assert set(TakenJids(path, keep=5)._jids) == {f"j{n}" for n in range(18, 23)}


def test_a_damaged_file_gives_what_is_readable(tmp_path: Path) -> None:
    path = tmp_path / "jids_taken"
    path.write_bytes(b"j1\n\x00\x01garbage\n\n\xff\xfe\nj3\n")
    taken = TakenJids(path)
    assert "j1" in taken and "j3" in taken and len(taken) == 3  # the control characters' line is dropped
    assert not any("\x00" in jid for jid in taken._jids)


def test_an_unwritable_place_warns_and_still_remembers_in_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    taken = TakenJids(blocker / "jids_taken")  # a path under a regular file
    with caplog.at_level(logging.WARNING):
        taken.add("j1")
    assert "j1" in taken
    assert "a restart may run it again" in caplog.text


def test_without_a_path_nothing_is_written(tmp_path: Path) -> None:
    taken = TakenJids(None)
    taken.add("j1")
    assert "j1" in taken and list(tmp_path.iterdir()) == []
