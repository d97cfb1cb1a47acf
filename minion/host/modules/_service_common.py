"""What the service execution modules share (a private sibling of ``systemd_service.py`` and
``sysvinit_service.py``, run with the importing module's dunders): the ``service_timeout`` they
wait for, and the answers made of their own checks (a glob's statuses, the enabled or disabled
services)."""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __opts__


def _timeout() -> int:
    """How long one service command may take (``service_timeout``, 120 s)."""
    try:
        return int(__opts__.get("service_timeout", 120))
    except (TypeError, ValueError):
        return 120


def _is_glob(name: Any) -> bool:
    return any(c in str(name) for c in "*?[")


def _glob_status(name: Any, names: Iterable[str], status: Callable[[str], Any]) -> dict[str, Any]:
    """``{service: status}`` for the services among ``names`` the glob ``name`` matches."""
    return {s: status(s) for s in names if fnmatch.fnmatchcase(s, str(name))}


def _by_enabled(names: Iterable[str], enabled: Callable[[str], bool], want: bool) -> list[str]:
    """The services among ``names`` that start at boot (``want``) or do not."""
    return [s for s in names if enabled(s) is want]
