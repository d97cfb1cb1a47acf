"""``pkg.uptodate``: upgrade every package (or those of ``pkgs``) the repositories have newer
versions of, as Salt 3007's state does (a private part of :mod:`briny.states.pkg`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__

__all__ = ["uptodate"]


def uptodate(name: str, refresh: Any = False, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Make sure every package (or the ``pkgs`` named) is at the newest version offered."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": False, "comment": "Failed to update"}
    if "pkg.list_upgrades" not in __salt__:
        ret["comment"] = "State pkg.uptodate is not available"
        return ret
    if not isinstance(refresh, bool):
        ret["comment"] = "refresh must be either True or False"
        return ret
    for key in [k for k in kwargs if k.startswith("__")]:
        kwargs.pop(key)
    try:
        packages: Any = __salt__["pkg.list_upgrades"](refresh=refresh, **kwargs)
        expected = {
            pname: {"new": pver, "old": __salt__["pkg.version"](pname, **kwargs)} for pname, pver in packages.items()
        }
        if isinstance(pkgs, list):
            packages = [p for p in packages if p in pkgs]
            expected = {p: v for p, v in expected.items() if p in pkgs}
    except Exception as exc:  # noqa: BLE001 - any failure of the query is the state's comment, as Salt
        ret["comment"] = str(exc)
        return ret
    if not packages:
        ret.update(result=True, comment="System is already up-to-date")
        return ret
    if __opts__.get("test"):
        ret.update(result=None, comment="System update will be performed", changes=expected)
        return ret
    try:
        ret["changes"] = __salt__["pkg.upgrade"](refresh=refresh, pkgs=pkgs, **kwargs)
    except CommandExecutionError as exc:
        info = exc.info if isinstance(exc.info, dict) else None
        if info:
            ret["changes"] = info.get("changes", {})
            ret["comment"] = str(exc)
        else:
            ret["comment"] = f"An error was encountered while updating packages: {exc}"
        return ret
    missing = [p for p in expected if p not in ret["changes"]] if isinstance(pkgs, list) else []
    if missing:
        ret.update(result=False, comment=f"The following package(s) failed to update: {', '.join(missing)}")
    else:
        ret.update(result=True, comment="Upgrade ran successfully")
    return ret
