"""``git.config_set`` and ``git.config_unset`` (a private sibling of ``git.py``, which imports
it; its state functions are the module's): a key of a repository's config or of a user's
``~/.gitconfig``. See ``git.py``'s docstring for where they differ from Salt on purpose."""

from __future__ import annotations

import logging
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from ._git_common import _clean, _fail, _invalid, _neutral_test, _ret, _strip_exc
from ._access import _salt, _testing

log = logging.getLogger(__name__)


def _scope_args(kwargs: dict[str, Any], ret: dict[str, Any], repo: Any, extra: tuple[str, ...] = ()) -> Any:
    """(global, extra values...) from kwargs, or a failed ret for unknown arguments or a missing repo."""
    kwargs = _clean(kwargs)
    global_ = kwargs.pop("global", False)
    values = [kwargs.pop(k, False) for k in extra]
    if kwargs:
        return _fail(ret, _invalid(kwargs))
    if not global_ and not repo:
        return _fail(ret, "Non-global config options require the 'repo' argument to be set")
    return (global_, *values)


def _values(value: Any, multivar: Any) -> tuple[list[str], Any]:
    """(the values wanted, how the comment shows them)."""
    if multivar is None:
        return [str(value)], f"'{value}'"
    values = [str(x) for x in multivar] if isinstance(multivar, list) else str(multivar).split(",")
    return values, values


def config_set(
    name: str,
    value: Any = None,
    multivar: Any = None,
    repo: Any = None,
    user: Any = None,
    password: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """``name`` set to ``value`` (or the values of ``multivar``) in ``repo``'s config, or ``user``'s with ``global``."""
    ret = _ret(str(name))
    if value is not None and multivar is not None:
        return _fail(ret, "Only one of 'value' and 'multivar' is permitted")
    scope = _scope_args(kwargs, ret, repo)
    if isinstance(scope, dict):
        return scope
    (global_,) = scope
    name = str(name)
    desired, shown = _values(value, multivar)
    if multivar is not None:
        multivar = desired
    elif value is not None:
        value = str(value)
    which = "Global key " if global_ else ""
    kw = {"user": user, "password": password, "output_encoding": output_encoding, "global": global_}
    try:
        pre = _salt("git.config_get")(cwd=repo, key=name, ignore_retcode=True, all=True, **kw)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, _strip_exc(exc))
    if desired == pre:
        ret["comment"] = f"{which}'{name}' is already set to {shown}"
        return ret
    verb = "added as" if pre is None else "set to"
    if _testing():
        ret["changes"] = {"old": pre, "new": desired}
        return _neutral_test(ret, f"{which}'{name}' would be {verb} {shown}")
    try:
        post = _salt("git.config_set")(cwd=repo, key=name, value=value, multivar=multivar, **kw)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, f"Failed to set {which.lower()}'{name}' to {shown}: {_strip_exc(exc)}")
    if pre != post:
        ret["changes"][name] = {"old": pre, "new": post}
    if post != desired:
        return _fail(ret, f"Failed to set {which.lower()}'{name}' to {shown}")
    ret["comment"] = f"{which}'{name}' was {verb} {shown}"
    return ret


def config_unset(
    name: str,
    value_regex: Any = None,
    repo: Any = None,
    user: Any = None,
    password: Any = None,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """No key matching the regex ``name`` (anchored) with a value matching ``value_regex``; ``all`` for multivars."""
    ret = _ret(str(name))
    ret["comment"] = "No matching keys are set"
    scope = _scope_args(kwargs, ret, repo, ("all",))
    if isinstance(scope, dict):
        return scope
    global_, all_ = scope
    name = str(name)
    value_regex = None if value_regex is None else str(value_regex)
    key = "^" + name.lstrip("^").rstrip("$") + "$"
    kw = {"user": user, "password": password, "output_encoding": output_encoding, "global": global_}

    def matches(regex: Any) -> dict[str, list[str]]:
        return dict(_salt("git.config_get_regexp")(cwd=repo, key=key, value_regex=regex, ignore_retcode=True, **kw))

    try:
        pre_matches = matches(value_regex)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return _fail(ret, _strip_exc(exc))
    if not pre_matches:
        return ret
    if not all_:
        greedy = [f"{k} ({', '.join(v)})" for k, v in pre_matches.items() if len(v) > 1]
        if greedy:
            if value_regex is not None:
                what = "Multiple values are matched by value_regex for the following keys"
            else:
                what = "Multivar(s) matched by the key expression"
            return _fail(ret, f"{what} (set 'all' to True to force removal): {'; '.join(greedy)}")
    if _testing():
        ret["changes"] = pre_matches
        return _neutral_test(ret, f"{len(pre_matches)} key(s) would have value(s) unset")
    pre = pre_matches if value_regex is None else matches(None)
    failed = []
    for key_name in pre_matches:
        try:
            _salt("git.config_unset")(cwd=repo, key=key_name, value_regex=value_regex, all=all_, **kw)
        except CommandExecutionError as exc:
            log.error("Failed to unset '%s': %s", key_name, _strip_exc(exc))
            failed.append(key_name)
    if failed:
        return _fail(
            ret,
            "Error(s) occurred unsetting values for the following keys (see the minion log for details): "
            + ", ".join(failed),
        )
    post = matches(None)
    for key_name, values in pre.items():
        if key_name not in post:
            ret["changes"][key_name] = values
        unset = [v for v in values if v not in post.get(key_name, [])]
        if unset:
            ret["changes"][key_name] = unset
    post_matches = post if value_regex is None else matches(value_regex)
    if post_matches:
        left = "; ".join(f"{k} ({', '.join(v)})" for k, v in post_matches.items())
        return _fail(ret, f"Failed to unset value(s): {left}")
    ret["comment"] = "Value(s) successfully unset"
    return ret
