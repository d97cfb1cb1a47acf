"""Execution module ``test``: connectivity and plumbing checks.

Runs on the minion (and in ``briny-call``), loaded by the loader with the
usual dunders. Functions follow Salt 3007's ``test`` module.

Convention for exit status: a function that wants the CLI to exit non-zero
without failing (``test.retcode``, ``cmd.run`` of a failing command) sets
``__context__["retcode"]``; ``briny-call`` and the minion's job runner read
it after the call, as Salt's caller does.
"""

from __future__ import annotations

import hashlib
import logging
import os
import random
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __opts__, __salt__


from briny.common import versions as _versions

log = logging.getLogger(__name__)

__func_alias__ = {"true_": "true", "false_": "false", "try_": "try"}


def ping(**kwargs: Any) -> bool:
    """Return True: the minion is up and answering."""
    return True


def echo(text: Any, **kwargs: Any) -> Any:
    """Return ``text`` unchanged."""
    return text


def true_(**kwargs: Any) -> bool:
    """Always True."""
    return True


def false_(**kwargs: Any) -> bool:
    """Always False."""
    return False


def version(**kwargs: Any) -> str:
    """What runs here: ``briny 0.1.0 (Salt 3007.17)``, briny's version and the Salt release it
    follows (Salt's answers its own version; ``versions_report`` has both apart)."""
    return _versions.version_string("briny")


def versions_information(**kwargs: Any) -> dict[str, dict[str, str | None]]:
    """Versions of briny, the Salt release it follows, Python, the dependencies and the system,
    in Salt's sections (a dependency not installed is None)."""
    return _versions.versions_information()


def versions(**kwargs: Any) -> str:
    """The versions report as text (same as ``versions_report``)."""
    return versions_report()


def versions_report(include_salt_cloud: bool = False, **kwargs: Any) -> str:
    """The versions report as text, in Salt's layout (what ``--versions-report`` prints)."""
    return _versions.versions_report()


def arg(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """Return the positional and keyword arguments received."""
    return {"args": list(args), "kwargs": kwargs}


def arg_type(*args: Any, **kwargs: Any) -> dict[str, list[Any]]:
    """The type name of each positional argument."""
    ret: dict[str, list[Any]] = {}
    for item in args:
        ret.setdefault(type(item).__name__, []).append(item)
    return ret


def arg_repr(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """The ``repr`` of each argument."""
    return {"args": [repr(a) for a in args], "kwargs": {k: repr(v) for k, v in kwargs.items()}}


def kwarg(**kwargs: Any) -> dict[str, Any]:
    """Return the keyword arguments received."""
    return kwargs


def outputter(data: Any, **kwargs: Any) -> Any:
    """Return ``data`` (to try outputters)."""
    return data


def retcode(code: int = 42, **kwargs: Any) -> bool:
    """Return True and make the caller exit with ``code``."""
    try:
        code = int(code)
    except (TypeError, ValueError):
        code = 1
    __context__["retcode"] = code
    return True


def sleep(length: float, **kwargs: Any) -> bool:
    """Sleep ``length`` seconds, then return True."""
    time.sleep(float(length))
    return True


def rand_sleep(max: float = 60, **kwargs: Any) -> bool:
    """Sleep a random time up to ``max`` seconds, then return True."""
    time.sleep(random.random() * float(max))
    return True


def exception(message: str = "Test Exception", **kwargs: Any) -> None:
    """Raise an exception with ``message`` (to test error handling)."""
    raise Exception(message)


def assertion(assertion: Any, **kwargs: Any) -> None:
    """``assert`` ``assertion``."""
    assert assertion


def fib(num: int, **kwargs: Any) -> list[Any]:
    """The ``num``-th Fibonacci number and the seconds it took: ``[value, seconds]``."""
    num = int(num)
    if num < 0:
        raise ValueError("Negative number is not allowed!")
    start = time.time()
    a, b = 0, 1
    for _ in range(num):
        a, b = b, a + b
    return [a, time.time() - start]


def collatz(start: int, **kwargs: Any) -> list[Any]:
    """The Collatz sequence from ``start`` and the seconds it took."""
    begin = time.time()
    n = int(start)
    seq = [n]
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        seq.append(n)
    return [seq, time.time() - begin]


def conf_test(**kwargs: Any) -> Any:
    """The value of the ``test.foo`` option, or ``unconfigured``."""
    return __opts__.get("test.foo", "unconfigured")


def get_opts(**kwargs: Any) -> dict[str, Any]:
    """This minion's configuration."""
    return dict(__opts__)


def random_hash(size: int = 9999999999, hash_type: str | None = None, **kwargs: Any) -> str:
    """A hash of a random number below ``size``."""
    hash_type = hash_type or __opts__.get("hash_type", "sha256")
    try:
        hasher = hashlib.new(hash_type)
    except ValueError as exc:
        raise ValueError(f"Invalid hash type {hash_type!r}") from exc
    hasher.update(str(random.SystemRandom().randint(1, int(size))).encode())
    return hasher.hexdigest()


def provider(module: str, **kwargs: Any) -> str:
    """The name of the module providing ``module`` (the virtual name)."""
    funcs = [f for f in __salt__ if f.startswith(module + ".")]
    return module if funcs else ""


def providers(**kwargs: Any) -> dict[str, str]:
    """Each loaded module name and its provider."""
    return {name: name for name in sorted({f.partition(".")[0] for f in __salt__})}


def not_loaded(**kwargs: Any) -> list[str]:
    """Modules that could not be loaded (none are tracked; always empty here)."""
    return []


def attr_call(**kwargs: Any) -> bool:
    """Call a few functions attribute-style (``__salt__.test.echo``) and check them."""
    return bool(__salt__.test.echo("attr") == "attr")


def tty(*args: Any, **kwargs: Any) -> str:
    """Moved to ``cmd.tty``."""
    return "ERROR: This function has been moved to cmd.tty"


def module_report(**kwargs: Any) -> dict[str, list[str]]:
    """The functions the loader offers."""
    funcs = sorted(__salt__)
    return {
        "functions": funcs,
        "function_attrs": [],
        "function_subs": [],
        "modules": sorted({f.partition(".")[0] for f in funcs}),
        "module_attrs": [],
    }


def stack(**kwargs: Any) -> str:
    """The current Python stack, as text."""
    import traceback

    return "".join(traceback.format_stack())


def raise_exception(name: str, *args: Any, **kwargs: Any) -> None:
    """Raise the exception class ``name`` (a builtin, one of ``salt.exceptions`` as briny provides
    them, or one of briny's) with ``args``."""
    import builtins

    from briny.common import exceptions as exc_mod

    short = name.rsplit(".", 1)[-1]
    cls = exc_mod.SALT_NAMES.get(short) or getattr(exc_mod, short, None) or getattr(builtins, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        log.error("Unknown exception class %r", name)
        return None
    raise cls(*args)


def try_(module: str, return_try_exception: bool = False, **kwargs: Any) -> Any:
    """Call function ``module`` with ``kwargs``; on error return None (or the exception)."""
    args = kwargs.pop("args", [])
    clean = {k: v for k, v in kwargs.items() if not k.startswith("__")}
    try:
        return __salt__[module](*args, **clean)
    except Exception as exc:  # noqa: BLE001 - the function's whole purpose is to swallow errors
        log.error("%s raised: %s", module, exc)
        return exc if return_try_exception else None


def echo_pid(**kwargs: Any) -> int:
    """The process id of the minion process running the call."""
    return os.getpid()
