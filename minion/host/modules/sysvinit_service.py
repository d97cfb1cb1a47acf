"""Execution module ``service`` for sysvinit-style hosts: ``/etc/init.d`` scripts.

Runs on the managed host (minion / ``briny-call``) when PID 1 is not systemd
(containers, sysvinit Debian), in the role Salt 3007's Debian service
provider plays there:

- actions run the init script itself (``/etc/init.d/NAME start|stop|...``)
  with a clean environment, as ``service(8)`` does, bounded by a timeout
  (``service_timeout`` in the config, 120 s by default); ``status`` is the
  script's ``status`` action (exit 0 = running), or with ``sig`` a search of
  the process table;
- ``enabled`` means an ``S`` link in ``/etc/rcN.d`` for the current runlevel
  (or ``/etc/rcS.d``); ``enable`` / ``disable`` use ``update-rc.d`` (``defaults``
  then ``enable``; ``disable``), or manage the ``/etc/rc?.d`` links from the
  script's LSB header when ``update-rc.d`` is missing.

Salt's own Debian provider mis-reads link names that contain digits (so it
never sees such a service as enabled); here any name is read correctly.

**Offline mode** (Salt 3007's word): when this module is chosen by itself
(no ``providers: service`` in the config) on a host where ``systemctl`` is
installed but systemd is not PID 1 (a container with Debian's ``systemd``
package), Salt's ``service`` also carries the systemd module's ``offline``,
``mask``, ``unmask`` and ``masked``; so does this one. ``offline()`` is then
True and the ``service.running`` / ``service.dead`` states answer "Running in
OFFLINE mode. Nothing to do". With ``providers: {service: debian}`` (or
``sysvinit``) there is no offline mode and no masking, as in Salt.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from typing import TYPE_CHECKING, Any

from briny.minion.host import systemd as _systemd
from briny.minion.host.procs import sig_running as _sig_running

from ._service_common import _by_enabled, _glob_status, _is_glob, _timeout
from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


log = logging.getLogger(__name__)

__virtualname__ = "service"

# Where things are (module globals, so tests can point them elsewhere)
INIT_DIR = "/etc/init.d"
RC_ROOT = "/etc"
UPDATE_RC_D = "update-rc.d"
RUNLEVEL = "runlevel"
_NOT_SERVICES = {
    "README",
    "skeleton",
    "rc",
    "rcS",
    "rc.local",
    "functions",
    "halt",
    "reboot",
    "single",
    "sendsigs",
    "umountfs",
    "umountroot",
    "killprocs",
}
_CLEAN_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@+-]*$")


def __virtual__() -> Any:
    provider = (__opts__.get("providers") or {}).get("service")
    if provider:
        if provider in ("sysvinit", "debian", "service", "sysvinit_service"):
            return __virtualname__
        return (False, f"service provider is set to {provider}")
    if _systemd.booted():
        return (False, "PID 1 is systemd: the systemd provider manages services")
    if os.path.isdir(INIT_DIR):
        return __virtualname__
    return (False, f"{INIT_DIR} does not exist")


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _script(name: str) -> str | None:
    name = str(name)
    if not _NAME_RE.match(name) or name in _NOT_SERVICES:
        return None
    path = os.path.join(INIT_DIR, name)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        return path
    return None


def _action(name: str, action: str) -> dict[str, Any]:
    script = _script(name)
    if script is None:
        raise CommandExecutionError(f"Service {name} is not available (no executable {INIT_DIR}/{name})")
    env = {"PATH": _CLEAN_PATH, "LANG": "C", "TERM": os.environ.get("TERM", "dumb")}
    return __salt__["cmd.run_all"](
        [script, action], python_shell=False, clean_env=True, env=env, timeout=_timeout(), ignore_retcode=True, cwd="/"
    )


def _ok(name: str, action: str) -> bool:
    if _script(name) is None:  # as ``service NAME start`` would: a failure, not an error
        log.error("%s %s failed: no executable %s/%s", name, action, INIT_DIR, name)
        return False
    out = _action(name, action)
    if out["retcode"] != 0:
        log.error(
            "%s %s failed (exit %s): %s",
            name,
            action,
            out["retcode"],
            (out.get("stderr") or out.get("stdout") or "").strip(),
        )
    return bool(out["retcode"] == 0)


def _runlevel() -> str:
    """The current runlevel: ``runlevel``'s answer, else inittab's default, else 2."""
    if shutil.which(RUNLEVEL):
        out = __salt__["cmd.run_all"](
            [RUNLEVEL],
            python_shell=False,
            timeout=30,
            ignore_retcode=True,
            output_loglevel="trace",
        )
        words = out.get("stdout", "").split()
        if out.get("retcode") == 0 and words and re.fullmatch(r"[0-6Ss]", words[-1]):
            return words[-1].upper()
    try:
        with open("/etc/inittab", encoding="utf-8") as fh:
            for line in fh:
                m = re.match(r"^[^#:]*:(\d):initdefault:", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return "2"


def _links(name: str) -> dict[str, list[str]]:
    """runlevel -> link file names (``S01name``, ``K01name``) for ``name``."""
    pat = re.compile(r"^[SK]\d\d" + re.escape(name) + r"$")
    found: dict[str, list[str]] = {}
    for level in "0123456S":
        rcdir = os.path.join(RC_ROOT, f"rc{level}.d")
        try:
            entries = os.listdir(rcdir)
        except OSError:
            continue
        hits = sorted(e for e in entries if pat.match(e))
        if hits:
            found[level] = hits
    return found


def _lsb_levels(name: str) -> tuple[list[str], list[str]]:
    """Default-Start and Default-Stop runlevels from the script's LSB header."""
    start, stop = ["2", "3", "4", "5"], ["0", "1", "6"]
    path = _script(name)
    if path is None:
        return start, stop
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            head = fh.read(8192)
    except OSError:
        return start, stop
    m = re.search(r"^#\s*Default-Start:[ \t]*(.*)$", head, re.M)
    if m:
        start = [w.upper() for w in m.group(1).split()]
    m = re.search(r"^#\s*Default-Stop:[ \t]*(.*)$", head, re.M)
    if m:
        stop = [w.upper() for w in m.group(1).split()]
    return start, stop


def _relink(name: str, enable: bool) -> bool:
    """Manage ``/etc/rc?.d`` links by hand (no ``update-rc.d`` on this host)."""
    start, stop = _lsb_levels(name)
    links = _links(name)
    target = os.path.join("..", "init.d", name)
    for level in sorted(set(start) | set(stop) | set(links)):
        rcdir = os.path.join(RC_ROOT, f"rc{level}.d")
        if not os.path.isdir(rcdir):
            continue
        for old in links.get(level, []):
            os.unlink(os.path.join(rcdir, old))
        kind = "S" if enable and level in start else "K"
        os.symlink(target, os.path.join(rcdir, f"{kind}01{name}"))
    return True


def _update_rc(*args: str) -> bool:
    out = __salt__["cmd.run_all"](
        [UPDATE_RC_D, *args],
        python_shell=False,
        timeout=_timeout(),
        ignore_retcode=True,
    )
    if out["retcode"] != 0:
        log.error(
            "%s %s failed: %s", UPDATE_RC_D, " ".join(args), (out.get("stderr") or out.get("stdout") or "").strip()
        )
    return bool(out["retcode"] == 0)


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------


def get_all(**kwargs: Any) -> list[str]:
    """Every service with an executable script in ``/etc/init.d``."""
    try:
        entries = os.listdir(INIT_DIR)
    except OSError:
        return []
    return sorted(e for e in entries if _script(e) is not None and not e.startswith("."))


def available(name: str, **kwargs: Any) -> bool:
    """Whether ``/etc/init.d/NAME`` exists and is executable."""
    return _script(name) is not None


def missing(name: str, **kwargs: Any) -> bool:
    return not available(name)


def status(name: str, sig: str | None = None, **kwargs: Any) -> Any:
    """Whether the service runs (the script's ``status``, or ``sig`` in the
    process table). A glob in ``name`` gives ``{service: bool}``."""
    if sig:
        return _sig_running(sig)
    if _is_glob(name):
        return _glob_status(name, get_all(), status)
    if _script(name) is None:
        return False
    return bool(_action(name, "status")["retcode"] == 0)


def enabled(name: str, **kwargs: Any) -> bool:
    """Whether the service starts at boot in the current runlevel."""
    if _script(name) is None:
        return False
    links = _links(name)
    level = _runlevel()
    return any(link.startswith("S") for lv in (level, "S") for link in links.get(lv, []))


def disabled(name: str, **kwargs: Any) -> bool:
    return not enabled(name)


def get_enabled(**kwargs: Any) -> list[str]:
    return _by_enabled(get_all(), enabled, True)


def get_disabled(**kwargs: Any) -> list[str]:
    return _by_enabled(get_all(), enabled, False)


# ---------------------------------------------------------------------------
# actions
# ---------------------------------------------------------------------------


def start(name: str, **kwargs: Any) -> bool:
    return _ok(name, "start")


def stop(name: str, **kwargs: Any) -> bool:
    return _ok(name, "stop")


def restart(name: str, **kwargs: Any) -> bool:
    return _ok(name, "restart")


def reload(name: str, **kwargs: Any) -> bool:
    return _ok(name, "reload")


def force_reload(name: str, **kwargs: Any) -> bool:
    return _ok(name, "force-reload")


def full_restart(name: str, **kwargs: Any) -> bool:
    """Stop, then start (a fresh process even where ``restart`` reloads)."""
    _ok(name, "stop")
    return _ok(name, "start")


def enable(name: str, **kwargs: Any) -> bool:
    """Start the service at boot (``update-rc.d NAME defaults`` + ``enable``)."""
    if _script(name) is None:
        raise CommandExecutionError(f"Service {name} is not available")
    if shutil.which(UPDATE_RC_D):
        return _update_rc(name, "defaults") and _update_rc(name, "enable") and enabled(name)
    return _relink(name, True) and enabled(name)


def disable(name: str, **kwargs: Any) -> bool:
    """Do not start the service at boot (``update-rc.d NAME disable``)."""
    if _script(name) is None:
        raise CommandExecutionError(f"Service {name} is not available")
    if shutil.which(UPDATE_RC_D):
        if not _links(name):
            _update_rc(name, "defaults")
        return _update_rc(name, "disable") and not enabled(name)
    return _relink(name, False) and not enabled(name)


# ---------------------------------------------------------------------------
# offline mode: systemctl installed, systemd not PID 1 (only when chosen by itself)
# ---------------------------------------------------------------------------

if not (__opts__.get("providers") or {}).get("service") and _systemd.offline():
    offline, masked, mask, unmask = _systemd.service_functions(
        __name__,
        lambda: __salt__["cmd.run_all"],
        _timeout,
    )
