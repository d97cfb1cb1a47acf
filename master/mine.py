"""The Salt mine on the master: what each minion's ``mine_functions`` returned, and who may read it.

Each minion writes only its own mine (``mine.update`` / ``mine.send`` /
``mine.delete`` / ``mine.flush`` on it send a ``mine`` request: the
sender is the session's id, a payload naming another minion is refused);
any minion reads the mines of the minions a target names (``mine.get``),
as Salt 3007's master answers ``_mine_get``:

- ``fun`` is one function (the reply is ``{minion: data}``), a
  comma-separated string of several or a list (``{fun: {minion: data}}``);
- the target is matched against the accepted minions (not greedy: a grain
  or pillar target needs the minion's grains or pillar here), with Salt's
  rule that ``pillar`` matches exactly; ``I@`` in a compound target matches
  as ``pillar`` does elsewhere in briny (a glob). Pillar targets read the
  pillars the master has compiled (:meth:`MinionPillars.cached`), never
  compile one;
- an entry sent with ``allow_tgt`` (``mine_functions`` or ``mine.send``)
  is given only to the minions that target names;
- the master config's ``mine_get`` (``{minion id regex: [function regex,
  ...]}``) limits which functions each minion may read, as in Salt.

The data lives in memory and in ``cachedir/mine/<id>.msgpack`` (written
atomically at each change, read at start), so it survives a master
restart. Master-side compiles read it through :meth:`MineStore.reader`
(``__job__.mine``): ``mine.get`` in a template rendered on the master
returns exactly what that minion's own ``mine.get`` would. Every change
bumps :attr:`MineStore.generation`, which the compile and pillar caches
include in what their entries depend on.

Threads: the ``mine`` request handler runs in the master's worker threads
(registered as blocking); the store is behind one lock, and a minion's file
is written while it is held (small files, one writer at a time).
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from briny.common import config
from briny.common.exceptions import SaltInvocationError, WireError
from briny.common.ids import other_minion
from briny.master.minionfiles import MinionFiles
from briny.master.targeting import check_minions

log = logging.getLogger(__name__)

ACL_ID = "__saltmine_acl__"
ACL_DATA = "__data__"
OPS = ("update", "delete", "flush", "get")

GrainsLookup = Callable[[str], Mapping[str, Any] | None]
PillarLookup = Callable[[str], Mapping[str, Any] | None]


def _functions(fun: Any) -> tuple[list[str], bool] | None:
    """(the functions asked for, whether the answer is keyed by function) or None when unusable."""
    if isinstance(fun, str):
        names = list(dict.fromkeys(fun.split(",")))
        return names, len(names) > 1
    if isinstance(fun, list) and all(isinstance(f, str) for f in fun):
        return list(fun), True
    return None


class MineStore:
    """Every minion's mine (thread-safe; see the module docstring)."""

    def __init__(
        self,
        opts: Mapping[str, Any],
        grains_of: GrainsLookup,
        accepted: Callable[[], Iterable[str]] = lambda: (),
        pillar_of: PillarLookup | None = None,
    ) -> None:
        self.opts = opts
        self.folder = os.path.join(str(config.setting(opts, "cachedir", "master")), "mine")
        self._files = MinionFiles(self.folder, "mine", fsync=True)
        self.grains_of = grains_of
        self.accepted = accepted
        self.pillar_of = pillar_of
        self.generation = 0
        self._lock = threading.Lock()
        self._data: dict[str, dict[str, Any]] = {}
        self._loaded = False

    # -- storage -----------------------------------------------------------------------------------
    def load_all(self) -> int:
        """Read the files of every minion (at start; again it reads nothing); how many minions."""
        with self._lock:
            self._load()
            return len(self._data)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        self._data.update(self._files.read_all())

    def _save(self, minion_id: str) -> None:
        """Write (or remove, when empty) one minion's file atomically; the lock is held."""
        data = self._data.get(minion_id)
        if not data:
            self._files.remove(minion_id)
            return
        try:
            self._files.write(minion_id, data)
        except (OSError, SaltInvocationError) as exc:
            log.error("cannot write the mine of %s in %s: %s", minion_id, self.folder, exc)

    # -- writes (a minion's own) -------------------------------------------------------------------
    def update(self, minion_id: str, data: Mapping[str, Any], clear: bool = False) -> None:
        """Store ``data`` (``{function: value}``) as ``minion_id``'s mine: replacing it all with
        ``clear``, else over what it had."""
        with self._lock:
            self._load()
            mine = {} if clear else dict(self._data.get(minion_id) or {})
            mine.update(data)
            self._data[minion_id] = mine
            self.generation += 1
            self._save(minion_id)

    def delete(self, minion_id: str, fun: str) -> None:
        """Forget one function of ``minion_id``'s mine."""
        with self._lock:
            self._load()
            mine = self._data.get(minion_id)
            if mine and fun in mine:
                self._data[minion_id] = {k: v for k, v in mine.items() if k != fun}
                self.generation += 1
                self._save(minion_id)

    def flush(self, minion_id: str) -> None:
        """Forget ``minion_id``'s whole mine."""
        with self._lock:
            self._load()
            if self._data.pop(minion_id, None) is not None:
                self.generation += 1
                self._save(minion_id)

    def mine_of(self, minion_id: str) -> dict[str, Any]:
        """A copy of what ``minion_id`` stored (for tests and tools)."""
        with self._lock:
            self._load()
            return dict(self._data.get(minion_id) or {})

    def ids(self) -> list[str]:
        """The minions that have a mine (sorted)."""
        with self._lock:
            self._load()
            return sorted(m for m, mine in self._data.items() if mine)

    # -- reads -------------------------------------------------------------------------------------
    def _allowed_functions(self, requester: str, functions: list[str]) -> list[str]:
        rules = self.opts.get("mine_get")
        if rules is None:
            return functions
        if not isinstance(rules, dict):
            return []
        perms: set[str] = set()
        for pattern, funs in rules.items():
            if re.match(str(pattern), requester) and isinstance(funs, list):
                perms.update(str(f) for f in funs)
        return [f for f in functions if any(re.match(p, f) for p in perms)]

    def _match(self, tgt: Any, tgt_type: str) -> list[str]:
        return check_minions(tgt, tgt_type, self.accepted(), self.grains_of, self.opts, pillar_of=self.pillar_of)

    def get(self, requester: str, tgt: Any, fun: Any, tgt_type: str = "glob") -> dict[str, Any]:
        """What ``requester``'s ``mine.get(tgt, fun, tgt_type)`` returns (see the module docstring);
        SaltInvocationError for a target that cannot be evaluated."""
        asked = _functions(fun)
        if asked is None:
            return {}
        functions, keyed = asked
        functions = self._allowed_functions(requester, functions)
        if not functions:
            return {}
        kind = str(tgt_type or "glob").lower()
        if kind == "pillar":
            kind = "pillar_exact"
        minions = self._match(tgt, kind)
        with self._lock:
            self._load()
            mines = {m: self._data.get(m) for m in minions}
        out: dict[str, Any] = {}
        acl: dict[tuple[str, str], list[str]] = {}
        for minion, mine in mines.items():
            if not isinstance(mine, dict):
                continue
            for function in functions:
                if function not in mine:
                    continue
                entry = mine[function]
                value = entry
                if isinstance(entry, dict) and ACL_ID in entry:
                    value = entry.get(ACL_DATA)
                    if "allow_tgt" in entry:
                        key = (minion, function)
                        if key not in acl:
                            try:
                                acl[key] = self._match(entry["allow_tgt"], str(entry.get("allow_tgt_type") or "glob"))
                            except SaltInvocationError as exc:
                                log.warning("the allow_tgt of %s's mine %s does not parse: %s", minion, function, exc)
                                acl[key] = []
                        if requester not in acl[key]:
                            log.debug("mine request from %s for %s on %s denied", requester, function, minion)
                            continue
                if keyed:
                    out.setdefault(function, {})[minion] = value
                else:
                    out[minion] = value
        return out

    # -- the request -------------------------------------------------------------------------------
    def answer(self, minion_id: str, payload: Mapping[str, Any]) -> dict[str, Any]:
        """The reply to ``minion_id``'s ``mine`` request (worker thread)."""
        # a minion speaks for itself only (``tgt`` of a get names whose mines it reads)
        other = other_minion({k: payload[k] for k in ("id", "minion_id") if k in payload}, minion_id)
        if other is not None:
            log.warning("%s sent a mine request as %s; refused", minion_id, other)
            return {"error": f"a minion can use the mine only as itself; {minion_id} cannot act as {other}"}
        op = payload.get("op")
        try:
            if op == "update":
                data = payload.get("data")
                if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
                    raise WireError("'data' must be a map of function names to their data")
                self.update(minion_id, data, bool(payload.get("clear")))
                return {"ok": True}
            if op == "delete":
                fun = payload.get("fun")
                if not isinstance(fun, str) or not fun:
                    raise WireError("'fun' must be a function name")
                self.delete(minion_id, fun)
                return {"ok": True}
            if op == "flush":
                self.flush(minion_id)
                return {"ok": True}
            if op == "get":
                if "tgt" not in payload or "fun" not in payload:
                    raise WireError("a mine get needs 'tgt' and 'fun'")
                return {
                    "mine": self.get(minion_id, payload["tgt"], payload["fun"], str(payload.get("tgt_type") or "glob"))
                }
        except (WireError, SaltInvocationError) as exc:
            log.warning("mine request from %s refused: %s", minion_id, exc)
            return {"error": str(exc)}
        return {"error": f"'op' must be one of {', '.join(OPS)}, not {str(op)[:40]!r}"}

    def handle_request(self, session: Any, payload: dict[str, Any]) -> dict[str, Any]:
        """The ``mine`` request (worker thread): :meth:`answer` for the session's minion."""
        return self.answer(session.id, payload)

    def reader(self, minion_id: str) -> Callable[[dict[str, Any], float | None], dict[str, Any] | None]:
        """``__job__.mine`` of a compile for ``minion_id`` on the master: its ``mine`` requests,
        answered here (reads only: a template rendered on the master changes no mine)."""

        def ask(payload: dict[str, Any], timeout: float | None = None) -> dict[str, Any] | None:
            if payload.get("op") != "get":
                return {"error": "only mine.get runs on the master"}
            return self.answer(minion_id, payload)

        return ask

    def register(self, server: Any) -> None:
        """Serve ``mine`` requests of ``server`` (a MasterServer), in its worker threads."""
        server.register_handler("mine", self.handle_request, blocking=True)
