"""host.present / absent / only on a temporary hosts file (``hosts.file`` in the opts).

Salt's answers for the same kinds of cases are in tests/golden/files (host_*);
here: second runs, bad input and the deliberate differences.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from briny.common import loader


def _states(path: Path, test: bool = False) -> Any:
    opts = {"test": test, "id": "t", "hosts.file": str(path)}
    return loader.states(opts, loader.minion_mods(opts))


def test_present_several_addresses_in_order_then_quiet(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("127.0.0.1\tlocalhost\n10.0.0.9\tweb.example\n")
    dry = _states(path, test=True)["host.present"]("web.example", ["10.0.0.1", "10.0.0.2"], comment="c", clean=True)
    assert dry["result"] is None and path.read_text() == "127.0.0.1\tlocalhost\n10.0.0.9\tweb.example\n"
    assert dry["comment"].splitlines() == [
        "Host web.example (10.0.0.1) would be added",
        "Host web.example (10.0.0.2) would be added",
        "Comment for 10.0.0.1 (c) would be added",
        "Comment for 10.0.0.2 (c) would be added",
        "Host web.example (10.0.0.9) would be removed",
    ]
    st = _states(path)
    ret = st["host.present"]("web.example", ["10.0.0.1", "10.0.0.2"], comment="c", clean=True)
    assert ret["changes"] == {
        "added": {"10.0.0.1": ["web.example"], "10.0.0.2": ["web.example"]},
        "comment_added": {"10.0.0.1": ["c"], "10.0.0.2": ["c"]},
        "removed": {"10.0.0.9": ["web.example"]},
    }
    assert path.read_text() == "127.0.0.1\tlocalhost\n10.0.0.1\t\tweb.example\t\t# c\n10.0.0.2\t\tweb.example\t\t# c\n"
    again = st["host.present"]("web.example", ["10.0.0.1", "10.0.0.2"], comment="c", clean=True)
    assert (again["changes"], again["result"]) == ({}, True)
    assert (
        again["comment"] == "Host web.example (10.0.0.1) already present\nHost web.example (10.0.0.2) already present"
    )


def test_a_comment_alone_is_a_change_with_result_true_in_test_mode(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("10.0.0.1\t\tweb\n")
    dry = _states(path, test=True)["host.present"]("web", "10.0.0.1", comment="new")
    assert (dry["result"], dry["changes"]) == (True, {"comment_added": {"10.0.0.1": ["new"]}})


def test_absent_and_only_second_runs(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("10.0.0.1\t\ta b\n")
    st = _states(path)
    assert st["host.absent"]("a", ["10.0.0.1"])["changes"] == {"host": "a"}
    ret = st["host.absent"]("a", ["10.0.0.1"])
    assert (ret["result"], ret["comment"], ret["changes"]) == (True, "Host a (10.0.0.1) already absent", {})
    ret = st["host.only"]("10.0.0.1", [])
    assert ret["changes"] == {"10.0.0.1": {"old": "b", "new": ""}} and path.read_text() == ""
    assert st["host.only"]("10.0.0.1", [])["comment"] == 'IP address 10.0.0.1 already set to ""'


def test_bad_input_fails_that_state_and_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "hosts"
    path.write_text("10.0.0.1\t\ta\n")
    st = _states(path)
    ret = st["host.present"]("web", ["10.0.0.2", "10.0.0.256", "nonsense"])
    assert ret["result"] is False
    assert ret["comment"] == "Invalid IP Address for web (10.0.0.256)\nInvalid IP Address for web (nonsense)"
    ret = st["host.present"]("two names", "10.0.0.2")
    assert ret["result"] is False and ret["comment"].startswith("Invalid host name 'two names'")
    ret = st["host.only"]("10.0.0.1", ["ok", "bad#name"])
    assert ret["result"] is False and "bad#name" in ret["comment"]
    assert st["host.only"]("nope", ["x"])["comment"] == "Invalid IP Address nope"
    assert path.read_text() == "10.0.0.1\t\ta\n"
    (tmp_path / "dir").mkdir()
    ret = _states(tmp_path / "dir")["host.present"]("web", "10.0.0.2")
    assert ret["result"] is False and ret["comment"].endswith("/dir: Is a directory")
    ret = _states(tmp_path / "dir")["host.absent"]("web", "10.0.0.2")
    assert ret["result"] is False and ret["comment"].startswith("Error 21 encountered reading from")
