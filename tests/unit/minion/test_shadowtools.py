"""The one way the account modules run shadow-utils commands (``minion/host/shadowtools.py``)."""

from __future__ import annotations

import logging

from briny.common import loader
from briny.minion.host.shadowtools import TIMEOUT, run_tool


def _salt():
    return loader.minion_mods({"id": "m1", "test": False}, {"shell": "/bin/sh"}, {})


def test_success_and_the_call_it_makes():
    seen = []

    def run_all(cmd, **kwargs):
        seen.append((cmd, kwargs))
        return {"retcode": 0, "stdout": "", "stderr": ""}

    assert run_tool({"cmd.run_all": run_all}, ["useradd", "x"], stdin="hash\n") is True
    assert seen == [
        (
            ["useradd", "x"],
            {
                "python_shell": False,
                "timeout": TIMEOUT,
                "ignore_retcode": True,
                "output_loglevel": "quiet",
                "stdin": "hash\n",
            },
        )
    ]


def test_a_failure_is_logged_and_kept_for_the_state(caplog):
    salt = _salt()
    context: dict = {}
    with caplog.at_level(logging.ERROR, logger="briny.minion.host.shadowtools"):
        ok = run_tool(salt, ["sh", "-c", "echo 'no such group' >&2; exit 6"], context=context, error_key="g.error")
    assert ok is False and context == {"g.error": "no such group"}
    assert [r.getMessage() for r in caplog.records] == ["sh failed: no such group"]
    assert run_tool(salt, ["sh", "-c", "exit 3"], context=context) is False
    assert context == {"g.error": "no such group"}  # no error_key: nothing kept
    assert run_tool(salt, ["sh", "-c", "exit 3"], context=context, error_key="g.error") is False
    assert context["g.error"] == "exit status 3"
    assert run_tool(salt, ["sh", "-c", 'read x; test "$x" = secret'], stdin="secret\n") is True
