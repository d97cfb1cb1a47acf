"""Execution module ``event``: fire events from the managed host.

Runs on the minion and in ``briny-call``. Events go to this host's local
event bus (the IPC sockets under ``sock_dir``) through
:func:`briny.common.event.fire_event`; a minion daemon relays them to its
master, as Salt's does. Tags and data are Salt's: ``event.send`` builds the
data from ``data``, the extra keyword arguments and, when asked,
``environ`` (``with_env``), ``grains`` (``with_grains``), ``pillar``
(``with_pillar``) and ``saltenv`` / ``pillarenv`` (``with_env_opts``);
a list instead of True picks only those keys.

Return values are Salt's: True when the event was handed to a running bus,
False when no bus is listening on this host (as Salt's ``salt-call --local``
reports without a minion), never an exception.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.event import EventBus, fire_event

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __opts__, __pillar__


log = logging.getLogger(__name__)


def _opts() -> dict[str, Any]:
    return __opts__


def _bus_listening() -> bool:
    try:
        return os.path.exists(EventBus(_opts()).pull_path)
    except (OSError, ValueError):
        return False


def _valid_tag(tag: Any) -> str | None:
    text = str(tag) if tag is not None else ""
    if not text or "\x00" in text:
        return None
    return text


def fire(data: Any, tag: str, timeout: Any = None, **kwargs: Any) -> bool:
    """Fire ``data`` with ``tag`` on this host's event bus."""
    text = _valid_tag(tag)
    if text is None:
        log.error("event.fire: an event needs a tag")
        return False
    payload = dict(data) if isinstance(data, Mapping) else {"data": data}
    if not _bus_listening():
        log.debug("event %s not fired: no event bus is listening on this host", text)
        return False
    try:
        fire_event(_opts(), text, payload)
    except (OSError, ValueError) as exc:
        log.debug("event %s not fired: %s", text, exc)
        return False
    return True


def fire_master(data: Any, tag: str, preload: Any = None, timeout: Any = None, **kwargs: Any) -> bool:
    """Fire an event meant for the master; the minion daemon's bus relays it."""
    payload = dict(data) if isinstance(data, Mapping) else {"data": data}
    if preload and isinstance(preload, Mapping):
        payload = {**preload, **payload}
    return fire(payload, tag)


def _subset(keys: Any, source: Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(keys, (list, tuple, set)):
        return {k: v for k, v in source.items() if k in keys}
    return dict(source)


def send(
    tag: str,
    data: Any = None,
    preload: Any = None,
    with_env: Any = False,
    with_grains: Any = False,
    with_pillar: Any = False,
    with_env_opts: bool = False,
    **kwargs: Any,
) -> bool:
    """Fire ``tag`` with ``data`` (plus whatever ``with_*`` asks for) on this host's bus."""
    payload: dict[str, Any] = {}
    if with_env:
        payload["environ"] = _subset(with_env, dict(os.environ))
    if with_grains:
        payload["grains"] = _subset(with_grains, __grains__)
    if with_pillar:
        payload["pillar"] = _subset(with_pillar, __pillar__)
    if with_env_opts:
        payload["saltenv"] = _opts().get("saltenv") or "base"
        payload["pillarenv"] = _opts().get("pillarenv")
    payload.update(kwargs)  # the job's __pub_* keys too, as Salt's event.send sends them
    if isinstance(data, Mapping):
        payload.update(data)
    opts = _opts()
    local = opts.get("local") or opts.get("file_client") == "local" or opts.get("master_type") == "disable"
    if local and not opts.get("use_master_when_local"):
        return fire(payload, tag)
    return fire_master(payload, tag, preload=preload)
