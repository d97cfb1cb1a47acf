"""Command-line arguments the Salt way: ``key=value`` pairs and YAML-typed values.

Runs in the CLIs (``briny-call``, ``briny``) and wherever a function is
called from user input. ``parse_input(["1", "x=2", "y={a: 1}"])`` gives
``([1], {"x": 2, "y": {"a": 1}})``: values are read as YAML, except where
Salt keeps the text (``a_1``-style digit strings, multi-line text, a dict or
list not written in braces/brackets, ``|``, ``!``, ``#...``).
"""

from __future__ import annotations

import inspect
import re
import types
from typing import Any, Callable

import yaml

from .exceptions import InvalidArguments, SaltInvocationError
from .yamlloader import SlsLoader

KWARG_RE = re.compile(r"^([^\d\W][\w.-]*)=(?!=)(.*)$", re.UNICODE | re.DOTALL)


def yamlify_arg(arg: Any) -> Any:
    if not isinstance(arg, str):
        return arg
    if arg.strip() in ("", "---", "..."):
        return arg
    if "_" in arg and all(c in "0123456789_" for c in arg.strip()):
        return arg
    if any(c in arg for c in "\t\r\n"):
        return arg
    original = arg
    try:
        if "#" in arg:
            parsed = yaml.load(arg, Loader=SlsLoader)  # noqa: S506 - safe loader
            return arg if isinstance(parsed, str) or parsed is None else parsed
        value = None if arg == "None" else yaml.load(arg, Loader=SlsLoader)  # noqa: S506 - SlsLoader is a safe loader
    except yaml.YAMLError:
        return original
    if isinstance(value, dict):
        return value if original.startswith("{") else original
    if isinstance(value, list):
        return value if original.startswith("[") else original
    if value is None or isinstance(value, (float, int, str)):
        if value == "" and original in ("|", "!"):
            return original
        if value is None and (original.strip().startswith("#") or original == "!"):
            return original
        return value
    return original


def parse_input(args: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    out_args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for arg in args:
        if isinstance(arg, str):
            m = KWARG_RE.match(arg)
            if m and "\n" not in m.group(1):
                kwargs[m.group(1)] = yamlify_arg(m.group(2))
                continue
            out_args.append(yamlify_arg(arg))
        else:
            out_args.append(arg)
    return out_args, kwargs


def split_input(value: Any, mapper: Callable[[Any], Any] | None = None) -> list[Any]:
    """Salt's comma list (``split_input``): a list (or tuple) as it is, anything else split on
    ``,`` with each part stripped; empty parts stay (``"a,"`` gives ``["a", ""]``: an empty SLS
    name is reported, never dropped); ``None`` gives ``[]``. ``mapper`` is applied to each item
    (``split_input(mods, str)``)."""
    if value is None:
        items: list[Any] = []
    elif isinstance(value, (list, tuple)):
        items = list(value)
    else:
        items = [part.strip() for part in str(value).split(",")]
    return items if mapper is None else [mapper(item) for item in items]


def publish_args(arg: list[Any], kwarg: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
    """Positional and keyword arguments of a publish's ``arg``/``kwarg``, as Salt's minion makes
    them (``load_args_and_kwargs``): a ``{"__kwarg__": True, ...}`` map and a ``key=value`` string
    in ``arg`` become keyword arguments (the value read as YAML); ``kwarg`` is merged last."""
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for item in arg:
        if isinstance(item, dict) and item.get("__kwarg__") is True:
            kwargs.update({k: v for k, v in item.items() if k != "__kwarg__"})
        elif isinstance(item, str) and KWARG_RE.match(item) and "\n" not in item.split("=", 1)[0]:
            kwargs.update(parse_input([item])[1])
        else:
            args.append(item)
    kwargs.update(kwarg)
    return args, kwargs


SIGNATURES_KEPT = 4096
_SIGNATURES: dict[tuple[types.CodeType, int, frozenset[str]], inspect.Signature] = {}


def signature(func: Callable[..., Any]) -> inspect.Signature:
    """``inspect.signature(func)``, kept per function *shape* for plain functions.

    A daemon loads each module afresh per job, so the same ``def`` becomes a new function object
    every time, and building its signature cost as much as a ``test.ping`` itself. For a plain
    function (no ``__wrapped__``, no ``__signature__``) the parameters' names and kinds come from
    its code object and which of them have defaults from the number of positional defaults and
    the names of keyword-only ones: that is the key. A function with attributes of its own
    (``__wrapped__``, ``__signature__``, a ``partialmethod``'s) is read afresh. The default *values* in a kept signature are
    those of the first function seen with that shape, so a caller may use it to read names and
    kinds and to ``bind`` (which only asks whether a default exists), never to read a default.
    Anything else (a wrapper, a partial, a builtin) is read afresh each time."""
    if type(func) is not types.FunctionType or func.__dict__:  # __wrapped__, __signature__, partialmethod's
        return inspect.signature(func)
    key = (func.__code__, len(func.__defaults__ or ()), frozenset(func.__kwdefaults__ or ()))
    sig = _SIGNATURES.get(key)
    if sig is None:
        if len(_SIGNATURES) >= SIGNATURES_KEPT:  # custom files changed many times: start again
            _SIGNATURES.clear()
        sig = _SIGNATURES[key] = inspect.signature(func)
    return sig


def call_function(
    func: Callable[..., Any], name: str, args: list[Any], kwargs: dict[str, Any], pub: dict[str, Any] | None = None
) -> Any:
    """Call an execution function as Salt does: ``__pub_*`` only where ``**kwargs`` is taken,
    and a clear error for keyword arguments the function does not know."""
    try:
        sig = signature(func)
    except (TypeError, ValueError):
        return func(*args, **kwargs)
    params = sig.parameters
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in params.values())
    call_kwargs = dict(kwargs)
    if takes_kwargs:
        call_kwargs.update(pub or {})
    else:
        bad = [k for k in call_kwargs if k not in params]
        if bad:
            shown = ", ".join(f"{k}={call_kwargs[k]}" for k in bad)
            raise SaltInvocationError(f"The following keyword arguments are not valid: {shown}")
    try:
        sig.bind(*args, **call_kwargs)
    except TypeError:
        # Python refuses such a call before the function's body runs: its words are Salt's
        # ("sls() missing 1 required positional argument: 'mods'")
        try:
            return func(*args, **call_kwargs)
        except TypeError as exc:
            raise InvalidArguments(str(exc)) from None
    return func(*args, **call_kwargs)


def salt_arg(arg: list[Any], kwarg: dict[str, Any]) -> list[Any]:
    """A job's arguments as Salt's events show them: the keyword arguments as one last
    ``{"__kwarg__": True, ...}`` item of ``arg``."""
    if not kwarg or any(isinstance(a, dict) and a.get("__kwarg__") for a in arg):
        return list(arg)
    return [*arg, {"__kwarg__": True, **kwarg}]
