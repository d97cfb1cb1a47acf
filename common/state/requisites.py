"""Requisite kinds, target matching and run order.

Owns the static side of the requisite engine: the table of requisite kinds
(:class:`Req`), how a requisite reference (``- test: foo``, ``- foo``,
``- file: /etc/apache2/*``, ``- sls: web``) finds its target chunks
(:class:`TargetIndex`), and each chunk's resolved requisites by kind
(:class:`DependencyGraph`), and Salt's rules for judging a state on its
requisites' results (:func:`target_stats`, :func:`status_from`,
:func:`missing_comment`). The ``*_in`` forms and ``use``/``use_in`` are
already resolved by the compiler (:func:`briny.common.state.highdata.requisite_in`,
as Salt does on high data), so the chunks arriving here carry every
requisite on the state it gates.

Everything is built in one linear pass with dict indexes; nothing scans all
chunks per requisite (glob targets scan the names of one state module).
Plain code, no sockets; runs in the minion and in ``briny-call --local``.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Callable

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

log = logging.getLogger(__name__)

LowChunk = dict[str, Any]


def gen_tag(low: LowChunk) -> str:
    """The result key ``module_|-id_|-name_|-function`` of a chunk."""
    return f"{low['state']}_|-{low['__id__']}_|-{low['name']}_|-{low['fun']}"


class Req(Enum):
    """Requisite kinds, listed in Salt's precedence order (the ``weight``).

    Each value is ``(key, weight, family)``; ``family`` is the base kind that
    decides how a target's result is read.
    """

    ONFAIL = ("onfail", 0, "onfail")
    ONFAIL_ANY = ("onfail_any", 1, "onfail")
    ONFAIL_ALL = ("onfail_all", 2, "onfail")
    REQUIRE = ("require", 3, "require")
    REQUIRE_ANY = ("require_any", 4, "require")
    ONCHANGES = ("onchanges", 5, "onchanges")
    ONCHANGES_ANY = ("onchanges_any", 6, "onchanges")
    WATCH = ("watch", 7, "watch")
    WATCH_ANY = ("watch_any", 8, "watch")
    PREREQ = ("prereq", 9, "prereq")
    PREREQUIRED = ("prerequired", 10, "require")  # internal: a prereq target requires its pre-requirer
    LISTEN = ("listen", 11, "listen")
    USE = ("use", 12, "use")

    # members are singletons: identity hashing is exact and much cheaper than Enum's
    __hash__ = object.__hash__

    def __init__(self, key: str, weight: int, family: str) -> None:
        self.key = key
        self.weight = weight
        self.family = family

    @property
    def is_any(self) -> bool:
        """OR logic: the ``_any`` forms, and plain ``onfail``."""
        return self.key.endswith("_any") or self is Req.ONFAIL

    @property
    def is_all_onfail(self) -> bool:
        return self is Req.ONFAIL_ALL

    @property
    def in_key(self) -> str | None:
        """The ``_in`` form of this kind, where Salt has one."""
        return IN_FORMS.get(self)

    @classmethod
    def from_key(cls, key: str) -> "Req | None":
        return _BY_KEY.get(key)


_BY_KEY = {r.key: r for r in Req}
IN_FORMS: dict[Req, str] = {
    Req.REQUIRE: "require_in",
    Req.WATCH: "watch_in",
    Req.ONCHANGES: "onchanges_in",
    Req.ONFAIL: "onfail_in",
    Req.PREREQ: "prereq_in",
    Req.LISTEN: "listen_in",
    Req.USE: "use_in",
}
# `_in` forms that become requisites on their targets (listen_in is read by the
# listen pass at the end of the run, use_in copies arguments).
IN_TO_REQ: dict[str, Req] = {v: k for k, v in IN_FORMS.items() if k not in (Req.LISTEN, Req.USE)}

# The kinds that order chunks and gate them, in the order Salt walks them.
GATING: tuple[Req, ...] = (
    Req.REQUIRE,
    Req.REQUIRE_ANY,
    Req.WATCH,
    Req.WATCH_ANY,
    Req.PREREQ,
    Req.ONFAIL,
    Req.ONFAIL_ANY,
    Req.ONFAIL_ALL,
    Req.ONCHANGES,
    Req.ONCHANGES_ANY,
)

_WALK_ORDER: tuple[Req, ...] = GATING + (Req.PREREQUIRED,)
# Without ``mod_watch``, Salt reads ``watch`` as ``require``
WATCH_AS_REQUIRE = {Req.WATCH: Req.REQUIRE, Req.WATCH_ANY: Req.REQUIRE_ANY}

# Keys never copied by `use`/`use_in` and never passed to a state function.
REQUISITE_KEYS = frozenset([r.key for r in Req] + list(IN_FORMS.values()) + ["onfail_stop"])
RUNTIME_KEYS = frozenset(
    [
        "fun",
        "state",
        "check_cmd",
        "cmd_opts_exclude",
        "failhard",
        "onlyif",
        "unless",
        "creates",
        "retry",
        "order",
        "parallel",
        "reload_modules",
        "reload_grains",
        "reload_pillar",
        "runas",
        "runas_password",
        "fire_event",
        "saltenv",
        "umask",
        "__env__",
        "__sls__",
        "__id__",
        "__sls_included_from__",
        "__orchestration_jid__",
        "__pub_user",
        "__pub_arg",
        "__pub_jid",
        "__pub_fun",
        "__pub_tgt",
        "__pub_ret",
        "__pub_pid",
        "__pub_tgt_type",
        "__prereq__",
        "__prerequiring__",
        "__umask__",
    ]
)
INTERNAL_KEYS = REQUISITE_KEYS | RUNTIME_KEYS
_USE_SKIP = REQUISITE_KEYS | frozenset(
    ["name", "names", "state", "fun", "order", "__id__", "__sls__", "__env__", "__sls_included_from__", "name_order"]
)

_GLOB_CHARS = frozenset("*?[]")


def is_glob(value: str) -> bool:
    return any(c in _GLOB_CHARS for c in value)


@dataclass(frozen=True)
class Ref:
    """One requisite reference: ``key`` is a state module, ``id`` or ``sls``."""

    key: str
    value: Any

    @classmethod
    def parse(cls, item: Any) -> "Ref | None":
        if isinstance(item, str):
            return cls("id", item)
        if isinstance(item, dict) and len(item) == 1:
            key, val = next(iter(item.items()))
            key = str(key).split(".", 1)[0]  # `file.managed: x` means `file: x`
            return cls(key, val)
        return None

    def display(self) -> str:
        return f"{self.key}: {self.value}"


class TargetIndex:
    """Finds the chunks a requisite reference names, through dict lookups."""

    def __init__(self, chunks: list[LowChunk]) -> None:
        self.by_key: dict[tuple[str, str], list[int]] = {}
        self.by_sls: dict[str, list[int]] = {}
        self.by_state: dict[str, dict[str, list[int]]] = {}
        for i, low in enumerate(chunks):
            state, id_, name = low["state"], str(low["__id__"]), str(low["name"])
            for key in {(state, name), (state, id_), ("id", id_), ("id", name)}:
                self.by_key.setdefault(key, []).append(i)
            per_state = self.by_state.setdefault(state, {})
            for val in {id_, name}:
                per_state.setdefault(val, []).append(i)
            per_state_any = self.by_state.setdefault("id", {})
            for val in {id_, name}:
                per_state_any.setdefault(val, []).append(i)
            sls_list = [low.get("__sls__")] + list(low.get("__sls_included_from__") or [])
            for sls in dict.fromkeys(s for s in sls_list if s):
                self.by_sls.setdefault(sls, []).append(i)

    def find(self, ref: Ref) -> list[int] | None:
        """Indexes of matching chunks in chunk order, or None when nothing matches."""
        val = ref.value
        if val is None:
            return []
        if not isinstance(val, str):
            val = str(val)
        if ref.key == "sls":
            if is_glob(val):
                hits = [i for sls, idx in self.by_sls.items() if fnmatch.fnmatchcase(sls, val) for i in idx]
                return sorted(set(hits)) or None
            return list(self.by_sls.get(val, ())) or None
        if is_glob(val):
            table = self.by_state.get(ref.key, {})
            hits = [i for key, idx in table.items() if fnmatch.fnmatchcase(key, val) for i in idx]
            return sorted(set(hits)) or None
        return list(self.by_key.get((ref.key, val), ())) or None


# --------------------------------------------------------------------------
# The dependency graph
# --------------------------------------------------------------------------


def compile_key(low: LowChunk) -> tuple[float, str]:
    """Salt's compile order: ``order`` (numbers; anything else last), then state+name+fun."""
    order = low.get("order")
    num = order if isinstance(order, (int, float)) and not isinstance(order, bool) else float("inf")
    return num, f"{low['state']}{low['name']}{low['fun']}"


@dataclass
class Missing:
    """A requisite reference that matched no chunk."""

    kind: Req
    ref: Ref


@dataclass
class ChunkDeps:
    """The resolved requisites of one chunk: kind → target chunk indexes."""

    by_kind: dict[Req, list[int]] = field(default_factory=dict)
    missing: list[Missing] = field(default_factory=list)


class DependencyGraph:
    """The resolved requisites of one run, built in one pass.

    ``deps[i]`` holds chunk ``i``'s targets by kind (what the engine pulls
    and judges), in Salt's walking order; a prereq target's requirers come
    from its ``prerequired`` key. Run order and loops are the engine's: Salt
    3007 walks chunks in compile order and pulls requisites as listed, and
    finds a loop when it meets a state it already started (see :mod:`engine`).
    """

    def __init__(self, chunks: list[LowChunk]) -> None:
        self.chunks = chunks
        self.index = TargetIndex(chunks)
        self.deps: list[ChunkDeps] = [ChunkDeps() for _ in chunks]
        for i, low in enumerate(chunks):
            self._add_requisites(i, low)
            self._prerequired_from_key(i, low)
            deps = self.deps[i]
            if Req.PREREQUIRED in deps.by_kind:  # keep kinds in Salt's walking order
                deps.by_kind = {k: deps.by_kind[k] for k in _WALK_ORDER if k in deps.by_kind}

    def _add_requisites(self, i: int, low: LowChunk) -> None:
        deps = self.deps[i]
        for kind in GATING:
            refs = low.get(kind.key)
            if not refs or not isinstance(refs, list):
                continue
            for item in refs:
                ref = Ref.parse(item)
                if ref is None or ref.value is None:
                    continue
                targets = self.index.find(ref)
                if targets is None:
                    deps.missing.append(Missing(kind, ref))
                    continue
                # repeats kept: Salt pulls them and hands them to mod_watch as listed
                deps.by_kind.setdefault(kind, []).extend(targets)

    def _prerequired_from_key(self, i: int, low: LowChunk) -> None:
        """A prereq target's requirers are the ones its ``prerequired`` key names: the compiler's
        mirror of each ``prereq``/``prereq_in`` (none for a glob or ``sls`` prereq, as in Salt)."""
        refs = low.get("prerequired")
        if not refs or not isinstance(refs, list):
            return
        found: list[int] = []
        for item in refs:
            ref = Ref.parse(item)
            if ref is None or ref.value is None:
                continue
            targets = self.index.find(ref)
            if targets is None:
                self.deps[i].missing.append(Missing(Req.PREREQUIRED, ref))
            else:
                found.extend(targets)
        if found:
            self.deps[i].by_kind[Req.PREREQUIRED] = found


# --------------------------------------------------------------------------
# Salt's rules for judging a state on its requisites' results (Salt's check_requisite)
# --------------------------------------------------------------------------


def target_stats(kind: Req, r: dict[str, Any]) -> set[str]:
    """What one target's result says, for a requisite of ``kind``."""
    out: set[str] = set()
    if r.get("skip_req"):
        out.add("skip_req")
    result = r.get("result")
    if kind.family == "onchanges":  # a failed target counts as "did not change"
        out.add("onchangesmet" if result is not False and r.get("changes") else "onchanges")
        return out
    if kind.family == "onfail":
        if result is True:
            out.add("onfail")
            return out
    elif result is False:
        out.add("fail")
        return out
    if kind.family == "watch" and r.get("changes"):
        out.add("change")
        return out
    if kind is Req.PREREQ and result is not None:
        out.add("pre")
        return out
    if kind is Req.PREREQ:
        out.add("premet")
    if r.get("__state_ran__", True):
        out.add("met")
    return out


_STATUS_RULES: tuple[tuple[str, Callable[[set[str]], bool]], ...] = (
    ("unmet", lambda s: "unmet" in s),
    ("fail", lambda s: "fail" in s),
    ("skip_req", lambda s: "skip_req" in s and bool(s & {"onchangesmet", "premet"})),
    ("met", lambda s: "pre" in s and "premet" in s),
    ("pre", lambda s: "pre" in s),
    ("onfail", lambda s: "onfail" in s and "onchangesmet" not in s),
    ("onchanges", lambda s: "onchanges" in s and "onchangesmet" not in s),
    ("change", lambda s: "change" in s),
    ("onfail", lambda s: "onfail" in s),
)


def status_from(stats: set[str]) -> str:
    for status, rule in _STATUS_RULES:
        if rule(stats):
            return status
    return "met"


def missing_comment(missing: list[Missing], has_mod_watch: bool) -> str:
    groups: dict[Req, list[Missing]] = {}
    for m in missing:
        kind = m.kind if has_mod_watch else WATCH_AS_REQUIRE.get(m.kind, m.kind)
        groups.setdefault(kind, []).append(m)
    lines = ["The following requisites were not found:\n"]
    for kind in _WALK_ORDER:
        if kind not in groups:
            continue
        lines.append(f"{' ' * 19}{kind.key}:\n")
        for m in groups[kind]:
            lines.append(f"{' ' * 23}{m.ref.key}: {m.ref.value}\n")
    return "".join(lines)


def describe(low: LowChunk) -> str:
    """``sls.id`` — how Salt names a state in requisite comments."""
    return f"{low.get('__sls__')}.{low['__id__']}"
