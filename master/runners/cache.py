"""``briny-run cache.*``: what the master keeps of each minion (Salt's ``cache`` runner).

Runs in ``briny-run`` on the master host, reading the master's cache folder
(``cachedir``) while the master writes it; needs no running master. Shapes
are Salt 3007's (``tests/golden/runners``):

- ``grains TGT [tgt_type=glob]``: ``{minion: grains}`` for the accepted
  minions ``TGT`` names, the grains each one last sent (``{}`` for one the
  master has none of); ``TGT`` is required, as in Salt;
- ``pillar [TGT] [tgt_type=glob]``: ``{minion: pillar}``, the pillar each
  one last fetched (:mod:`briny.master.pillarcache`; ``{}`` for one that
  never fetched it); without ``TGT``, every accepted minion with a cached
  pillar;
- ``mine [TGT] [tgt_type=glob]``: ``{minion: {function: data}}``, each
  one's mine (``{}`` when it has none); without ``TGT``, every accepted
  minion the master has grains or a mine of.

Targets are matched as the master matches them (:mod:`briny.master.targeting`:
grain targets read the cached grains, pillar targets the cached pillars).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from briny.common import config
from briny.master.grainscache import GrainsCache
from briny.master.keys.store import KeyStore
from briny.master.mine import MineStore
from briny.master.pillarcache import PillarFiles
from briny.master.runners import RunnerContext
from briny.master.targeting import check_minions

__all__ = ["grains", "mine", "pillar"]


class MinionData:
    """The master's cached grains, pillars and mines, read from ``cachedir`` (for runners)."""

    def __init__(self, opts: dict[str, Any]) -> None:
        self.opts = opts
        self._grains = GrainsCache(str(config.setting(opts, "cachedir", "master")))
        self._grains.load_all()
        self.pillars = PillarFiles(opts)
        self.accepted = KeyStore(opts, fire_events=False).accepted_ids()

    def grains_of(self, minion_id: str) -> Mapping[str, Any] | None:
        return self._grains.get(minion_id)

    def grains_ids(self) -> list[str]:
        return self._grains.ids()

    def mines(self) -> MineStore:
        return MineStore(self.opts, self.grains_of, lambda: self.accepted, self.pillars.load)

    def targeted(self, tgt: Any, tgt_type: Any) -> list[str]:
        """The accepted minions ``tgt`` names (SaltInvocationError for a malformed target)."""
        kind = str(tgt_type or "glob")
        return check_minions(tgt, kind, self.accepted, self.grains_of, self.opts, pillar_of=self.pillars.load)

    def close(self) -> None:
        self._grains.close()


def _data(ctx: RunnerContext) -> MinionData:
    return MinionData(ctx.opts)


def grains(ctx: RunnerContext, tgt: Any, tgt_type: Any = "glob", **kwargs: Any) -> dict[str, Any]:
    """The cached grains of the minions ``tgt`` names."""
    data = _data(ctx)
    try:
        return {m: dict(data.grains_of(m) or {}) for m in data.targeted(tgt, tgt_type)}
    finally:
        data.close()


def pillar(ctx: RunnerContext, tgt: Any = None, tgt_type: Any = "glob", **kwargs: Any) -> dict[str, Any]:
    """The pillar the minions ``tgt`` names last fetched (every minion's without ``tgt``)."""
    data = _data(ctx)
    try:
        if tgt is None or tgt == "":
            cached = {m: data.pillars.load(m) for m in data.pillars.ids() if m in data.accepted}
            return {m: p for m, p in cached.items() if p}
        return {m: data.pillars.load(m) or {} for m in data.targeted(tgt, tgt_type)}
    finally:
        data.close()


def mine(ctx: RunnerContext, tgt: Any = None, tgt_type: Any = "glob", **kwargs: Any) -> dict[str, Any]:
    """The mine of the minions ``tgt`` names (every known minion's without ``tgt``)."""
    data = _data(ctx)
    try:
        store = data.mines()
        if tgt is None or tgt == "":
            known = set(data.grains_ids()) | set(store.ids())
            minions = [m for m in data.accepted if m in known]
        else:
            minions = data.targeted(tgt, tgt_type)
        return {m: store.mine_of(m) for m in minions}
    finally:
        data.close()
