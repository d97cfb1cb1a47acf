"""The ``alternatives`` state module: Debian's alternatives system.

``install`` registers a path for a name (``link`` is the symlink that leads
to ``/etc/alternatives/NAME``, ``priority`` counts in automatic mode);
``remove`` unregisters it; ``set`` chooses one by hand; ``auto`` returns to
the highest priority. The work goes through the ``alternatives`` execution
module (``update-alternatives``).

Results follow Salt 3007 (checked against the reference on Debian 12, live,
test mode and second runs), including the extra keys Salt puts in each
result (``link``, ``path``, ``priority`` for ``install``; ``path`` for
``remove`` and ``set``): ``Alternative for x set to path p with priority n``
(changes ``{name, link, path, priority}``), ``Alternative p for x registered
with priority n and not set to default``, ``Alternative p for x is already
registered``, ``Alternative for x removed. Falling back to path q``
(changes ``{path: q}``), ``Alternative for x set to path p`` (changes
``{path: p}``), ``x already in auto mode``; in test mode ``Alternative will
be set for x to p with priority n``, ``Alternative for x will be removed``,
``Alternative for x will be set to path p``, ``x will be put in auto mode``.
As in Salt, removing the last alternative of a name reports no changes, and
``remove`` / ``set`` of a name that does not exist fail (``Alternative for x
doesn't exist``, ``Alternative p for x doesn't exist``).

Differences from Salt, on purpose, where Salt reports success for what
failed: ``auto`` of a name that does not exist fails with
update-alternatives' error (Salt: result True, the error text as its
change), and ``set`` that did not take fails (``Alternative for x not
updated``; Salt: result True).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


__func_alias__ = {"set_": "set"}


def _salt(fun: str) -> Any:
    return __salt__[f"alternatives.{fun}"]


def _answer(ret: dict[str, Any], result: bool | None, comment: str, **changes: Any) -> dict[str, Any]:
    """``ret`` with this result and comment (and changes, when given)."""
    ret.update(result=result, comment=comment)
    if changes:
        ret["changes"] = changes
    return ret


def install(name: str, link: str, path: str, priority: Any) -> dict[str, Any]:
    """Make sure ``path`` is registered as an alternative for ``name`` behind ``link``."""
    ret: dict[str, Any] = {
        "name": name,
        "link": link,
        "path": path,
        "priority": priority,
        "result": True,
        "changes": {},
        "comment": "",
    }
    if _salt("check_exists")(name, path):
        return _answer(ret, True, f"Alternative {path} for {name} is already registered")
    if _testing():
        return _answer(ret, None, f"Alternative will be set for {name} to {path} with priority {priority}")
    out = _salt("install")(name, link, path, priority)
    if not _salt("check_exists")(name, path):
        return _answer(ret, False, f"Alternative for {name} not installed: {out}")
    if _salt("check_installed")(name, path):
        comment = f"Alternative for {name} set to path {path} with priority {priority}"
    else:
        comment = f"Alternative {path} for {name} registered with priority {priority} and not set to default"
    return _answer(ret, True, comment, name=name, link=link, path=path, priority=priority)


def remove(name: str, path: str) -> dict[str, Any]:
    """Make sure ``path`` is not an alternative for ``name`` (another one takes over)."""
    ret: dict[str, Any] = {"name": name, "path": path, "result": True, "changes": {}, "comment": ""}
    if _salt("check_exists")(name, path):
        if _testing():
            return _answer(ret, None, f"Alternative for {name} will be removed")
        _salt("remove")(name, path)
        current = _salt("show_current")(name)
        if current:
            return _answer(ret, True, f"Alternative for {name} removed. Falling back to path {current}", path=current)
        return _answer(ret, True, f"Alternative for {name} removed")
    current = _salt("show_current")(name)
    if current:
        return _answer(ret, True, f"Alternative for {name} is set to it's default path {current}")
    return _answer(ret, False, f"Alternative for {name} doesn't exist")


def auto(name: str) -> dict[str, Any]:
    """Make sure ``name`` is in automatic mode (the highest priority alternative is used)."""
    ret: dict[str, Any] = {"name": name, "result": True, "comment": "", "changes": {}}
    shown = str(_salt("display")(name))
    first = (shown.splitlines() or [""])[0]
    if first.endswith(" auto mode"):
        return _answer(ret, True, f"{name} already in auto mode")
    if _testing():  # an earlier state may register it: Salt's answer
        return _answer(ret, None, f"{name} will be put in auto mode")
    if not first.startswith(f"{name} - "):  # no such alternative: update-alternatives' error
        return _answer(ret, False, shown.strip() or f"Alternative for {name} doesn't exist")
    ret["changes"] = {"result": _salt("auto")(name)}
    return ret


def set_(name: str, path: str) -> dict[str, Any]:
    """Make sure ``name`` uses ``path``, one of its registered alternatives (manual mode)."""
    ret: dict[str, Any] = {"name": name, "path": path, "result": True, "changes": {}, "comment": ""}
    if _salt("show_current")(name) == path:
        return _answer(ret, True, f"Alternative for {name} already set to {path}")
    if not _salt("check_exists")(name, path):
        return _answer(ret, False, f"Alternative {path} for {name} doesn't exist")
    if _testing():
        return _answer(ret, None, f"Alternative for {name} will be set to path {path}")
    _salt("set")(name, path)
    current = _salt("show_current")(name)
    if current == path:
        return _answer(ret, True, f"Alternative for {name} set to path {current}", path=current)
    return _answer(ret, False, f"Alternative for {name} not updated")  # Salt 3007: result True
