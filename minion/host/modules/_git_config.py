"""git config for the ``git`` execution module (a private sibling of ``git.py``, which imports
it; its public functions are the module's): a repository's keys (``--local``, which needs
``cwd``) or a user's ``~/.gitconfig`` (``global=True``)."""

from __future__ import annotations

from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from ._git_cmd import _clean, _expand_path, _git_run, _invalid


def _scope(global_: Any, cwd: Any, user: Any) -> tuple[list[str], Any]:
    """The ``--global``/``--local`` option and the directory to run in."""
    if cwd is None:
        if not global_:
            raise SaltInvocationError("'cwd' argument required unless global=True")
        return ["--global"], None
    return (["--global"] if global_ else ["--local"]), _expand_path(cwd, user)


def _config_getter(
    get_opt: str,
    key: str,
    value_regex: Any,
    cwd: Any,
    user: Any,
    ignore_retcode: bool,
    output_encoding: Any,
    kwargs: dict[str, Any],
) -> dict[str, Any]:
    kwargs = _clean(kwargs)
    global_ = kwargs.pop("global", False)
    _invalid(kwargs)
    scope, cwd = _scope(global_, cwd, user)
    command = ["git", "config", *scope, get_opt, str(key)]
    if get_opt == "--get-regexp" and value_regex is not None:
        command.append(str(value_regex))
    return _git_run(
        command, cwd=cwd, user=user, ignore_retcode=ignore_retcode, failhard=False, output_encoding=output_encoding
    )


def config_get(
    key: str,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> Any:
    """The value of ``key`` (the last one), every value with ``all=True``, None when it is not set."""
    all_ = kwargs.pop("all", False)
    result = _config_getter("--get-all", key, None, cwd, user, ignore_retcode, output_encoding, kwargs)
    if result["retcode"] == 1:
        return None
    values = str(result["stdout"]).splitlines()
    if all_:
        return values
    return values[-1] if values else ""


def config_get_regexp(
    key: str,
    value_regex: Any = None,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> dict[str, list[str]]:
    """``{key: [values]}`` for the keys matching the regex ``key`` (and values matching ``value_regex``)."""
    result = _config_getter("--get-regexp", key, value_regex, cwd, user, ignore_retcode, output_encoding, kwargs)
    ret: dict[str, list[str]] = {}
    if result["retcode"] == 1:
        return ret
    for line in str(result["stdout"]).splitlines():
        parts = line.split(None, 1)
        if len(parts) == 2:
            ret.setdefault(parts[0], []).append(parts[1])
    return ret


config_get_regex = config_get_regexp


def config_set(
    key: str,
    value: Any = None,
    multivar: Any = None,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> Any:
    """Set ``key`` to ``value`` (``add=True`` adds a value) or to the values of ``multivar``; returns every value."""
    kwargs = _clean(kwargs)
    add_ = kwargs.pop("add", False)
    global_ = kwargs.pop("global", False)
    _invalid(kwargs)
    _, cwd = _scope(global_, cwd, user)  # config_set writes without --local, as Salt does
    if value is not None and multivar is not None:
        raise SaltInvocationError("Only one of 'value' and 'multivar' is permitted")
    prefix = ["git", "config"] + (["--global"] if global_ else [])
    run = {"cwd": cwd, "user": user, "ignore_retcode": ignore_retcode, "output_encoding": output_encoding}
    if value is not None:
        _git_run(prefix + ["--add" if add_ else "--replace-all", str(key), str(value)], **run)
    else:
        values = _split_multivar(multivar)
        for idx, item in enumerate(values):
            _git_run(prefix + ["--replace-all" if idx == 0 else "--add", str(key), item], **run)
    return config_get(
        key,
        cwd=cwd,
        user=user,
        ignore_retcode=ignore_retcode,
        output_encoding=output_encoding,
        **{"all": True, "global": global_},
    )


def _split_multivar(multivar: Any) -> list[str]:
    """Salt's multivar: a list (items made strings) or a comma-separated string."""
    if multivar is None:
        return []
    if isinstance(multivar, list):
        return [str(x) for x in multivar]
    return str(multivar).split(",")


def config_unset(
    key: str,
    value_regex: Any = None,
    cwd: Any = None,
    user: Any = None,
    password: Any = None,
    ignore_retcode: bool = False,
    output_encoding: Any = None,
    **kwargs: Any,
) -> bool:
    """Unset ``key`` (values matching ``value_regex`` only; ``all=True`` for every value); True."""
    kwargs = _clean(kwargs)
    all_ = kwargs.pop("all", False)
    global_ = kwargs.pop("global", False)
    _invalid(kwargs)
    scope, cwd = _scope(global_, cwd, user)
    command = ["git", "config", "--unset-all" if all_ else "--unset", *scope, str(key)]
    command += [str(value_regex)] if value_regex is not None else []
    ret = _git_run(
        command, cwd=cwd, user=user, ignore_retcode=ignore_retcode, failhard=False, output_encoding=output_encoding
    )
    code = ret["retcode"]
    if code == 0:
        return True
    if code == 1:
        raise CommandExecutionError("Section or key is invalid")
    if code == 5:
        if (
            config_get(
                key,
                cwd=cwd,
                user=user,
                ignore_retcode=ignore_retcode,
                output_encoding=output_encoding,
                **{"global": global_},
            )
            is None
        ):
            raise CommandExecutionError(f"Key '{key}' does not exist")
        msg = f"Multiple values exist for key '{key}'"
        if value_regex is not None:
            msg += " and value_regex matches multiple values"
        raise CommandExecutionError(msg)
    if code == 6:
        raise CommandExecutionError("The value_regex is invalid")
    msg = f"Failed to unset key '{key}', git config returned exit code {code}"
    if ret.get("stderr"):
        msg += "; " + str(ret["stderr"])
    raise CommandExecutionError(msg)
