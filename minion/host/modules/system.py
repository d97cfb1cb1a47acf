"""Execution module ``system``: reboot or power off this host (Salt 3007's ``system``, Linux).

``system.reboot`` runs ``shutdown -r <at_time or now>`` and ``system.shutdown`` runs
``shutdown -h <at_time or now>`` through ``cmd.run`` (no shell), and return what the command
printed, as Salt's do. ``at_time`` is anything ``shutdown`` takes: ``now``, ``+MINUTES``,
``MINUTES``, ``hh:mm`` (on the command line quote it: ``at_time=+10`` and ``at_time=23:30``
are YAML numbers there, 10 and 1410, as in Salt). The command's exit status is the call's.

briny's own addition: ``test=True`` runs nothing and answers the command that would run
(``Would run: shutdown -r +5``); Salt refuses the argument. The command is found in ``PATH``,
so a test can put a ``shutdown`` of its own first and see the exact command
(``tests/golden/functions``, case ``system_reboot``).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any
from briny.common.truth import is_true as _is_true

if TYPE_CHECKING:
    from briny.common.dunders import __salt__

__virtualname__ = "system"


def __virtual__() -> Any:
    if sys.platform.startswith("linux"):
        return __virtualname__
    return False, "The system execution module is for Linux hosts"


def _shutdown(flag: str, at_time: Any, test: Any) -> str:
    when = "now" if at_time is None or at_time == "" else str(at_time)
    cmd = ["shutdown", flag, when]
    if _is_true(test):
        return "Would run: " + " ".join(cmd)
    return str(__salt__["cmd.run"](cmd, python_shell=False))


def reboot(at_time: Any = None, test: Any = False, **kwargs: Any) -> str:
    """Reboot the host, now or at ``at_time`` (``shutdown -r``)."""
    return _shutdown("-r", at_time, test)


def shutdown(at_time: Any = None, test: Any = False, **kwargs: Any) -> str:
    """Power off the host, now or at ``at_time`` (``shutdown -h``)."""
    return _shutdown("-h", at_time, test)
