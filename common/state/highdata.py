"""Passes over high data before it becomes low chunks: extend, verify, ``_in``, exclude.

Runs wherever SLS is compiled; pure functions on dicts. Each pass returns
Salt's error strings rather than raising:

- :func:`reconcile_extend` applies ``extend`` blocks (by ID, or by a
  ``name`` argument), merging requisite lists and replacing other arguments;
- :func:`verify_high` checks the structure (functions, requisite lists,
  names) and reports what Salt reports;
- :func:`requisite_in` turns ``require_in``/``watch_in``/``onchanges_in``/
  ``onfail_in``/``prereq_in`` into requisites on their targets, ``prereq``
  into ``prerequired`` on the target, and ``use``/``use_in`` into copied
  arguments (never requisites), by way of an extend;
- :func:`apply_exclude` drops excluded IDs and SLS.

Lookups by name go through :class:`NameIndex`, built once, so these passes
stay linear in the number of states.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Hashable, Iterator
from typing import Any

log = logging.getLogger(__name__)

HighData = dict[Any, Any]  # IDs and keys as YAML gave them: anything hashable until validated

REQUISITE_KEYWORDS = frozenset(
    {
        "onchanges",
        "onchanges_any",
        "onfail",
        "onfail_any",
        "onfail_all",
        "onfail_stop",
        "prereq",
        "prerequired",
        "watch",
        "watch_any",
        "require",
        "require_any",
        "listen",
    }
)
REQUISITE_IN_KEYWORDS = frozenset(
    {
        "onchanges_in",
        "onfail_in",
        "prereq_in",
        "watch_in",
        "require_in",
        "listen_in",
    }
)
_REQ_IN = {"require_in", "watch_in", "onfail_in", "onchanges_in", "use", "use_in", "prereq", "prereq_in"}
_REQ_IN_ALL = _REQ_IN | {"require", "watch", "onfail", "onfail_stop", "onchanges"}


def _ids(high: HighData) -> Iterator[tuple[Any, dict[Any, Any]]]:
    for id_, body in high.items():
        if isinstance(id_, str) and id_.startswith("__"):
            continue
        if isinstance(body, dict):
            yield id_, body


def _states(body: dict[str, Any]) -> Iterator[tuple[str, list[Any]]]:
    for state, run in body.items():
        if isinstance(state, str) and not state.startswith("__") and isinstance(run, list):
            yield state, run


class NameIndex:
    """Where a value appears as a one-key argument: (value, state) -> [IDs].

    Salt's name lookup matches any single-key argument whose value equals the
    wanted name (usually ``name``); this index answers it in O(1).
    """

    def __init__(self, high: HighData) -> None:
        self.by_value: dict[tuple[Any, str], list[str]] = {}
        self.by_sls: dict[Hashable, list[tuple[str, str]]] = {}
        for id_, body in _ids(high):
            first_state = next((s for s in body if not str(s).startswith("__")), None)
            sls = body.get("__sls__")
            if isinstance(sls, Hashable) and first_state is not None:
                self.by_sls.setdefault(sls, []).append((id_, first_state))
            for state, run in _states(body):
                for arg in run:
                    if isinstance(arg, dict) and len(arg) == 1:
                        val = next(iter(arg.values()))
                        if isinstance(val, Hashable):
                            ids = self.by_value.setdefault((val, state), [])
                            if not ids or ids[-1] != id_:
                                ids.append(id_)

    def find(self, name: Any, state: str, high: HighData, strict: bool = False) -> list[tuple[str, str]]:
        """(ID, state) pairs a reference ``state: name`` points at."""
        body = high.get(name) if isinstance(name, Hashable) else None
        if isinstance(body, dict) and (not strict or state in body):
            return [(name, state)]
        if state == "sls":
            return list(self.by_sls.get(name, [])) if isinstance(name, Hashable) else []
        if not isinstance(name, Hashable):
            return []
        return [(nid, state) for nid in self.by_value.get((name, state), [])]


class LazyNameIndex:
    """A :class:`NameIndex` built on first use: most trees never need one."""

    def __init__(self, high: HighData) -> None:
        self._high = high
        self._index: NameIndex | None = None

    @property
    def index(self) -> NameIndex:
        if self._index is None:
            self._index = NameIndex(self._high)
        return self._index

    @property
    def by_value(self) -> dict[tuple[Any, str], list[str]]:
        return self.index.by_value

    def find(self, name: Any, state: str, high: HighData, strict: bool = False) -> list[tuple[str, str]]:
        body = high.get(name) if isinstance(name, Hashable) else None
        if isinstance(body, dict) and (not strict or state in body):
            return [(name, state)]  # the common case needs no index
        return self.index.find(name, state, high, strict)


def state_args(id_: str, state: str, high: HighData) -> set[str]:
    body = high.get(id_)
    if not isinstance(body, dict) or not isinstance(body.get(state), list):
        return set()
    return {next(iter(a)) for a in body[state] if isinstance(a, dict) and len(a) == 1}


def reconcile_extend(high: HighData, strict: bool = False) -> tuple[HighData, list[str]]:
    errors: list[str] = []
    if "__extend__" not in high:
        return high, errors
    ext = high.pop("__extend__")
    index: NameIndex | None = None
    excluded = [
        e if isinstance(e, str) else e.get("sls")
        for e in high.get("__exclude__", [])
        if isinstance(e, str) or (isinstance(e, dict) and e.get("sls"))
    ]
    for chunk in ext:
        for name, body in chunk.items():
            state_type = next((x for x in body if not str(x).startswith("__")), None)
            if state_type is None:
                continue
            if name not in high or state_type not in high[name]:
                index = index or NameIndex(high)
                ids = index.find(name, state_type, high, strict=strict)
                if len(ids) != 1:
                    env, sls = body.get("__env__", "base"), body.get("__sls__", "base")
                    errors.append(
                        f"Cannot extend ID '{name}' in '{env}:{sls}'. It is not part of the high state.\n"
                        "This is likely due to a missing include statement or an incorrectly typed ID.\n"
                        f"Ensure that a state with an ID of '{name}' is available\nin environment "
                        f"'{env}' and to SLS '{sls}'"
                    )
                    continue
                name = ids[0][0]
            if body.get("__sls__") in excluded:
                continue
            for state, run in body.items():
                if str(state).startswith("__"):
                    continue
                if state not in high[name]:
                    high[name][state] = run
                    continue
                _extend_args(high[name][state], run)
    return high, errors


def _extend_args(target: list[Any], run: list[Any]) -> None:
    for arg in run:
        updated = False
        for i, val in enumerate(target):
            if isinstance(arg, str) and isinstance(val, str):
                target[i] = arg  # replacing the function
                updated = True
                continue
            if isinstance(arg, dict) and isinstance(val, dict) and arg and val:
                key = next(iter(arg))
                if key == next(iter(val)):
                    if key in REQUISITE_KEYWORDS:
                        target[i][key].extend(arg[key])
                    else:
                        target[i] = arg
                    updated = True
                if key == "name" and next(iter(target[i])) == "names":
                    target[i] = arg
        if not updated:
            target.append(arg)


def salt_repr(value: Any) -> str:
    """``repr`` as Salt's messages show rendered data: its YAML loader makes OrderedDicts."""
    if isinstance(value, dict):
        items = ", ".join(f"({salt_repr(k)}, {salt_repr(v)})" for k, v in value.items())
        return f"OrderedDict([{items}])"
    if isinstance(value, list):
        return "[" + ", ".join(salt_repr(v) for v in value) + "]"
    return repr(value)


def verify_high(high: Any) -> list[str]:
    """Salt's structural checks, in Salt's words."""
    if not isinstance(high, dict):
        return ["High data is not a dictionary and is invalid"]
    errors: list[str] = []
    reqs: dict[Any, dict[Any, Any]] = {}
    for name, body in high.items():
        if isinstance(name, str) and name.startswith("__"):
            continue
        sls = body.get("__sls__") if isinstance(body, dict) else None
        if not isinstance(name, str):
            errors.append(
                f"ID '{name}' in SLS '{sls}' is not formed as a string, but is a "
                f"{type(name).__name__}. It may need to be quoted."
            )
        if not isinstance(body, dict):
            errors.append(f"The type {name} in {salt_repr(body)} is not formatted as a dictionary")
            continue
        for state, run in body.items():
            if isinstance(state, str) and state.startswith("__"):
                continue
            if run is None:
                errors.append(
                    f"ID '{name}' in SLS '{sls}' contains a short declaration ({state}) with "
                    "a trailing colon. When not passing any arguments to a state, the colon "
                    "must be omitted."
                )
                continue
            if not isinstance(run, list):
                errors.append(f"State '{name}' in SLS '{sls}' is not formed as a list")
                continue
            fun = 1 if "." in str(state) else 0
            for arg in run:
                if isinstance(arg, str):
                    fun += 1
                    if " " in arg.strip():
                        errors.append(
                            f'The function "{arg}" in state "{name}" in SLS "{sls}" has '
                            "whitespace, a function with whitespace is not supported, perhaps "
                            'this is an argument that is missing a ":"'
                        )
                elif isinstance(arg, dict) and arg:
                    _verify_arg(name, state, arg, sls, reqs, errors)
            if not fun:
                if state in ("require", "watch"):
                    continue
                errors.append(f"No function declared in state '{name}' in SLS '{sls}'")
            elif fun > 1:
                funs = [str(state).split(".", 1)[1]] if "." in str(state) else []
                funs.extend(a for a in run if isinstance(a, str))
                errors.append(
                    f"Too many functions declared in state '{name}' in SLS '{sls}'. "
                    "Please choose one of the following: " + ", ".join(funs)
                )
    return errors


def _verify_arg(
    name: Any, state: str, arg: dict[str, Any], sls: Any, reqs: dict[Any, dict[Any, Any]], errors: list[str]
) -> None:
    """One dict argument. A dict with several keys (``- context:`` followed by a sibling key at
    the same indent) is legal and each key becomes an argument, except where the first key
    is a requisite list: then Salt refuses it."""
    first = next(iter(arg))
    if first == "names" and not isinstance(arg[first], list):
        errors.append(f"The 'names' argument in state '{name}' in SLS '{sls}' needs to be formed as a list")
    if first in ("require", "watch", "prereq", "onchanges"):
        if not isinstance(arg[first], list):
            errors.append(f"The {first} statement in state '{name}' in SLS '{sls}' needs to be formed as a list")
        else:
            reqs[name] = {"state": state}
            for req in arg[first]:
                if isinstance(req, str):
                    req = {"id": req}
                if not isinstance(req, dict) or not req:
                    errors.append(f"Requisite declaration {req} in SLS {sls} is not formed as a single key dictionary")
                    continue
                req_key = next(iter(req))
                req_val = req[req_key]
                if "." in str(req_key):
                    errors.append(
                        f"Invalid requisite type '{req_key}' in state '{name}', in SLS '{sls}'. "
                        "Requisite types must not contain dots, did you mean "
                        f"'{str(req_key)[: str(req_key).find('.')]}'?"
                    )
                if not isinstance(req_val, Hashable):
                    errors.append(f'Illegal requisite "{req_val}", please check your syntax.\n')
                    continue
                reqs[name][req_val] = req_key
                other = reqs.get(req_val)
                if other is not None and other.get(name) == state and other.get("state") == req_key:
                    errors.append(f'A recursive requisite was found, SLS "{sls}" ID "{name}" ID "{req_val}"')
        if len(arg) != 1:
            errors.append(f"Multiple dictionaries defined in argument of state '{name}' in SLS '{sls}'")


def requisite_in(high: HighData, disabled: list[str] | None = None) -> tuple[HighData, list[str]]:
    """Turn ``_in`` requisites, ``prereq`` and ``use`` into an extend, then apply it."""
    extend: dict[Any, dict[str, Any]] = {}
    errors: list[str] = []
    disabled = disabled or []
    index = LazyNameIndex(high)

    def _add_req(name: Any, tstate: str, rkey: str, ref: dict[str, Any], body: dict[str, Any]) -> None:
        entry = extend.setdefault(name, {})
        entry.setdefault(tstate, [])
        entry["__env__"] = body.get("__env__")
        entry["__sls__"] = body.get("__sls__")
        found = False
        for item in entry[tstate]:
            if next(iter(item)) == rkey:
                item[rkey].append(dict(ref))
                found = True
        if not found:
            entry[tstate].append({rkey: [dict(ref)]})

    def _dots(rkey: str, st: str, name: Any, body: dict[str, Any]) -> str:
        if "." in st:
            errors.append(
                f"Invalid requisite in {rkey}: {st} for {name}, in SLS '{body.get('__sls__')}'. "
                f"Requisites must not contain dots, did you mean '{st[: st.find('.')]}'?"
            )
            return st.split(".")[0]
        return st

    for id_, body in _ids(high):
        for state, run in _states(body):
            for arg in run:
                if not isinstance(arg, dict) or not arg:
                    continue
                key = next(iter(arg))
                if key not in _REQ_IN:
                    continue
                if key in disabled:
                    log.warning("The %s requisite has been disabled, Ignoring.", key)
                    continue
                rkey = key.split("_")[0]
                items = arg[key]
                if isinstance(items, dict):
                    for tstate, name in items.items():
                        tstate = _dots(rkey, str(tstate), name, body)
                        _add_req(name, tstate, rkey, {state: id_}, body)
                if not isinstance(items, list):
                    continue
                hinges: list[tuple[Any, str]] = []  # Salt keeps these across the list's items
                for ind in items:
                    if not isinstance(ind, dict):
                        ind = _bare_ref(ind, high, index)
                        if ind is None:
                            continue
                    if not ind:
                        continue
                    pstate = next(iter(ind))
                    pname = ind[pstate]
                    if pstate == "sls":
                        hinges = [
                            (nid, st)
                            for nid, body2 in _ids(high)
                            if body2.get("__sls__") == pname
                            for st, _ in _states(body2)
                        ]
                    else:
                        hinges.append((pname, str(pstate)))
                    _dots(rkey, str(pstate), pname, body)
                    for name, tstate in hinges:
                        _apply_hinge(key, rkey, id_, state, name, tstate, high, body, index, extend, _add_req)
    high["__extend__"] = [{k: v} for k, v in extend.items()]
    high, ext_errors = reconcile_extend(high, strict=True)
    return high, errors + ext_errors


def _bare_ref(ind: Any, high: HighData, index: "LazyNameIndex") -> dict[str, Any] | None:
    """``- foo`` in a requisite_in list: an ID, or a name some state uses."""
    if isinstance(ind, Hashable) and isinstance(high.get(ind), dict):
        first = next((x for x in high[ind] if not str(x).startswith("__")), None)
        return {first: ind} if first is not None else None
    for (val, st), ids in index.by_value.items():
        if val == ind and ids:
            return {st: ids[-1]}
    return None


def _apply_hinge(
    key: str,
    rkey: str,
    id_: Any,
    state: str,
    name: Any,
    tstate: str,
    high: HighData,
    body: dict[str, Any],
    index: "LazyNameIndex",
    extend: dict[Any, dict[str, Any]],
    add_req: Any,
) -> None:
    if key == "prereq_in":
        extend.setdefault(id_, {}).setdefault(state, []).append({"prerequired": [{tstate: name}]})
    if key == "prereq":
        for ext_id, req_state in index.find(name, tstate, high, strict=True):
            extend.setdefault(ext_id, {}).setdefault(req_state, []).append({"prerequired": [{state: id_}]})
        return
    if key in ("use", "use_in"):
        for ext_id, req_state in index.find(name, tstate, high, strict=True):
            if not ext_id:
                continue
            if key == "use_in":
                dest, dstate, src, sstate = ext_id, req_state, id_, state
                ignore = _REQ_IN_ALL | state_args(ext_id, tstate, high)
            else:
                dest, dstate, src, sstate = id_, state, ext_id, req_state
                ignore = _REQ_IN_ALL | state_args(id_, state, high)
            extend.setdefault(dest, {}).setdefault(dstate, [])
            for arg in high[src][sstate]:
                if not isinstance(arg, dict) or len(arg) != 1:
                    continue
                akey = next(iter(arg))
                if akey in ignore or akey in ("name", "names"):
                    continue
                extend[dest][dstate].append(arg)
        return
    add_req(name, tstate, rkey, {state: id_}, body)


def apply_exclude(high: HighData) -> HighData:
    if "__exclude__" not in high:
        return high
    ex_sls: set[str] = set()
    ex_id: set[Any] = set()
    for exc in high.pop("__exclude__"):
        if isinstance(exc, str):
            ex_sls.add(exc)
        elif isinstance(exc, dict) and len(exc) == 1:
            k, v = next(iter(exc.items()))
            if k == "sls":
                ex_sls.add(v)
            elif k == "id":
                ex_id.add(v)
    if ex_sls:
        for name, body in _ids(high):
            sls = body.get("__sls__")
            if sls and any(fnmatch.fnmatch(sls, pat) for pat in ex_sls):
                ex_id.add(name)
    for id_ in ex_id:
        high.pop(id_, None)
    return high


def merge_included(high: HighData, state: HighData, errors: list[str]) -> None:
    """Merge one file's high data into another's, refusing conflicting IDs."""
    if "__extend__" in state:
        high.setdefault("__extend__", []).extend(state.pop("__extend__"))
    if "__exclude__" in state:
        high.setdefault("__exclude__", []).extend(state.pop("__exclude__"))
    for id_, body in state.items():
        if id_ in high and high[id_] != body:
            old = high[id_] if isinstance(high[id_], dict) else {}
            new = body if isinstance(body, dict) else {}
            errors.append(
                "Detected conflicting IDs, SLS IDs need to be globally unique.\n    The "
                f"conflicting ID is '{id_}' and is found in SLS '{old.get('__env__')}:"
                f"{old.get('__sls__')}' and SLS '{new.get('__env__')}:{new.get('__sls__')}'"
            )
    high.update(state)


def dedupe_extends(high: HighData) -> None:
    if "__extend__" not in high:
        return
    seen: list[tuple[Any, Any]] = []
    for ext in high["__extend__"]:
        for item in ext.items():
            if item not in seen:
                seen.append(item)
    high["__extend__"] = [{k: v} for k, v in seen]
