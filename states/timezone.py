"""The ``timezone`` state module: the system time zone and the hardware clock.

``timezone.system`` sets the zone named by ``name`` (``America/Denver``) and,
with ``utc: True`` (the default), makes the hardware clock keep UTC; as in
Salt, ``utc: False`` leaves the clock as it is. The work goes through the
``timezone`` execution module.

Results follow Salt 3007: ``Timezone x already set, UTC already set to x``,
changes ``{"timezone": x}`` and ``{"utc": True}`` with ``Set timezone x`` /
``Set UTC to True``, test mode ``Timezone x needs to be set`` / ``UTC needs
to be set to True``, and a zone that does not exist fails with ``Unable to
compare desired timezone 'x' to system timezone: Can't find a local
timezone "x"``.

Where Salt 3007 crashes, briny answers: on a host with ``timedatectl``
installed but systemd not running as PID 1 (a container), Salt's state
stops with a traceback ("timedatectl failed: System has not been booted
with systemd as init system", result False, nothing changed); briny reads and
writes the files (see the execution module) and gives the results Salt
gives on a host where ``timedatectl`` works. A failure to read the hardware
clock mode fails the state with ``Unable to get the hardware clock
setting: ...`` instead of a traceback.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


def _salt(fun: str) -> Any:
    return __salt__[f"timezone.{fun}"]


def system(name: str, utc: Any = True) -> dict[str, Any]:
    """Make ``name`` the system time zone; ``utc``: the hardware clock keeps UTC."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    try:
        compzone = _salt("zone_compare")(name)
    except (SaltInvocationError, CommandExecutionError) as exc:
        ret["result"] = False
        ret["comment"] = f"Unable to compare desired timezone '{name}' to system timezone: {exc}"
        return ret
    try:
        myutc = _salt("get_hwclock")() != "localtime"
    except CommandExecutionError as exc:
        ret["result"] = False
        ret["comment"] = f"Unable to get the hardware clock setting: {exc}"
        return ret
    messages = []
    do_zone = compzone is not True
    if not do_zone:
        ret["result"] = True
        messages.append(f"Timezone {name} already set")
    do_utc = bool(utc) and utc != myutc
    if do_utc:
        ret["result"] = None
    elif utc and utc == myutc:
        messages.append(f"UTC already set to {name}")
    if ret["result"] is True:
        ret["comment"] = ", ".join(messages)
        return ret
    if __opts__.get("test"):
        messages = []
        if compzone is False:
            messages.append(f"Timezone {name} needs to be set")
        if do_utc:
            messages.append(f"UTC needs to be set to {utc}")
        ret["comment"] = ", ".join(messages)
        return ret
    messages = []
    try:
        if do_zone:
            if _salt("set_zone")(name):
                ret["changes"]["timezone"] = name
                messages.append(f"Set timezone {name}")
                ret["result"] = True
            else:
                messages.append("Failed to set timezone")
                ret["result"] = False
        if do_utc:
            clock = "UTC" if utc else "localtime"
            if _salt("set_hwclock")(clock):
                ret["changes"]["utc"] = utc
                messages.append(f"Set UTC to {utc}")
                ret["result"] = True
            else:
                messages.append(f"Failed to set UTC to {utc}")
                ret["result"] = False
    except (SaltInvocationError, CommandExecutionError) as exc:
        messages.append(str(exc))
        ret["result"] = False
    ret["comment"] = ", ".join(messages)
    return ret
