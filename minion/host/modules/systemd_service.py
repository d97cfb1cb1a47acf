"""Execution module ``service`` for hosts whose PID 1 is systemd: ``systemctl``.

Runs on the managed host (minion / ``briny-call``) when ``/run/systemd/system``
exists (systemd is running), or when the config says
``providers: {service: systemd}``. Every call is one ``systemctl`` command
bounded by a timeout (``service_timeout`` in the config, 120 s by default).

Names without a unit suffix are ``.service`` units. ``status`` is
``systemctl is-active`` (or, with ``sig``, a search of the process table);
``enabled`` is ``systemctl is-enabled`` answering ``enabled`` (or
``enabled-runtime`` / ``alias`` / ``indirect`` / ``generated``);
``available`` is a unit systemd can load. ``mask`` / ``unmask`` / ``masked``
manage the ``/dev/null`` links (``runtime=True``: the ones under ``/run``);
``offline`` is False while systemd runs (see :mod:`briny.minion.host.systemd`).

With ``providers: {service: systemd}`` on a host where systemd is not PID 1,
this module loads in Salt's "offline mode": ``offline()`` is True and the
``service.running`` / ``service.dead`` states do nothing.
"""

from __future__ import annotations

import logging
import shutil
from typing import TYPE_CHECKING, Any

from briny.minion.host import systemd as _systemd
from briny.minion.host.procs import sig_running as _sig_running

from ._service_common import _by_enabled, _glob_status, _is_glob, _timeout

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


log = logging.getLogger(__name__)

__virtualname__ = "service"

_ENABLED = {"enabled", "enabled-runtime", "alias", "indirect", "generated"}


def __virtual__() -> Any:
    provider = (__opts__.get("providers") or {}).get("service")
    if provider:
        if provider in ("systemd", "systemd_service"):
            return __virtualname__
        return (False, f"service provider is set to {provider}")
    if _systemd.booted() and shutil.which("systemctl"):
        return __virtualname__
    return (False, "systemd is not running as PID 1")


_unit = _systemd.unit


def _systemctl(*args: str, quiet: bool = False) -> dict[str, Any]:
    return __salt__["cmd.run_all"](
        ["systemctl", *args],
        python_shell=False,
        timeout=_timeout(),
        ignore_retcode=True,
        output_loglevel="trace" if quiet else "debug",
    )


def _ok(*args: str) -> bool:
    out = _systemctl(*args)
    if out["retcode"] != 0:
        log.error("systemctl %s failed: %s", " ".join(args), (out.get("stderr") or out.get("stdout") or "").strip())
    return bool(out["retcode"] == 0)


# -- queries ---------------------------------------------------------------


def get_all(**kwargs: Any) -> list[str]:
    """Every service unit systemd knows (names without ``.service``)."""
    names: set[str] = set()
    for args in (
        ("list-unit-files", "--type=service", "--no-legend", "--no-pager", "--full"),
        ("list-units", "--type=service", "--all", "--no-legend", "--no-pager", "--full"),
    ):
        out = _systemctl(*args, quiet=True)
        for line in out.get("stdout", "").splitlines():
            words = line.replace("\u25cf", " ").split()
            if words and words[0].endswith(".service"):
                unit = words[0][: -len(".service")]
                if not unit.endswith("@"):
                    names.add(unit)
    return sorted(names)


def available(name: str, **kwargs: Any) -> bool:
    """Whether systemd can load the unit."""
    out = _systemctl("show", "--property=LoadState", _unit(name), quiet=True)
    return out["retcode"] == 0 and out.get("stdout", "").strip() not in ("LoadState=not-found", "")


def missing(name: str, **kwargs: Any) -> bool:
    return not available(name)


def status(name: str, sig: str | None = None, **kwargs: Any) -> Any:
    """Whether the unit is active (``systemctl is-active``); a glob gives a dict."""
    if sig:
        return _sig_running(sig)
    if _is_glob(name):
        return _glob_status(name, get_all(), status)
    return bool(_systemctl("is-active", "--quiet", _unit(name), quiet=True)["retcode"] == 0)


def enabled(name: str, **kwargs: Any) -> bool:
    """Whether the unit starts at boot (``systemctl is-enabled``)."""
    lines = _systemctl("is-enabled", _unit(name), quiet=True).get("stdout", "").strip().splitlines()
    return bool(lines) and lines[-1].strip() in _ENABLED


def disabled(name: str, **kwargs: Any) -> bool:
    return not enabled(name)


def get_enabled(**kwargs: Any) -> list[str]:
    return _by_enabled(get_all(), enabled, True)


def get_disabled(**kwargs: Any) -> list[str]:
    return _by_enabled(get_all(), enabled, False)


# -- actions ---------------------------------------------------------------


def _no_block(kwargs: dict[str, Any]) -> list[str]:
    return ["--no-block"] if kwargs.get("no_block") else []


def start(name: str, **kwargs: Any) -> bool:
    return _ok(*_no_block(kwargs), "start", _unit(name))


def stop(name: str, **kwargs: Any) -> bool:
    return _ok(*_no_block(kwargs), "stop", _unit(name))


def restart(name: str, **kwargs: Any) -> bool:
    return _ok(*_no_block(kwargs), "restart", _unit(name))


def reload(name: str, **kwargs: Any) -> bool:
    return _ok(*_no_block(kwargs), "reload", _unit(name))


def force_reload(name: str, **kwargs: Any) -> bool:
    return _ok(*_no_block(kwargs), "force-reload", _unit(name))


def full_restart(name: str, **kwargs: Any) -> bool:
    """Stop, then start."""
    _ok("stop", _unit(name))
    return _ok(*_no_block(kwargs), "start", _unit(name))


def enable(name: str, **kwargs: Any) -> bool:
    if kwargs.get("unmask"):
        _ok("unmask", _unit(name))
    return _ok("enable", _unit(name))


def disable(name: str, **kwargs: Any) -> bool:
    return _ok("disable", _unit(name))


# offline, masked, mask, unmask: see briny.minion.host.systemd
offline, masked, mask, unmask = _systemd.service_functions(
    __name__,
    lambda: __salt__["cmd.run_all"],
    _timeout,
)
