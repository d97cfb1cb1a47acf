"""Validation of untrusted identifiers: minion ids and job ids.

Runs on both sides: the master checks every minion id (auth requests, key
files, job returns) and every jid before either touches the file system or
a cache; the minion checks its own configured id at start.

A minion id is used as a file name (``pki_dir/minions/<id>``), so it must be
a single, harmless path component. Salt refuses ids holding ``/``, ``\\``
or NUL and ids that would leave the key folder; briny is stricter and also
refuses control characters, ids starting with ``.`` (``.``, ``..``, and
hidden files: ``briny-key -L`` skips those, so an accepted hidden key could
be neither seen nor deleted; Salt accepts them), ids starting with ``-``
(they read as options on a command line) and ids longer than 255
characters (a file name limit). This module is the one place ids are
judged: the master's auth, key store, grains cache, job cache and
targeting, and the minion at start, all ask it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from briny.common.exceptions import SaltInvocationError

MAX_ID_LEN = 255
_JID_RE = re.compile(r"\A[0-9]{20}\Z")
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")


def id_problem(value: object) -> str | None:
    """Why ``value`` is not a usable minion id, or None when it is one."""
    if not isinstance(value, str):
        return f"a minion id must be a string, not {type(value).__name__}"
    if not value:
        return "a minion id must not be empty"
    if len(value) > MAX_ID_LEN:
        return f"a minion id must be at most {MAX_ID_LEN} characters (this one has {len(value)})"
    if "\0" in value:
        return "a minion id must not contain a NUL character"
    if "/" in value or "\\" in value:
        return "a minion id must not contain '/' or '\\'"
    if value.startswith("."):
        return (
            "a minion id must not start with '.' (its key file would be hidden: briny-key "
            "could neither list nor delete it)"
        )
    if _CONTROL_RE.search(value):
        return "a minion id must not contain control characters"
    if value.startswith("-"):
        return "a minion id must not start with '-'"
    return None


def valid_id(value: object) -> TypeGuard[str]:
    """True when ``value`` is a minion id that is safe to use as a file name."""
    return id_problem(value) is None


def check_id(value: object) -> str:
    """``value`` when it is a valid minion id; raises SaltInvocationError otherwise."""
    problem = id_problem(value)
    if problem is not None or not isinstance(value, str):  # (a problem when it is not a str)
        raise SaltInvocationError(f"Invalid minion id {value!r}: {problem}")
    return value


def valid_jid(value: object) -> TypeGuard[str]:
    """True for Salt's job id form: exactly 20 ASCII digits (``YYYYMMDDhhmmssffffff``)."""
    return isinstance(value, str) and bool(_JID_RE.match(value))


def check_jid(value: object) -> str:
    """``value`` when it is a valid jid; raises SaltInvocationError otherwise."""
    if not valid_jid(value):
        raise SaltInvocationError(f"Invalid job id {value!r}: a jid is 20 digits (YYYYMMDDhhmmssffffff)")
    return value


def other_minion(payload: Mapping[str, Any], minion_id: str) -> str | None:
    """The other minion a minion's request names (in ``id``, ``minion_id`` or ``tgt``), shortened
    for a message; None when it names no one but its sender. A minion may ask the master only
    about itself (its pillar, its compiled states): the callers refuse the request otherwise."""
    for field in ("id", "minion_id", "tgt"):
        named = payload.get(field)
        if named is not None and named != minion_id:
            return repr(str(named)[:64])
    return None
