"""The ``test`` state module: states that pretend, for trying out SLS trees.

Runs wherever states run (``briny-call``, the minion). Nothing here touches
the host; each function returns the result, changes and comment Salt 3007
returns, in live mode and under ``test=True``.

Salt 3007 has no ``succeed_with_comment``/``fail_with_comment``; the
``comment`` keyword of the other functions overrides the live comment, as in
Salt. Where Salt raises a traceback for a bad argument (``changes: bogus``,
``show_notification`` without ``text``) these return a failed result with
the same message instead.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING, Any
from ._access import _testing

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


_CHANGES = {"testing": {"old": "Unchanged", "new": "Something pretended to change"}}
_TEST_NOTE = "If we weren't testing, this would be "


def _ret(name: str, result: bool | None, comment: str, changed: bool) -> dict[str, Any]:
    return {
        "name": name,
        "changes": {k: dict(v) for k, v in _CHANGES.items()} if changed else {},
        "result": result,
        "comment": comment,
    }


def nop(name: str, **kwargs: Any) -> dict[str, Any]:
    """Do nothing, successfully (useful as a requisite anchor)."""
    return _ret(name, True, "Success!", False)


def succeed_without_changes(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed and report no changes."""
    return _ret(name, True, kwargs.get("comment") or "Success!", False)


def fail_without_changes(name: str, **kwargs: Any) -> dict[str, Any]:
    """Fail and report no changes."""
    if _testing():
        return _ret(name, False, _TEST_NOTE + "a failure!", False)
    return _ret(name, False, kwargs.get("comment") or "Failure!", False)


def succeed_with_changes(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed and report a pretend change (result None under test mode)."""
    if _testing():
        return _ret(name, None, _TEST_NOTE + "successful with changes", True)
    return _ret(name, True, kwargs.get("comment") or "Success!", True)


def fail_with_changes(name: str, **kwargs: Any) -> dict[str, Any]:
    """Fail and report a pretend change (result None under test mode)."""
    if _testing():
        return _ret(name, None, _TEST_NOTE + "failed with changes", True)
    return _ret(name, False, kwargs.get("comment") or "Failure!", True)


def _tristate(value: Any, option: str) -> bool | str:
    if value is True or value is False:
        return value
    if isinstance(value, str) and value.lower() == "random":
        return "random"
    raise ValueError(
        f"You have specified the state option '{option}' with invalid arguments. "
        "It must be either True, False, or 'Random'"
    )


def configurable_test_state(
    name: str,
    changes: Any = True,
    result: Any = True,
    comment: Any = "",
    warnings: Any = None,
    allow_test_mode_failure: bool = False,
) -> dict[str, Any]:
    """A state whose changes, result, comment and warnings are whatever you ask.

    ``changes`` and ``result`` take True, False or ``Random``. Under test mode
    the result is None when there are changes, True when there are none,
    and False only when ``allow_test_mode_failure`` and ``result`` is False.
    """
    if isinstance(comment, list):
        comment = "\n".join(str(c) for c in comment)
    comment = "" if comment is None else str(comment)
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": False, "comment": comment}
    try:
        want_changes = _tristate(changes, "changes")
        want_result = _tristate(result, "result")
    except ValueError as exc:
        ret["comment"] = str(exc)
        return ret
    if want_changes == "random":
        want_changes = random.choice([True, False])
    if want_result == "random":
        want_result = random.choice([True, False])
    if want_changes:
        ret["changes"] = {k: dict(v) for k, v in _CHANGES.items()}
    ret["result"] = want_result
    if warnings is not None:
        ret["warnings"] = [warnings] if isinstance(warnings, str) else list(warnings)
    if _testing():
        if allow_test_mode_failure and want_result is False:
            ret["result"] = False
        else:
            ret["result"] = None if ret["changes"] else True
        ret["comment"] = comment or "This is a test"
    return ret


def show_notification(name: str, text: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """Show ``text`` as the comment; no changes, always successful."""
    if text is None:
        return {"name": name, "changes": {}, "result": False, "comment": "Missing required argument text."}
    return {"name": name, "changes": {}, "result": True, "comment": text}


def check_pillar(
    name: str,
    present: Any = None,
    boolean: Any = None,
    integer: Any = None,
    string: Any = None,
    listing: Any = None,
    dictionary: Any = None,
    verbose: bool = False,
) -> dict[str, Any]:
    """Check that pillar keys (``a:b`` for nested ones) exist and have the expected types."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": True, "comment": ""}
    wanted: dict[str, Any] = {}
    for keys, kind in (
        (present, object),
        (boolean, bool),
        (integer, int),
        (string, (str,)),
        (listing, list),
        (dictionary, dict),
    ):
        for key in [keys] if isinstance(keys, str) else list(keys or []):
            wanted[str(key)] = kind
    failed: list[str] = []
    passed: list[str] = []
    for key, kind in wanted.items():
        value = __salt__["pillar.get"](key, None)
        if value is None:  # as Salt: a key set to None counts as missing
            failed.append(f'Pillar key "{key}" is missing.\n')
        elif not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            failed.append(f'Pillar key "{key}" is not {kind}.\n')
        else:
            passed.append(f"- {key} ({kind})\n")
    ret["result"] = not failed
    ret["comment"] = "".join(failed)
    if verbose and passed:
        ret["comment"] += "Those keys passed the check:\n" + "".join(passed)
    return ret


def mod_watch(name: str, sfun: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """Called when a watched state changed and this state itself reported none.

    Reports which watched requisites changed, as Salt does. A watching
    ``configurable_test_state`` re-runs itself with its own arguments
    (Salt 3007 fails there with an internal error).
    """
    if sfun == "configurable_test_state":
        args = {k: v for k, v in kwargs.items() if not k.startswith("__")}
        return configurable_test_state(name, **args)
    # Salt lists the plain ``watch`` targets that changed (``watch_any`` ones never)
    reqs = kwargs.get("__reqs__") or {}
    running = globals().get("__running__") or {}
    changed: list[str] = []
    for low in reqs.get("watch") or []:
        if not isinstance(low, dict):
            continue
        tag = f"{low.get('state')}_|-{low.get('__id__')}_|-{low.get('name')}_|-{low.get('fun')}"
        if (running.get(tag) or {}).get("changes"):
            changed.append(f"{low.get('state')}: {low.get('__id__', low.get('name'))}")
    return {
        "name": name,
        "result": True,
        "comment": "Watch statement fired.",
        "changes": {"Requisites with changes": changed},
    }
