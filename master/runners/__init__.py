"""Runner functions for ``briny-run``: the registry and the context they get.

Runs on the master host, in ``briny-run`` (and later in the master daemon
for runner jobs). A runner is a public function of a module in this package
(``jobs.py`` → ``jobs.list_jobs``); it takes a :class:`RunnerContext` first,
then Salt's positional and keyword arguments, and returns data for the
outputter. A runner may return ``{"outputter": NAME, "data": DATA}`` to pick
the outputter when ``--out`` is not given, as Salt's runners do.

Modules are found by name, so a new ``runners/<name>.py`` (``manage``,
``state``) needs no change here.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import FunctionNotFound
from briny.master.jobcache import JobCache, open_job_cache

log = logging.getLogger(__name__)

_NAME_RE = re.compile(r"\A[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\Z")


@dataclass
class RunnerContext:
    """What a runner gets: the master's opts and a lazily opened, read-only job cache."""

    opts: dict[str, Any]
    cache: JobCache | None = None
    context: dict[str, Any] = field(default_factory=dict)  # Salt's __context__ (e.g. "retcode")

    def job_cache(self) -> JobCache:
        if self.cache is None:
            self.cache = open_job_cache(self.opts, readonly=True)
        return self.cache

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()
            self.cache = None


def get_runner(name: str) -> Callable[..., Any]:
    """The runner function ``module.function``; FunctionNotFound when there is none."""
    if not isinstance(name, str) or not _NAME_RE.match(name):
        raise FunctionNotFound(f"'{name}' is not available.")
    mod_name, fun_name = name.split(".", 1)
    try:
        module = importlib.import_module(f"{__name__}.{mod_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__name__}.{mod_name}":
            raise FunctionNotFound(f"'{name}' is not available.") from None
        raise
    aliases = getattr(module, "__func_alias__", {})
    real = next((k for k, v in aliases.items() if v == fun_name), fun_name)
    func: Callable[..., Any] | None = getattr(module, real, None)
    if fun_name.startswith("_") or not callable(func) or real not in getattr(module, "__all__", [real]):
        raise FunctionNotFound(f"'{name}' is not available.")
    return func


def list_functions(module: str) -> list[str]:
    """Runner names one module offers (``jobs`` → ``["jobs.active", ...]``)."""
    try:
        mod = importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError:
        return []
    aliases = getattr(mod, "__func_alias__", {})
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    return sorted(f"{module}.{aliases.get(n, n)}" for n in names if callable(getattr(mod, n, None)))
