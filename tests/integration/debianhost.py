"""Guarding this host while tests apply Debian states to it as root.

``HostGuard`` notes, before a test, the system files the Debian modules touch
(``/etc/locale.gen``, ``/etc/default/locale``, ``/etc/timezone``,
``/etc/localtime``, ``/etc/adjtime``, APT sources and keyrings, systemd unit
links, alternatives, compiled locales, debconf answers of ``briny*``
packages) and, after it, puts back whatever changed (files rewritten,
``briny*`` sources, keys, masks, alternatives and debconf answers removed,
``locale-gen`` run when the locale list changed), then checks the host is as
it was. Only names starting with ``briny`` are ever removed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Self

FILES = ("/etc/locale.gen", "/etc/default/locale", "/etc/timezone", "/etc/adjtime")
LISTED = ("/etc/apt/sources.list.d", "/etc/apt/keyrings", "/etc/systemd/system", "/var/lib/dpkg/alternatives")
TIMEOUT = 300


def _run(cmd: list[str], **kwargs: Any) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, check=False, **kwargs)


def _read(path: str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def _debconf_briny() -> list[str]:
    if not shutil.which("debconf-get-selections"):
        return []
    out = _run(["debconf-get-selections"]).stdout
    return sorted(line for line in out.splitlines() if line.startswith("briny"))


def snapshot() -> dict[str, Any]:
    snap: dict[str, Any] = {f: _read(f) for f in FILES}
    snap["/etc/localtime"] = (
        os.readlink("/etc/localtime") if os.path.islink("/etc/localtime") else _read("/etc/localtime")
    )
    for folder in LISTED:
        snap[folder] = sorted(os.listdir(folder)) if os.path.isdir(folder) else None
    snap["/run/systemd/system"] = os.path.exists("/run/systemd/system")
    snap["locale -a"] = _run(["locale", "-a"]).stdout
    snap["debconf"] = _debconf_briny()
    return snap


def _write_back(path: str, data: bytes | None) -> None:
    if data is None:
        if os.path.lexists(path):
            os.unlink(path)
        return
    tmp = f"{path}.brinytest-restore"
    Path(tmp).write_bytes(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def restore(before: dict[str, Any]) -> None:
    """Put back what changed since ``before`` (only briny's throwaway names are removed)."""
    now = snapshot()
    for path in FILES:
        if now[path] != before[path]:
            _write_back(path, before[path])
    if now["/etc/localtime"] != before["/etc/localtime"]:
        tmp = "/etc/.localtime.brinytest-restore"
        if isinstance(before["/etc/localtime"], str):
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(before["/etc/localtime"], tmp)
            os.replace(tmp, "/etc/localtime")
        else:
            _write_back("/etc/localtime", before["/etc/localtime"])
    for name in set(now["/var/lib/dpkg/alternatives"] or []) - set(before["/var/lib/dpkg/alternatives"] or []):
        if name.startswith("briny"):
            _run(["update-alternatives", "--remove-all", name])
    for folder in ("/etc/apt/sources.list.d", "/etc/apt/keyrings", "/etc/systemd/system"):
        for name in set(now[folder] or []) - set(before[folder] or []):
            if name.startswith("briny"):
                os.unlink(os.path.join(folder, name))
    if not before["/run/systemd/system"] and os.path.isdir("/run/systemd/system"):
        for name in os.listdir("/run/systemd/system"):
            if name.startswith("briny"):
                os.unlink(os.path.join("/run/systemd/system", name))
        try:
            os.rmdir("/run/systemd/system")
        except OSError:
            pass
    for pkg in sorted({line.split()[0] for line in set(now["debconf"]) - set(before["debconf"])}):
        _run(["debconf-communicate", pkg], input="PURGE\n")
    if snapshot()["locale -a"] != before["locale -a"] and shutil.which("locale-gen"):
        _run(["locale-gen"])


class HostGuard:
    """``with HostGuard() as guard: ...``; ``guard.check()`` says what differs afterwards."""

    def __enter__(self) -> Self:
        self.before = snapshot()
        return self

    def __exit__(self, *exc: object) -> None:
        restore(self.before)

    def differences(self) -> list[str]:
        now = snapshot()
        return [key for key in self.before if self.before[key] != now[key]]
