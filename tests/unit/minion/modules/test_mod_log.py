"""``log`` module: messages reach logging at the right level; functions return True."""

from __future__ import annotations

import logging

import pytest


@pytest.mark.parametrize(
    "fun,level",
    [
        ("debug", logging.DEBUG),
        ("info", logging.INFO),
        ("warning", logging.WARNING),
        ("error", logging.ERROR),
        ("critical", logging.CRITICAL),
    ],
)
def test_levels(loader, caplog, fun, level):
    with caplog.at_level(logging.DEBUG, logger="briny.log"):
        assert loader[f"log.{fun}"]("hello %s") is True
    rec = [r for r in caplog.records if r.name == "briny.log"]
    assert rec and rec[-1].levelno == level and rec[-1].getMessage() == "hello %s"


def test_args_are_formatted(loader, caplog):
    with caplog.at_level(logging.INFO, logger="briny.log"):
        loader["log.info"]("a %s c", "b")
    assert caplog.records[-1].getMessage() == "a b c"


def test_exception_logs_at_error(loader, caplog):
    with caplog.at_level(logging.ERROR, logger="briny.log"):
        assert loader["log.exception"]("boom") is True
    assert caplog.records[-1].levelno == logging.ERROR
