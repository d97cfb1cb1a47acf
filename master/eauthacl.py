"""What a user may run: Salt's ``external_auth`` ACL entries, read and checked.

Runs in ``briny-api`` (logins, /events) and in the master (``publish``'s ``acl``: the publisher checks
it after targeting). :func:`perms_for` gives the list of entries that apply to a user of a
back end (``external_auth: {eauth: {user: [...], 'group%': [...], '*': [...]}}``): the user's
own entry (or ``*``'s when the user has none), plus every ``group%`` entry of a group the user
is in, as Salt merges them. An entry is:

- a function pattern (``test.ping``, ``test.*``, ``.*``): that function on every minion;
- ``{target: [function patterns]}``: those functions on the minions whose id the glob ``target``
  matches (only id globs: a compound or grain target, ``G@role:web``, allows nothing and is
  named in a warning, once);
- ``@runner`` / ``@wheel`` / ``@jobs``: every runner / wheel function / the ``jobs`` runner
  (``/jobs``), or ``{'@runner': [patterns]}`` for some of them.

A pattern matches a function name as a full regular expression or as a shell glob (Salt's
``match_check``). Argument restrictions (``{fun: {args: [...], kwargs: {...}}}``) are not read
yet: such a function entry allows nothing and is named in a warning. :func:`allows_local`
checks a job against the minions the master targeted: every one must be allowed.
"""

from __future__ import annotations

import fnmatch
import logging
import re
from collections.abc import Iterable
from typing import Any

log = logging.getLogger(__name__)

SPECIALS = ("@runner", "@wheel", "@jobs")


def perms_for(opts: dict[str, Any], eauth: str, username: str, groups: Iterable[str] = ()) -> list[Any] | None:
    """The ACL entries of ``username`` (None: the user has no entry at all, so may not log in)."""
    config = (opts.get("external_auth") or {}).get(eauth)
    if not isinstance(config, dict):
        return None
    found = False
    perms: list[Any] = []
    if username in config:
        perms.extend(_entries(config[username]))
        found = True
    elif "*" in config:
        perms.extend(_entries(config["*"]))
        found = True
    wanted = set(groups)
    for key, value in config.items():
        if isinstance(key, str) and key.endswith("%") and key[:-1] in wanted:
            perms.extend(_entries(value))
            found = True
    return perms if found else None


def _entries(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value] if value is not None else []


def fun_matches(pattern: Any, fun: str) -> bool:
    if isinstance(pattern, dict):  # {fun: {args, kwargs}}: argument restrictions, not read yet
        log.warning("external_auth: argument restrictions (%s) are not supported yet; the entry allows nothing",
                    ", ".join(map(str, pattern)))  # fmt: skip
        return False
    if not isinstance(pattern, str):
        return False
    if fnmatch.fnmatchcase(fun, pattern):
        return True
    try:
        return re.fullmatch(pattern, fun) is not None
    except re.error:
        return False


def _funs(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allows_local(perms: list[Any], fun: str, minions: Iterable[str]) -> bool:
    """True when ``perms`` allow ``fun`` on every one of ``minions`` (the target, resolved)."""
    for minion in minions:
        if not _allows_on(perms, fun, minion):
            return False
    return True


_WARNED: set[str] = set()  # targets not an id glob already named in a warning (config: a few)


def _id_glob(tgt: str) -> bool:
    """True for a target that is a minion-id glob; False (warned once) for a compound one."""
    if "@" not in tgt and not any(c.isspace() for c in tgt):
        return True
    if tgt not in _WARNED and len(_WARNED) < 100:
        _WARNED.add(tgt)
        log.warning("external_auth: the target %r is not a minion-id glob; briny matches ACL targets on ids "
                    "only, so the entry allows nothing", tgt)  # fmt: skip
    return False


def _allows_on(perms: list[Any], fun: str, minion: str) -> bool:
    for entry in perms:
        if isinstance(entry, str):
            if not entry.startswith("@") and fun_matches(entry, fun):
                return True
        elif isinstance(entry, dict):
            for tgt, funs in entry.items():
                if not isinstance(tgt, str) or tgt.startswith("@") or not _id_glob(tgt):
                    continue
                if fnmatch.fnmatchcase(minion, tgt) and any(fun_matches(p, fun) for p in _funs(funs)):
                    return True
    return False


def may_target_something(perms: list[Any]) -> bool:
    """True when some entry lets the user run a function on a minion (``local`` at all)."""
    return any((isinstance(e, str) and not e.startswith("@")) or
               (isinstance(e, dict) and any(isinstance(k, str) and not k.startswith("@") for k in e))
               for e in perms)  # fmt: skip


def allows_special(perms: list[Any], kind: str, fun: str) -> bool:
    """True when ``perms`` allow the ``kind`` (``@runner``, ``@wheel``) function ``fun``; ``@jobs``
    also allows the ``jobs.*`` runners."""
    for entry in perms:
        if entry == kind or (kind == "@runner" and entry == "@jobs" and fun.startswith("jobs.")):
            return True
        if isinstance(entry, dict):
            for key, funs in entry.items():
                if key == kind and any(fun_matches(p, fun) for p in _funs(funs)):
                    return True
                if (
                    key == "@jobs"
                    and kind == "@runner"
                    and fun.startswith("jobs.")
                    and any(fun_matches(p, fun.partition(".")[2]) or fun_matches(p, fun) for p in _funs(funs))
                ):
                    return True  # fmt: skip
    return False


def sees_everything(perms: list[Any]) -> bool:
    """True for a user allowed every function everywhere and every runner and wheel function:
    the whole event bus is theirs (``GET /events``)."""
    return (
        any(isinstance(e, str) and e in (".*", "*") for e in perms)
        and allows_special(perms, "@runner", "x.y")
        and allows_special(perms, "@wheel", "x.y")
    )
