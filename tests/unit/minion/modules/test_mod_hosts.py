"""The hosts format (briny.minion.host.sysfiles.hosts) and the ``hosts`` execution module on a temporary hosts file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from briny.common.exceptions import CommandExecutionError
from briny.common.loader import minion_mods
from briny.minion.host.sysfiles import hosts

TEXT = "# table\n\n127.0.0.1   localhost\n10.0.0.1 a b # note\n10.0.0.1 c\nnot-an-address\n  # indented\n"


@pytest.fixture
def salt(tmp_path: Path):
    return minion_mods({"id": "t", "hosts.file": str(tmp_path / "hosts")}), tmp_path / "hosts"


def test_listing_is_salts_view() -> None:
    assert hosts.listing(hosts.parse(TEXT)) == {
        "comment-0": ["# table"],
        "127.0.0.1": {"aliases": ["localhost"]},
        "10.0.0.1": {"aliases": ["a", "b", "c"], "comment": "note"},
        "not-an-address": {"aliases": []},
        "comment-1": ["# indented"],
    }
    assert hosts.render(hosts.parse(TEXT)) == TEXT


def test_edits_touch_only_their_lines() -> None:
    lines = hosts.parse(TEXT)
    assert hosts.add_name(lines, "10.0.0.1", "d") and not hosts.add_name(lines, "10.0.0.1", "c")
    assert hosts.add_name(lines, "10.0.0.9", "new")
    assert hosts.set_comment(lines, "10.0.0.1", "changed") and not hosts.set_comment(lines, "10.0.0.1", "changed")
    assert hosts.render(lines) == (
        "# table\n\n127.0.0.1   localhost\n10.0.0.1\t\ta b d\t\t# changed\n10.0.0.1 c\nnot-an-address\n"
        "  # indented\n10.0.0.9\t\tnew\n"
    )
    assert hosts.remove_name(lines, "10.0.0.1", "b") and not hosts.remove_name(lines, "10.0.0.1", "b")
    assert hosts.remove_name(lines, "10.0.0.1", "c")
    assert "10.0.0.1\t\ta d # changed\n" in hosts.render(lines) and "10.0.0.1 c" not in hosts.render(lines)
    hosts.set_names(lines, "10.0.0.1", "x y")
    hosts.set_names(lines, "127.0.0.1", "")
    assert hosts.render(lines) == "# table\n\n10.0.0.1\t\tx y\nnot-an-address\n  # indented\n10.0.0.9\t\tnew\n"


def test_execution_functions(salt) -> None:
    salt, path = salt
    path.write_text(TEXT)
    os.chmod(path, 0o640)
    assert salt["hosts.list_hosts"]()["10.0.0.1"] == {"aliases": ["a", "b", "c"], "comment": "note"}
    assert salt["hosts.get_ip"]("c") == "10.0.0.1" and salt["hosts.get_ip"]("nope") == ""
    assert salt["hosts.get_alias"]("10.0.0.1") == ["a", "b", "c"] and salt["hosts.get_alias"]("1.1.1.1") == []
    assert salt["hosts.has_pair"]("10.0.0.1", ["a", "c"]) and not salt["hosts.has_pair"]("10.0.0.1", "z")
    assert salt["hosts.add_host"]("10.0.0.2", "web") is True
    assert salt["hosts.set_comment"]("10.0.0.2", "managed") is True
    assert salt["hosts.set_comment"]("10.9.9.9", "x") is False
    assert salt["hosts.rm_host"]("10.0.0.1", "c") is True
    assert salt["hosts.set_host"]("127.0.0.1", "localhost lh", comment="loop") is True
    assert path.read_text() == (
        "# table\n\n127.0.0.1\t\tlocalhost lh\t\t# loop\n10.0.0.1 a b # note\nnot-an-address\n  # indented\n"
        "10.0.0.2\t\tweb\t\t# managed\n"
    )
    assert path.stat().st_mode & 0o777 == 0o640


def test_a_missing_file_is_created_and_a_folder_refused(salt, tmp_path: Path) -> None:
    salt, path = salt
    assert salt["hosts.list_hosts"]() == {} and not path.exists()
    assert salt["hosts.add_host"]("10.0.0.1", "one") is True
    assert path.read_text() == "10.0.0.1\t\tone\n"
    path.unlink()
    path.mkdir()
    assert salt["hosts.add_host"]("10.0.0.1", "one") is False
    with pytest.raises(CommandExecutionError, match=r"^Error 21 encountered reading from .*hosts: Is a directory"):
        salt["hosts.list_hosts"]()


def test_bytes_that_are_not_utf8_survive(salt) -> None:
    salt, path = salt
    path.write_bytes(b"10.0.0.1\tcaf\xe9\n")
    assert salt["hosts.add_host"]("10.0.0.2", "b") is True
    assert path.read_bytes() == b"10.0.0.1\tcaf\xe9\n10.0.0.2\t\tb\n"
