"""Minion id and jid validation (common/ids.py)."""

import pytest

from briny.common.exceptions import SaltInvocationError
from briny.common.ids import check_id, check_jid, valid_id, valid_jid


@pytest.mark.parametrize(
    "good", ["web1", "web1.example.com", "a", "db_01-x", "x" * 255, "a..b", "münchen", "minion@site", "host:1"]
)
def test_valid_ids(good):
    assert valid_id(good)
    assert check_id(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "",
        ".",
        "..",
        "../x",
        "a/b",
        "/etc/passwd",
        "a\\b",
        "a\x00b",
        "\x00",
        "x" * 256,
        "-rf",
        ".hidden",
        ".m1",
        "tab\there",
        "new\nline",
        "bell\x07",
        "del\x7f",
        None,
        5,
        b"bytes",
        ["list"],
    ],
)
def test_hostile_ids_refused(bad):
    assert not valid_id(bad)
    with pytest.raises(SaltInvocationError) as exc:
        check_id(bad)
    assert "Invalid minion id" in str(exc.value)


def test_check_id_message_names_the_problem():
    with pytest.raises(SaltInvocationError, match="must not contain '/'"):
        check_id("a/b")
    with pytest.raises(SaltInvocationError, match="must not be empty"):
        check_id("")
    with pytest.raises(SaltInvocationError, match="must not start with '.'.*briny-key"):
        check_id(".hidden")


@pytest.mark.parametrize(
    "jid,ok",
    [
        ("20240105123456123456", True),
        ("2024010512345612345", False),
        ("202401051234561234567", False),
        ("2024010512345612345a", False),
        ("../../../../etc/pass", False),
        ("２０２４０１０５１２３４５６１２３４５６", False),  # non-ASCII digits
        (20240105123456123456, False),
        (None, False),
    ],
)
def test_valid_jid(jid, ok):
    assert valid_jid(jid) is ok
    if not ok:
        with pytest.raises(SaltInvocationError):
            check_jid(jid)
    else:
        assert check_jid(jid) == jid


def test_other_minion_names_who_else_a_request_asks_about():
    from briny.common.ids import other_minion

    assert other_minion({}, "web1") is None
    assert other_minion({"id": "web1", "tgt": "web1", "saltenv": "x"}, "web1") is None
    assert other_minion({"minion_id": "db1"}, "web1") == "'db1'"
    assert other_minion({"id": "web1", "tgt": "*"}, "web1") == "'*'"
    assert other_minion({"tgt": "x" * 100}, "web1") == repr("x" * 64)
    assert other_minion({"id": 7}, "web1") == "'7'"
