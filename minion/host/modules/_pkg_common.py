"""What every ``pkg`` provider shares: the changes between two ``{name: version}`` maps and
the package names of a call's ``name`` / ``pkgs`` (a private part of the pkg modules)."""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import SaltInvocationError

__all__: list[str] = []


def version_changes(old: dict[str, str], new: dict[str, str]) -> dict[str, dict[str, str]]:
    """``{name: {"old", "new"}}`` for each package whose version differs ("" when absent)."""
    changes: dict[str, dict[str, str]] = {}
    for name in sorted(set(old) | set(new)):
        if old.get(name, "") != new.get(name, ""):
            changes[name] = {"old": old.get(name, ""), "new": new.get(name, "")}
    return changes


def package_names(name: str | None, pkgs: Any) -> list[str]:
    """The names of ``pkgs`` (names or ``{name: version}`` items, or a comma-separated
    string), else of ``name`` (comma-separated)."""
    if pkgs:
        if isinstance(pkgs, str):
            pkgs = [p.strip() for p in pkgs.split(",") if p.strip()]
        if not isinstance(pkgs, list):
            raise SaltInvocationError("'pkgs' must be a list of package names")
        out: list[str] = []
        for item in pkgs:
            if isinstance(item, dict):
                out.extend(str(k) for k in item)
            else:
                out.append(str(item))
        return out
    if name:
        return [n.strip() for n in str(name).split(",") if n.strip()]
    return []
