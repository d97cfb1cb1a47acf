"""This minion's pillar: where a job's pillar comes from, and where the daemon keeps it.

Runs in the minion daemon (its worker threads) and in job processes. The
rendering itself is :mod:`briny.common.pillar` (the same compiler the master
runs for each minion in :mod:`briny.master.pillar`); this module only chooses
the source and keeps what it got:

- :class:`LocalPillar`: rendered from this host's ``pillar_roots``
  (masterless: ``briny-call --local``, a daemon with ``file_client: local``);
- :class:`MasterPillar`: what the master renders for this minion, asked with a
  ``pillar`` request, kept until ``saltutil.refresh_pillar``;
- :class:`StaticPillar`: the config's ``pillar:`` (no master answer yet);
- :class:`ChannelPillar`: a job process's view of the daemon's source (the
  daemon's kept pillar over the job channel; masterless, rendered in the job
  process when the daemon keeps none yet, and handed back to keep).

A ``pillar=`` override is rendered into the pillar where the source renders
(``compile_with``), else merged over it
(:func:`briny.common.pillar.with_override`).

``fresh`` compiles a pillar now without keeping it, whatever the source
keeps (``pillar.items``, as Salt's, which always asks afresh): rendered from
the ``pillar_roots`` masterless (the override rendered in), asked of the
master otherwise (the override merged over it).
"""

from __future__ import annotations


import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from briny.common.datacopy import copy_data
from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    import concurrent.futures

log = logging.getLogger(__name__)


class PillarSource(Protocol):
    """Where a job's pillar comes from (worker code)."""

    def get(self, opts: dict[str, Any], grains: dict[str, Any], salt: Any) -> dict[str, Any]: ...

    def compile_with(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any]
    ) -> dict[str, Any] | None:
        """Pillar with a ``pillar=`` override, or None to merge the override in the module."""

    def fresh(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any] | None
    ) -> dict[str, Any]:
        """A pillar compiled now, never kept (``pillar.items``)."""

    def refresh(self) -> None:
        """Forget a kept pillar (``saltutil.refresh_pillar``)."""


class LocalPillar:
    """Pillar rendered from this host's ``pillar_roots`` (masterless).

    With ``cache`` (the daemon) the pillar is rendered on first use and kept
    until :meth:`refresh`; without (``briny-call``) every call renders it.
    """

    def __init__(self, cache: bool = False) -> None:
        self.cache = cache
        self._lock = threading.Lock()
        self._pillar: dict[str, Any] | None = None

    def get(self, opts: dict[str, Any], grains: dict[str, Any], salt: Any) -> dict[str, Any]:
        from briny.common.pillar import compile_local_pillar  # Jinja and the compiler: only now

        if not self.cache:
            return compile_local_pillar(opts, grains, salt)
        with self._lock:
            if self._pillar is None:
                self._pillar = compile_local_pillar(opts, grains, salt)
            return copy_data(self._pillar)

    def compile_with(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any]
    ) -> dict[str, Any] | None:
        from briny.common.pillar import compile_local_pillar

        return compile_local_pillar(opts, grains, salt, override)

    def fresh(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any] | None
    ) -> dict[str, Any]:
        from briny.common.pillar import compile_local_pillar

        return compile_local_pillar(opts, grains, salt, override)

    def refresh(self) -> None:
        with self._lock:
            self._pillar = None

    def kept(self) -> dict[str, Any] | None:
        """The kept pillar (a copy), or None when the next job renders it."""
        with self._lock:
            return copy_data(self._pillar) if self._pillar is not None else None

    def keep(self, pillar: dict[str, Any]) -> None:
        """Keep a pillar a job process rendered (``multiprocessing: True``) until :meth:`refresh`."""
        if self.cache:
            with self._lock:
                if self._pillar is None:
                    self._pillar = copy_data(pillar)


class StaticPillar:
    """The ``pillar:`` key of the config (a minion whose master serves no pillar yet)."""

    def get(self, opts: dict[str, Any], grains: dict[str, Any], salt: Any) -> dict[str, Any]:
        value = opts.get("pillar")
        return copy_data(value) if isinstance(value, dict) else {}

    def compile_with(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any]
    ) -> dict[str, Any] | None:
        return None

    def fresh(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any] | None
    ) -> dict[str, Any]:
        return _overridden(self.get(opts, grains, salt), override)

    def refresh(self) -> None:
        pass


class MasterPillar:
    """Pillar the master renders for this minion (a ``pillar`` request, made by ``fetch`` from the
    worker), kept until :meth:`refresh`; the config's ``pillar:`` when the master serves none.

    ``fetch`` returns the reply payload, or None when the master did not answer (no session, a
    timeout): then this job gets the config's ``pillar:`` and the next job asks again; an answer
    without a pillar (``{"error": ...}``: a master that serves none) is kept like a pillar."""

    def __init__(self, fetch: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
        self.fetch = fetch
        self._lock = threading.Lock()
        self._pillar: dict[str, Any] | None = None

    def _ask(self, opts: dict[str, Any]) -> dict[str, Any] | None:
        """Ask the master (lock held); the pillar to keep, or None when it did not answer."""
        reply = self.fetch(_envs(opts))
        return None if reply is None else _served(reply, opts)

    def get(self, opts: dict[str, Any], grains: dict[str, Any], salt: Any) -> dict[str, Any]:
        with self._lock:
            if self._pillar is None:
                self._pillar = self._ask(opts)
                if self._pillar is None:
                    log.warning("no pillar from the master for this job; using the config's 'pillar'")
                    return StaticPillar().get(opts, grains, salt)
            return copy_data(self._pillar)

    def reload(self, opts: dict[str, Any]) -> bool:
        """Ask the master again now (``saltutil.refresh_pillar``); False when it did not answer
        (the next job asks again)."""
        with self._lock:
            self._pillar = self._ask(opts)
            return self._pillar is not None

    def compile_with(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any]
    ) -> dict[str, Any] | None:
        return None

    def fresh(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any] | None
    ) -> dict[str, Any]:
        return _fresh_from_master(self.fetch(_envs(opts)), opts, override)

    def refresh(self) -> None:
        with self._lock:
            self._pillar = None


class ChannelPillar:
    """The job's pillar source: the daemon's kept pillar; masterless, rendered here when the daemon
    keeps none yet (and handed to the daemon to keep)."""

    def __init__(self, chan: Any, local: bool) -> None:  # chan: the job's JobChannel
        self.chan = chan
        self.local = local

    def get(self, opts: dict[str, Any], grains: dict[str, Any], salt: Any) -> dict[str, Any]:
        value = self.chan.call("pillar")
        if isinstance(value, dict):
            return value
        if not self.local:
            return StaticPillar().get(opts, grains, salt)
        pillar = LocalPillar().get(opts, grains, salt)
        self.chan.send("pillar_keep", pillar=pillar)
        return pillar

    def compile_with(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any]
    ) -> dict[str, Any] | None:
        return LocalPillar().compile_with(opts, grains, salt, override) if self.local else None

    def fresh(
        self, opts: dict[str, Any], grains: dict[str, Any], salt: Any, override: dict[str, Any] | None
    ) -> dict[str, Any]:
        if self.local:
            return LocalPillar().fresh(opts, grains, salt, override)
        reply = self.chan.call("request", payload={"cmd": "pillar", **_envs(opts)}, timeout=None)
        return _fresh_from_master(reply if isinstance(reply, dict) else None, opts, override)

    def refresh(self) -> None:
        self.chan.call("refresh_pillar")


def _envs(opts: dict[str, Any]) -> dict[str, Any]:
    """The environments a ``pillar`` request names (the master's defaults apply to the rest)."""
    return {k: opts[k] for k in ("saltenv", "pillarenv") if opts.get(k)}


def _served(reply: dict[str, Any], opts: dict[str, Any]) -> dict[str, Any]:
    """The pillar of the master's reply to a ``pillar`` request; the config's ``pillar:`` when it
    serves none (an answer without a pillar, logged)."""
    pillar = reply.get("pillar")
    if isinstance(pillar, dict):
        return pillar
    log.debug("the master served no pillar (%s); using the config's 'pillar'", reply.get("error", "no error"))
    return StaticPillar().get(opts, {}, None)


def _fresh_from_master(
    reply: dict[str, Any] | None, opts: dict[str, Any], override: dict[str, Any] | None
) -> dict[str, Any]:
    """The fresh pillar of the master's ``reply`` with ``override`` merged over it; a master that
    did not answer is an error: a kept pillar is never passed off as a fresh one."""
    if reply is None:
        raise CommandExecutionError("no answer from the master to the pillar request: no fresh pillar to show")
    return _overridden(_served(reply, opts), override)


def _overridden(pillar: dict[str, Any], override: dict[str, Any] | None) -> dict[str, Any]:
    if not override:
        return pillar
    from briny.common.pillar import with_override  # Jinja and the compiler: only now

    return with_override(pillar, override)


async def pillar_section(
    read: Callable[[], dict[str, Any]], pool: concurrent.futures.Executor, key: str
) -> tuple[bool, Any]:
    """(True, ``pillar[key]``) of this minion's pillar, read by the blocking ``read`` in ``pool``
    (loop); (False, None) when the pillar has no ``key`` or cannot be had (logged: the daemon's
    schedule and beacons then run the config's alone)."""
    import asyncio  # the daemon's loop: a job or briny-call --local does not import it for its pillar

    loop = asyncio.get_running_loop()
    try:
        pillar = await loop.run_in_executor(pool, read)
    except Exception:  # no pillar: the config's entries run alone
        log.warning("no pillar for the minion's %r; only the config's run", key, exc_info=True)
        return False, None
    if isinstance(pillar, dict) and key in pillar:
        return True, pillar.get(key)
    return False, None
