"""Execution module ``hosts``: the hosts file (Salt 3007's ``hosts``).

The file is the ``hosts.file`` config key (minion config, grains or
pillar, as ``config.option`` finds it; default ``/etc/hosts``). Functions
and return values are Salt's: ``list_hosts`` (``{ip: {"aliases": [...],
"comment": c}, "comment-N": [line]}``), ``get_ip`` (``""`` when unknown),
``get_alias``, ``has_pair``, ``set_host`` / ``add_host`` / ``rm_host`` /
``set_comment`` (True, or False when the file is not a regular file or the
address is not there). The format and how lines are edited:
:mod:`briny.minion.host.sysfiles.hosts`.

The file is rewritten atomically (a temporary file and a rename, owner and
mode kept) and only when something changes; a hosts file that is a mount
point (containers bind-mount ``/etc/hosts``) is rewritten in place. A
missing file is created empty by the functions that write, as Salt does.
Unreadable files raise Salt's ``Permission denied reading from F`` /
``Error N encountered reading from F: ...``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.sysfiles import hosts as hostsfile
from briny.minion.host.sysfiles.replace import read_error, read_text, replace_text

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def _path() -> str:
    path = __salt__["config.option"]("hosts.file", "/etc/hosts")
    return str(path or "/etc/hosts")


def _read(path: str) -> list[hostsfile.HostLine]:
    try:
        text = read_text(path, errors="surrogateescape")
    except OSError as exc:
        raise CommandExecutionError(read_error(exc, path)) from None
    return hostsfile.parse(text or "")


def _writable() -> tuple[str, list[hostsfile.HostLine]] | None:
    """The path and lines of the file to edit (created when missing); None when it is no regular file."""
    path = _path()
    if not os.path.lexists(path):
        try:
            replace_text(path, "")
        except OSError as exc:
            raise CommandExecutionError(f"Unable to create {path}: {exc}") from None
    if not os.path.isfile(path):
        return None
    return path, _read(path)


def _write(path: str, lines: list[hostsfile.HostLine]) -> None:
    try:
        replace_text(path, hostsfile.render(lines), errors="surrogateescape")
    except OSError as exc:
        raise CommandExecutionError(f"Unable to write {path}: {exc}") from None


def _listing() -> dict[str, Any]:
    return hostsfile.listing(_read(_path()))


def list_hosts(**kwargs: Any) -> dict[str, Any]:
    """Every address with its aliases (and comment), and the full-line comments."""
    return _listing()


def get_ip(host: str, **kwargs: Any) -> str:
    """The first address ``host`` is an alias of, or ``""``."""
    for addr, info in _listing().items():
        if isinstance(info, dict) and host in info.get("aliases", []):
            return addr
    return ""


def get_alias(ip: str, **kwargs: Any) -> list[str]:
    """The aliases of ``ip``, in file order (``[]`` when it is not there)."""
    info = _listing().get(ip)
    return list(info["aliases"]) if isinstance(info, dict) else []


def has_pair(ip: str, alias: Any, **kwargs: Any) -> bool:
    """True when ``alias`` (or every alias of a list) belongs to ``ip``."""
    info = _listing().get(ip)
    if not isinstance(info, dict):
        return False
    if isinstance(alias, list):
        return set(alias).issubset(info["aliases"])
    return alias in info["aliases"]


def _edit(change: Callable[[list[hostsfile.HostLine]], bool | None]) -> bool:
    """Apply ``change`` to the file's lines; write when it says it changed something (True).
    False when the file is no regular file or ``change`` says None (nothing to change it on)."""
    found = _writable()
    if found is None:
        return False
    path, lines = found
    changed = change(lines)
    if changed:
        _write(path, lines)
    return changed is not None


def set_host(ip: str, alias: str, comment: str | None = None, **kwargs: Any) -> bool:
    """Make ``alias`` (names separated by spaces) the whole entry of ``ip``; empty removes ``ip``."""
    return _edit(lambda lines: hostsfile.set_names(lines, str(ip), str(alias), comment or None))


def add_host(ip: str, alias: str, **kwargs: Any) -> bool:
    """Add ``alias`` to ``ip`` (a new entry when ``ip`` has none)."""
    return _edit(lambda lines: hostsfile.add_name(lines, str(ip), str(alias)))


def rm_host(ip: str, alias: str, **kwargs: Any) -> bool:
    """Remove ``alias`` from ``ip``; an entry left without aliases goes."""
    if not has_pair(ip, alias):
        return True
    return _edit(lambda lines: hostsfile.remove_name(lines, str(ip), str(alias)))


def set_comment(ip: str, comment: str, **kwargs: Any) -> bool:
    """Set the comment of ``ip``'s entry; False when ``ip`` has none."""

    def change(lines: list[hostsfile.HostLine]) -> bool | None:
        if not any(line.ip == ip for line in lines):
            return None
        return hostsfile.set_comment(lines, str(ip), str(comment))

    return _edit(change)
