"""Execution module ``alternatives``: Debian's alternatives system (``update-alternatives``).

Runs on the managed host (minion / ``briny-call``), where ``/etc/alternatives``
exists. Functions and answers are Salt 3007's:

- ``display(name)`` / ``install`` / ``remove`` / ``auto`` / ``set``: the
  output of ``update-alternatives`` (its error text when it fails);
- ``show_current(name)``: the path ``/etc/alternatives/NAME`` points to, or
  False when there is no such alternative;
- ``show_link(name)``: the master link (``/usr/bin/editor`` for ``editor``),
  or False;
- ``check_exists(name, path)``: whether ``path`` is one of the alternatives of
  ``name``; ``check_installed(name, path)``: whether it is the current one.

One difference from Salt, on purpose: ``check_exists`` matches the path
exactly (Salt accepts any alternative whose path starts with it, so
``/usr/bin/vim`` "exists" when only ``/usr/bin/vim.basic`` does).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

__func_alias__ = {"set_": "set"}

# Where things are (module globals, so tests can point them elsewhere)
ALT_DIR = "/etc/alternatives"
COMMAND = "update-alternatives"


def __virtual__() -> Any:
    if os.path.isdir(ALT_DIR):
        return True
    return (False, f"Cannot load alternatives module: {ALT_DIR} dir not found")


def _run(*args: Any, quiet: bool = False) -> dict[str, Any]:
    return __salt__["cmd.run_all"](
        [COMMAND, *(str(a) for a in args)],
        python_shell=False,
        ignore_retcode=quiet,
        output_loglevel="trace" if quiet else "debug",
    )


def _answer(out: dict[str, Any]) -> str:
    """Salt's answer: the error text when the command failed, else its output."""
    if out["retcode"] != 0 and out.get("stderr"):
        return str(out["stderr"])
    return str(out.get("stdout", ""))


def display(name: str, **kwargs: Any) -> str:
    """``update-alternatives --display NAME`` (the error text when there is no such alternative)."""
    return _answer(_run("--display", name, quiet=True))


def show_link(name: str, **kwargs: Any) -> Any:
    """The master link of ``name`` (e.g. ``/usr/bin/pager``), or False."""
    out = _run("--query", name, quiet=True)
    if out["retcode"] != 0:
        return False
    for line in str(out.get("stdout", "")).split("\n\n", 1)[0].splitlines():
        if line.startswith("Link:"):
            return line.split(":", 1)[1].strip()
    return False


def show_current(name: str, **kwargs: Any) -> Any:
    """The path the alternative currently points to, or False when there is none."""
    try:
        return os.readlink(os.path.join(ALT_DIR, str(name)))
    except OSError:
        log.error("alternative: %s does not exist", name)
        return False


def _registered(display_text: str, path: str) -> bool:
    """Whether ``path`` is one of the alternatives in ``--display`` output."""
    path = str(path)
    return any(line == path or line.startswith(path + " - ") for line in display_text.splitlines())


def check_exists(name: str, path: str, **kwargs: Any) -> bool:
    """Whether ``path`` is registered as an alternative for ``name``."""
    out = _run("--display", name, quiet=True)
    if out["retcode"] != 0:
        return False
    return _registered(str(out.get("stdout", "")), path)


def check_installed(name: str, path: str, **kwargs: Any) -> bool:
    """Whether ``path`` is the current alternative for ``name``."""
    try:
        return os.readlink(os.path.join(ALT_DIR, str(name))) == str(path)
    except OSError:
        return False


def install(name: str, link: str, path: str, priority: Any, **kwargs: Any) -> str:
    """Register ``path`` for ``name`` behind the symlink ``link`` with ``priority``."""
    return _answer(_run("--install", link, name, path, priority))


def remove(name: str, path: str, **kwargs: Any) -> str:
    """Unregister ``path`` from ``name`` (the group goes when it was the last one)."""
    return _answer(_run("--remove", name, path))


def auto(name: str, **kwargs: Any) -> str:
    """Let the highest priority alternative of ``name`` be used (automatic mode)."""
    return _answer(_run("--auto", name))


def set_(name: str, path: str, **kwargs: Any) -> str:
    """Use ``path`` for ``name`` (manual mode)."""
    return _answer(_run("--set", name, path))
