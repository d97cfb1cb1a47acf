"""Running the shadow-utils commands for the account modules (``user``, ``group``, ``shadow``).

Runs on the managed host, in the job that calls ``user.add``, ``group.chgid``,
``shadow.set_password``, ... One way to run ``useradd``, ``groupmod``,
``chpasswd``, ``chage`` and friends: through ``cmd.run_all`` (so ``cmd``'s
environment and logging rules apply), with an argument list (no shell), a
time limit, nothing logged of the command's input or output (a password hash
may travel on stdin), and the reason of a failure logged and, when asked,
kept in ``__context__`` for the state that called the function to report.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, MutableMapping
from typing import Any

log = logging.getLogger(__name__)

TIMEOUT = 60  # seconds one command may take


def run_tool(
    salt: Mapping[str, Any],
    cmd: list[str],
    stdin: str | None = None,
    context: MutableMapping[str, Any] | None = None,
    error_key: str | None = None,
) -> bool:
    """Run ``cmd`` through ``salt["cmd.run_all"]``; True when it exited 0. On failure the reason
    (its stderr, else its stdout, else its exit status) is logged and, with ``error_key``, kept
    in ``context[error_key]``."""
    call: dict[str, Any] = {
        "python_shell": False,
        "timeout": TIMEOUT,
        "ignore_retcode": True,
        "output_loglevel": "quiet",
    }
    if stdin is not None:
        call["stdin"] = stdin
    res = salt["cmd.run_all"](cmd, **call)
    if res.get("retcode") == 0:
        return True
    reason = (res.get("stderr") or res.get("stdout") or f"exit status {res.get('retcode')}").strip()
    if context is not None and error_key:
        context[error_key] = reason
    log.error("%s failed: %s", cmd[0], reason)
    return False
