"""Execution module ``log``: write a message to the minion's log.

Runs wherever ``__salt__`` does; most useful from templates
(``{% do salt['log.info']('...') %}``). Each function logs ``message``
(with ``%``-style ``args`` when given) through :mod:`logging` under the
``briny.log`` logger and returns True, as Salt 3007's ``log`` module does.
"""

from __future__ import annotations

import logging
from typing import Any

log = logging.getLogger(__name__)
_target = logging.getLogger("briny.log")

__virtualname__ = "log"


def _log(level: int, message: Any, *args: Any, **kwargs: Any) -> bool:
    if args:
        _target.log(level, str(message), *args)
    else:
        # no args: log the text verbatim ('%' in it is not a format)
        _target.log(level, "%s", message)
    return True


def debug(message: Any, *args: Any, **kwargs: Any) -> bool:
    """Log ``message`` at DEBUG level."""
    return _log(logging.DEBUG, message, *args)


def info(message: Any, *args: Any, **kwargs: Any) -> bool:
    """Log ``message`` at INFO level."""
    return _log(logging.INFO, message, *args)


def warning(message: Any, *args: Any, **kwargs: Any) -> bool:
    """Log ``message`` at WARNING level."""
    return _log(logging.WARNING, message, *args)


warn = warning


def error(message: Any, *args: Any, **kwargs: Any) -> bool:
    """Log ``message`` at ERROR level."""
    return _log(logging.ERROR, message, *args)


def critical(message: Any, *args: Any, **kwargs: Any) -> bool:
    """Log ``message`` at CRITICAL level."""
    return _log(logging.CRITICAL, message, *args)


def exception(message: Any, *args: Any, **kwargs: Any) -> bool:
    """Log ``message`` at ERROR level with the current exception's traceback, if any."""
    if args:
        _target.exception(str(message), *args)
    else:
        _target.exception("%s", message)
    return True
