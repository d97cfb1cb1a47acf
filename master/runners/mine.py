"""``briny-run mine.get TGT FUN [tgt_type=glob]``: the mine as the master answers it (Salt's runner).

Runs in ``briny-run`` on the master host, reading the master's cached mines,
grains and pillars (``cachedir``; no running master needed). The answer is
the one a minion's ``mine.get`` gets (:meth:`briny.master.mine.MineStore.get`:
``{minion: data}`` for one function, ``{function: {minion: data}}`` for a
comma-separated string or a list), asked as the master's id without its
``_master`` suffix, as Salt asks it (``mine_get`` rules and ``allow_tgt``
entries apply to that name).
"""

from __future__ import annotations

from typing import Any

from briny.master.runners import RunnerContext
from briny.master.runners.cache import MinionData

__all__ = ["get"]


def get(ctx: RunnerContext, tgt: Any, fun: Any, tgt_type: Any = "glob", **kwargs: Any) -> dict[str, Any]:
    """The mine data of ``fun`` on the minions ``tgt`` names."""
    data = MinionData(ctx.opts)
    try:
        requester = str(ctx.opts.get("id") or "master").removesuffix("_master")
        return data.mines().get(requester, tgt, fun, str(tgt_type or "glob"))
    finally:
        data.close()
