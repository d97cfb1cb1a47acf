"""State module ``service``: services running or dead, enabled or disabled at boot.

Runs on the managed host (minion / ``briny-call``). The work is done by the
``service`` execution module (systemd when PID 1 is systemd, else the
``/etc/init.d`` scripts); this module only compares the wanted state with
what ``service.status`` / ``service.enabled`` report and asks for the
difference.

Results follow Salt 3007 (comments, changes ``{name: True}`` when started or
enabled, ``{name: False}`` when stopped, test mode, idempotence).
``mod_watch`` restarts a running service when a watched state changed (or
reloads it with ``reload: True``, force-reloads it with ``force: True`` as
well, stops and starts it with ``full_restart: True``), starts it if it is
not running, and stops it for ``service.dead``; as in Salt it does not ask
whether the service exists first.

**Offline mode** (Salt 3007): where ``systemctl`` is installed but systemd is
not PID 1 (``service.offline`` answers True: a container), ``running`` and
``dead`` change nothing and answer "Running in OFFLINE mode. Nothing to do"
(result True, test mode too); the other functions work as usual.

``masked`` / ``unmasked`` manage a systemd mask (``runtime: True`` the one
that lasts until the next reboot): changes ``{"masked": {"old": False,
"new": True}}`` (or ``runtime masked``), comments ``Service x was masked``,
``Service x is already masked``, ``Service x would be masked`` (test mode),
``Service x was unmasked`` / ``was already unmasked`` / ``would be
unmasked``; ``Service masking not available on this minion`` without
systemctl. A deliberate difference: in offline mode Salt 3007 checks every
unit that has a file in ``/etc/systemd/system`` with systemd itself, so
once a unit is masked it fails each of these states ("Cannot run in offline
mode. Failed to get information on unit 'x'", after masking it); briny reads
the mask link and answers as Salt does on a host running systemd. A runtime
mask offline fails that state (``systemctl`` would create
``/run/systemd/system`` and the host would look booted with systemd). When
``systemctl`` succeeded but the unit is still not (un)masked, the state
fails (Salt 3007 says "Failed to mask service x" with result True).
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


log = logging.getLogger(__name__)


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "result": True, "changes": {}, "comment": ""}


def _offline_or_typo(ret: dict[str, Any], kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """Salt's first checks in ``running`` / ``dead``: ``enabled`` for ``enable``, offline mode."""
    if "enabled" in kwargs:
        ret["result"] = False
        ret["comment"] = (
            f'Service {ret["name"]} uses non-existent option "enabled".  Perhaps "enable" option was intended?'
        )
        return ret
    if "service.offline" in __salt__ and __salt__["service.offline"]():
        ret["comment"] = "Running in OFFLINE mode. Nothing to do"
        return ret
    return None


def _test() -> bool:
    return bool(__opts__.get("test"))


def _available(name: str) -> bool:
    return bool(__salt__["service.available"](name))


def _status(name: str, sig: Any = None) -> bool:
    return bool(__salt__["service.status"](name, sig))


def _is_enabled(name: str) -> bool:
    return bool(__salt__["service.enabled"](name))


def _call(fun: str, name: str, **kwargs: Any) -> tuple[bool, str]:
    """Run ``service.<fun>``: (success, error text)."""
    try:
        return bool(__salt__[f"service.{fun}"](name, **kwargs)), ""
    except CommandExecutionError as exc:
        return False, str(exc)


def _state_word(started: bool | None) -> str:
    return {True: "running", False: "dead", None: "in the desired state"}[started]


def _unavailable(ret: dict[str, Any], name: str, verb: str, fail: bool = True) -> dict[str, Any]:
    if _test():
        ret["result"] = None
        ret["comment"] = f"Service {name} not present; if created in this state run, it would have been {verb}"
    else:
        ret["result"] = False if fail else True
        ret["comment"] = f"The named service {name} is not available"
    return ret


def _set_boot_flag(ret: dict[str, Any], name: str, started: bool | None, enable: bool, **kwargs: Any) -> dict[str, Any]:
    """Make ``name`` start at boot (``enable``) or not; the comment also tells whether it runs."""
    word = _state_word(started)
    verb, at_boot = ("enabled", "start at boot") if enable else ("disabled", "not start at boot")
    if _is_enabled(name) == enable:
        ret["comment"] = f"Service {name} is already {verb}, and is {word}"
        return ret
    if _test():
        ret["result"] = None
        ret["comment"] = f"Service {name} set to be {verb}"
        return ret
    ok, err = _call("enable" if enable else "disable", name, **kwargs)
    if ok and _is_enabled(name) == enable:
        ret["changes"][name] = True
        ret["comment"] = f"Service {name} has been {verb}, and is {word}"
        return ret
    ret["result"] = False
    was = "already running" if started is None and _status(name) else word
    ret["comment"] = f"Failed when setting service {name} to {at_boot}, but the service was {was}"
    if err:
        ret["comment"] += f": {err}"
    return ret


def _enable(ret: dict[str, Any], name: str, started: bool | None, **kwargs: Any) -> dict[str, Any]:
    return _set_boot_flag(ret, name, started, True, **kwargs)


def _disable(ret: dict[str, Any], name: str, started: bool | None, **kwargs: Any) -> dict[str, Any]:
    return _set_boot_flag(ret, name, started, False, **kwargs)


def _delay(init_delay: Any) -> float:
    try:
        return float(init_delay) if init_delay else 0.0
    except (TypeError, ValueError):
        return 0.0


def _fmt_delay(delay: float) -> str:
    return str(int(delay)) if delay == int(delay) else str(delay)


# ---------------------------------------------------------------------------
# states
# ---------------------------------------------------------------------------


def _switch(
    ret: dict[str, Any], action: str, name: str, sig: Any, init_delay: Any, before: Any
) -> tuple[Any, str | None, float]:
    """Start or stop, wait ``init_delay``, look again; record a change of status."""
    ok, err = _call(action, name)
    delay = _delay(init_delay)
    if ok and delay:
        time.sleep(delay)
    after = _status(name, sig)
    if before != after:
        ret["changes"][name] = after
    return after, err, delay


def _set_boot(ret: dict[str, Any], name: str, enable: Any, started: Any) -> bool:
    """Apply ``enable: True/False`` after a start; False when there was nothing to apply."""
    if enable is True:
        _enable(ret, name, started)
    elif enable is False:
        _disable(ret, name, started)
    else:
        return False
    return True


def running(name: str, enable: Any = None, sig: Any = None, init_delay: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Make sure the service runs (and, with ``enable``, starts at boot or not)."""
    ret = _ret(name)
    if _offline_or_typo(ret, kwargs):
        return ret
    if not _available(name):
        return _unavailable(ret, name, "started")
    before = _status(name, sig)
    if before:
        if enable is True and not _is_enabled(name):
            return _enable(ret, name, None)
        if enable is False and _is_enabled(name):
            return _disable(ret, name, None)
        ret["comment"] = f"The service {name} is already running"
        return ret
    if _test():
        ret["result"] = None
        ret["comment"] = f"Service {name} is set to start"
        return ret
    after, err, delay = _switch(ret, "start", name, sig, init_delay, before)
    if not after:
        ret["result"] = False
        ret["comment"] = f"Service {name} failed to start" + (f": {err}" if err else "")
        if _set_boot(ret, name, enable, False):
            ret["result"] = False
        return ret
    ret["comment"] = f"Started service {name}"
    _set_boot(ret, name, enable, True)
    if delay:
        ret["comment"] += f"\nDelayed return for {_fmt_delay(delay)} seconds"
    return ret


def dead(name: str, enable: Any = None, sig: Any = None, init_delay: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Make sure the service is stopped (and, with ``enable``, starts at boot or not)."""
    ret = _ret(name)
    if _offline_or_typo(ret, kwargs):
        return ret
    if not _available(name):
        return _unavailable(ret, name, "stopped", fail=False)
    before = _status(name, sig)
    if not before:
        ret["comment"] = f"The service {name} is already dead"
        if enable is True and not _is_enabled(name):
            return _enable(ret, name, None)
        if enable is False and _is_enabled(name):
            return _disable(ret, name, None)
        return ret
    if _test():
        ret["result"] = None
        ret["comment"] = f"Service {name} is set to be killed"
        return ret
    after, err, delay = _switch(ret, "stop", name, sig, init_delay, before)
    if after:
        ret["result"] = False
        ret["comment"] = f"Service {name} failed to die" + (f": {err}" if err else "")
        return ret
    ret["comment"] = f"Service {name} was killed"
    if enable is True:
        _enable(ret, name, False)
    elif enable is False:
        _disable(ret, name, False)
    if delay:
        ret["comment"] += f"\nDelayed return for {_fmt_delay(delay)} seconds"
    return ret


def enabled(name: str, **kwargs: Any) -> dict[str, Any]:
    """Make sure the service starts at boot (whether it runs now is not touched)."""
    ret = _ret(name)
    if not _available(name):
        return _unavailable(ret, name, "enabled")
    return _enable(ret, name, None)


def disabled(name: str, **kwargs: Any) -> dict[str, Any]:
    """Make sure the service does not start at boot."""
    ret = _ret(name)
    if not _available(name):
        ret["comment"] = f"The named service {name} is not available"
        return ret
    return _disable(ret, name, None)


def _set_mask(name: str, runtime: Any, want: bool) -> dict[str, Any]:
    ret = _ret(name)
    if "service.masked" not in __salt__:
        ret["result"] = False
        ret["comment"] = "Service masking not available on this minion"
        return ret
    runtime = bool(runtime)
    kind = "runtime masked" if runtime else "masked"
    done = kind if want else ("runtime unmasked" if runtime else "unmasked")
    changes = {kind: {"old": not want, "new": want}}
    try:
        if bool(__salt__["service.masked"](name, runtime)) == want:
            ret["comment"] = f"Service {name} is already {kind}" if want else f"Service {name} was already {done}"
            return ret
        if _test():
            ret.update(result=None, changes=changes, comment=f"Service {name} would be {done}")
            return ret
        __salt__["service.mask" if want else "service.unmask"](name, runtime)
        if bool(__salt__["service.masked"](name, runtime)) == want:
            ret.update(changes=changes, comment=f"Service {name} was {done}")
        else:
            ret["result"] = False  # Salt 3007 leaves True here
            ret["comment"] = f"Failed to {'mask' if want else 'unmask'} service {name}"
    except CommandExecutionError as exc:
        ret["result"] = False
        ret["comment"] = str(exc)
    return ret


def masked(name: str, runtime: Any = False) -> dict[str, Any]:
    """Make sure the systemd unit is masked (``runtime: True``: until the next reboot)."""
    return _set_mask(name, runtime, True)


def unmasked(name: str, runtime: Any = False) -> dict[str, Any]:
    """Make sure the systemd unit is not masked (the indefinite mask, or with ``runtime`` the runtime one)."""
    return _set_mask(name, runtime, False)


def mod_watch(
    name: str,
    sfun: str | None = None,
    sig: Any = None,
    reload: Any = False,
    full_restart: Any = False,
    init_delay: Any = None,
    force: Any = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """A watched state changed: restart (or reload / full restart) a running
    service, start a stopped one; stop it for ``service.dead``."""
    ret = _ret(name)
    funs = __salt__
    if sfun == "dead":
        if not _status(name, sig):
            ret["comment"] = "Service is already stopped"
            return ret
        fun, verb, past = "stop", "stop", "stopped"
    elif sfun == "running":
        if not _status(name, sig):
            fun, verb, past = "start", "start", "started"
        elif reload and "service.reload" in funs:
            if force and "service.force_reload" in funs:
                fun, verb, past = "force_reload", "forcefully reload", "forcefully reloaded"
            else:
                fun, verb, past = "reload", "reload", "reloaded"
        elif full_restart and "service.full_restart" in funs:
            fun, verb, past = "full_restart", "fully restart", "fully restarted"
        else:
            fun, verb, past = "restart", "restart", "restarted"
    else:
        ret["result"] = False
        ret["comment"] = f"Unable to trigger watch for service.{sfun}"
        return ret
    if _test():
        ret["result"] = None
        ret["comment"] = f"Service is set to be {past}"
        return ret
    if fun == "start":
        _call("stop", name)  # as Salt: stop before a start
    try:
        ok = bool(funs[f"service.{fun}"](name))
    except CommandExecutionError as exc:
        ret["result"] = False
        ret["comment"] = str(exc)
        return ret
    delay = _delay(init_delay)
    if delay:
        time.sleep(delay)
    ret["changes"] = {name: ok}
    ret["result"] = ok
    ret["comment"] = f"Service {past}" if ok else f"Failed to {verb} the service"
    return ret
