"""The ``event`` state module: fire events during a state run.

Runs wherever states run; events go through the ``event`` execution module
(``event.send``) to this host's event bus, and from a minion on to its
master. ``name`` is the tag.

Results follow Salt 3007: changes ``{"tag": name, "data": data}`` (empty
with ``show_changed: False``), comment ``Event fired``, result the return of
``event.send`` (False when no bus is listening, as Salt's ``salt-call
--local`` reports without a minion); test mode ``Event would have been
fired`` with result None. ``event.wait`` does nothing until a ``watch``
fires its ``mod_watch``, which sends the event.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


def send(
    name: str,
    data: Any = None,
    preload: Any = None,
    with_env: Any = False,
    with_grains: Any = False,
    with_pillar: Any = False,
    show_changed: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    """Fire the event ``name`` with ``data``."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": False, "comment": ""}
    if show_changed:
        ret["changes"] = {"tag": name, "data": data}
    if __opts__["test"]:
        ret.update(result=None, comment="Event would have been fired")
        return ret
    extra = {k: v for k, v in kwargs.items() if k not in ("sfun", "__reqs__")}
    ret["result"] = bool(
        __salt__["event.send"](
            name,
            data=data,
            preload=preload,
            with_env=with_env,
            with_grains=with_grains,
            with_pillar=with_pillar,
            **extra,
        )
    )
    ret["comment"] = "Event fired"
    return ret


def wait(name: str, sfun: Any = None, data: Any = None) -> dict[str, Any]:
    """Do nothing now; the event is sent when a ``watch`` requisite fires ``mod_watch``."""
    return {"name": name, "changes": {}, "result": True, "comment": ""}


def mod_watch(name: str, sfun: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Send the event of an ``event.wait`` / ``event.send`` whose watched state changed."""
    kwargs.pop("__reqs__", None)
    return send(name, **kwargs)
