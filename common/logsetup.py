"""Logging set-up for the CLIs and daemons, with Salt's level names.

Runs once at process start. The console gets ``[LEVEL   ] message`` lines on
stderr (as ``salt-call`` prints them); daemons and ``briny-call`` also write
``log_file`` at ``log_level_logfile`` (or ``log_level``) when it can be opened.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

LEVELS = {
    "all": 1, "garbage": 1, "trace": 5, "debug": logging.DEBUG, "profile": 15,
    "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
    "critical": logging.CRITICAL, "quiet": 1000,
}
CONSOLE_FORMAT = "[%(levelname)-8s] %(message)s"
FILE_FORMAT = "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s"


def level_of(name: Any, default: int = logging.WARNING) -> int:
    return LEVELS.get(str(name or "").lower(), default)


def setup_console(level: str = "warning") -> None:
    root = logging.getLogger()
    for h in list(root.handlers):
        if getattr(h, "_briny_console", False):
            root.removeHandler(h)
    handler = logging.StreamHandler(sys.stderr)
    handler._briny_console = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter(CONSOLE_FORMAT))
    handler.setLevel(level_of(level))
    root.addHandler(handler)
    root.setLevel(min(level_of(level), root.level if root.level else logging.WARNING))


def setup_logfile(opts: dict[str, Any]) -> None:
    path = opts.get("log_file")
    if not path:
        return
    level = level_of(opts.get("log_level_logfile") or opts.get("log_level"))
    try:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        logging.getLogger(__name__).debug("cannot open log file %s", path)
        return
    handler.setFormatter(logging.Formatter(FILE_FORMAT, "%Y-%m-%d %H:%M:%S"))
    handler.setLevel(level)
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(min(level, root.level or logging.WARNING))
