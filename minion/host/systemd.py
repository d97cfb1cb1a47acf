"""systemd facts and unit masks, shared by both ``service`` execution modules.

Runs on the managed host. What is decided here:

- **booted**: systemd runs as PID 1 (``/run/systemd/system`` exists, the
  test ``sd_booted()`` makes);
- **offline**: ``systemctl`` is installed but systemd is not PID 1 (a
  container, a chroot). Salt 3007 calls this "offline mode": its ``service``
  states ``running`` and ``dead`` do nothing there;
- **masks**: a unit is masked when ``/etc/systemd/system/UNIT`` (runtime:
  ``/run/systemd/system/UNIT``) is a symlink to ``/dev/null``. Masking and
  unmasking run ``systemctl mask`` / ``unmask``, which edit those links and
  need no running systemd.

A runtime mask is refused offline: ``systemctl mask --runtime`` would create
``/run/systemd/system``, and from then on every program (Salt, briny,
``sd_booted()``) would take the host for one booted with systemd.
"""

from __future__ import annotations

import errno
import logging
import os
import shutil
from collections.abc import Callable
from typing import Any

from briny.common.exceptions import CommandExecutionError

log = logging.getLogger(__name__)

# Where things are (module globals, so tests can point them elsewhere)
RUN_DIR = "/run/systemd/system"
ETC_DIR = "/etc/systemd/system"
UNIT_SUFFIXES = (
    ".service",
    ".socket",
    ".target",
    ".timer",
    ".mount",
    ".path",
    ".slice",
    ".scope",
    ".device",
    ".swap",
    ".automount",
)


def booted() -> bool:
    """Whether systemd runs as PID 1 on this host."""
    return os.path.isdir(RUN_DIR)


def systemctl() -> str | None:
    """The path of ``systemctl``, or None when it is not installed."""
    return shutil.which("systemctl")


def offline() -> bool:
    """``systemctl`` is installed but systemd is not PID 1 (Salt's offline mode)."""
    return not booted() and systemctl() is not None


def unit(name: Any) -> str:
    """The unit's full name: names without a unit suffix are ``.service`` units."""
    name = str(name)
    return name if name.endswith(UNIT_SUFFIXES) else f"{name}.service"


def _link(name: Any, runtime: bool, root: str | None) -> str:
    folder = RUN_DIR if runtime else ETC_DIR
    if root:
        folder = os.path.join(root, os.path.relpath(folder, os.sep))
    return os.path.join(folder, unit(name))


def masked(name: Any, runtime: bool = False, root: str | None = None) -> bool:
    """Whether the unit has a mask (the indefinite one, or with ``runtime`` the runtime one)."""
    path = _link(name, runtime, root)
    try:
        return os.readlink(path) == "/dev/null"
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            log.warning("%s is a file, not a mask link: unit %s is not masked", path, unit(name))
        return False


def set_mask(
    run: Callable[..., dict[str, Any]],
    name: Any,
    mask: bool,
    runtime: bool = False,
    root: str | None = None,
    timeout: int = 120,
) -> bool:
    """Mask (``mask=True``) or unmask the unit with ``systemctl``; ``run`` is ``cmd.run_all``.

    Unmasking a unit that has no such mask does nothing. Raises
    :class:`CommandExecutionError` when ``systemctl`` fails or is missing,
    and for a runtime mask on a host where systemd is not running.
    """
    verb = "mask" if mask else "unmask"
    if not mask and not masked(name, runtime, root):
        log.debug("unit %s has no %smask", unit(name), "runtime " if runtime else "")
        return True
    exe = systemctl()
    if exe is None:
        raise CommandExecutionError(f"Failed to {verb} service '{name}': systemctl is not installed")
    if runtime and not root and not booted():
        raise CommandExecutionError(
            f"Failed to {verb} service '{name}': a runtime mask needs systemd running as PID 1 "
            f"(offline mode; systemctl would create {RUN_DIR} and the host would look booted with systemd)"
        )
    cmd = [exe]
    if root:
        cmd += ["--root", str(root)]
    cmd += [verb, *(["--runtime"] if runtime else []), unit(name)]
    out = run(cmd, python_shell=False, timeout=timeout, ignore_retcode=True, redirect_stderr=True)
    if out["retcode"] != 0:
        text = (out.get("stdout") or out.get("stderr") or "").strip()
        raise CommandExecutionError(f"Failed to {verb} service '{name}'" + (f": {text}" if text else ""))
    return True


def service_functions(
    module: str, run: Callable[[], Callable[..., dict[str, Any]]], timeout: Callable[[], int]
) -> tuple[Callable[..., bool], ...]:
    """``offline``, ``masked``, ``mask`` and ``unmask`` as execution functions of ``module``.

    Both ``service`` modules carry them (the systemd one always, the sysvinit
    one in offline mode); ``run`` returns ``cmd.run_all`` at call time,
    ``timeout`` the module's command timeout.
    """

    def offline_(**kwargs: Any) -> bool:
        """Whether systemd is installed but not running as PID 1 (Salt's offline mode)."""
        return offline()

    def masked_(name: str, runtime: bool = False, root: str | None = None, **kwargs: Any) -> bool:
        """Whether the unit is masked (``runtime=True``: masked until the next reboot)."""
        return masked(name, runtime, root)

    def mask_(name: str, runtime: bool = False, root: str | None = None, **kwargs: Any) -> bool:
        """Mask the unit (``systemctl mask [--runtime]``): it can no longer be started."""
        return set_mask(run(), name, True, runtime, root, timeout())

    def unmask_(name: str, runtime: bool = False, root: str | None = None, **kwargs: Any) -> bool:
        """Remove the unit's mask (the indefinite one, or with ``runtime`` the runtime one)."""
        return set_mask(run(), name, False, runtime, root, timeout())

    funcs = (offline_, masked_, mask_, unmask_)
    for fun in funcs:
        fun.__module__ = module
        fun.__name__ = fun.__qualname__ = fun.__name__.rstrip("_")
    return funcs
