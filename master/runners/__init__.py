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
import inspect
import logging
import os
import pkgutil
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from briny.common.event import EventBus, EventSender
from briny.common.exceptions import FunctionNotFound
from briny.common.jid import gen_jid
from briny.master.busshape import run_args, run_new, run_ret
from briny.master.jobcache import open_job_cache
from briny.master.jobcache.base import JobCache

log = logging.getLogger(__name__)

_NAME_RE = re.compile(r"\A[a-z_][a-z0-9_]*\.[a-z_][a-z0-9_]*\Z")


@dataclass
class RunnerContext:
    """What a runner gets: the master's opts and a lazily opened, read-only job cache."""

    opts: dict[str, Any]
    cache: JobCache | None = None
    context: dict[str, Any] = field(default_factory=dict)  # Salt's __context__ (e.g. "retcode")
    # told the jid of the job a runner that records its own (state.orchestrate) claimed, when it claims it:
    # the asked orchestration_jid, or another when a master sharing the job cache holds that one
    on_job: Callable[[str], None] | None = None

    def job_cache(self) -> JobCache:
        if self.cache is None:
            self.cache = open_job_cache(self.opts, readonly=True)
        return self.cache

    def cmd(
        self,
        tgt: Any,
        fun: str,
        arg: list[Any] | None = None,
        tgt_type: str = "glob",
        timeout: float | None = None,
    ) -> tuple[list[str], dict[str, dict[str, Any]]]:
        """Run ``fun`` on ``tgt`` through the running master and wait up to ``timeout`` seconds
        (the master's ``timeout`` by default) for the returns: (the minions targeted, ``{minion:
        its return event's data}`` for those that returned). MasterNotRunning/MasterError when the
        master cannot be asked."""
        import time

        from briny.common import config
        from briny.common.event import EventListener
        from briny.master.clientapi import MasterClient

        wait = float(timeout) if timeout is not None else config.number(self.opts, "timeout")
        returns: dict[str, dict[str, Any]] = {}
        with EventListener(self.opts, "salt/job/*/ret/*", name="master") as events, MasterClient(self.opts) as client:
            job = client.publish(tgt, fun, list(arg or []), tgt_type=tgt_type)
            expected = set(job.get("minions") or [])
            deadline = time.monotonic() + wait
            while expected - set(returns) and time.monotonic() < deadline:
                got = events.get_event(max(0.05, deadline - time.monotonic()))
                if got is None:
                    break
                tag, data = got
                parts = tag.split("/")
                if len(parts) == 5 and parts[2] == job.get("jid") and parts[4] in expected:
                    returns[parts[4]] = data if isinstance(data, dict) else {}
        missing = expected - set(returns)
        if missing and job.get("jid"):  # a return whose event came before we listened, or was missed
            cached = self.job_cache().get_returns(str(job["jid"]))
            returns.update({m: cached[m] for m in missing if m in cached})
        return sorted(expected), returns

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


def list_modules() -> list[str]:
    """The runner modules ``briny-run`` offers (``["cache", "doc", "fileserver", ...]``)."""
    return sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def list_functions(module: str) -> list[str]:
    """Runner names one module offers (``jobs`` → ``["jobs.active", ...]``)."""
    try:
        mod = importlib.import_module(f"{__name__}.{module}")
    except ModuleNotFoundError:
        return []
    aliases = getattr(mod, "__func_alias__", {})
    names = getattr(mod, "__all__", None) or [n for n in vars(mod) if not n.startswith("_")]
    return sorted(f"{module}.{aliases.get(n, n)}" for n in names if callable(getattr(mod, n, None)))


def fires_own_events(name: str) -> bool:
    """Whether the runner ``name`` fires its own ``salt/run`` events (it takes ``orchestration_jid``)."""
    try:
        return "orchestration_jid" in inspect.signature(get_runner(name)).parameters
    except (FunctionNotFound, TypeError, ValueError):
        return False


class RunEvents:
    """``salt/run/<jid>/new`` now and ``/ret`` at :meth:`ret`, on the master's bus, for one
    ``briny-run`` call, as ``salt-run`` fires them for every runner call; a runner that fires its
    own (``state.orchestrate``, which takes ``orchestration_jid``) is given the jid instead. Nothing
    is fired when no master's bus runs on this host."""

    def __init__(
        self, opts: dict[str, Any], fun: str, args: list[Any], kwargs: dict[str, Any], user: str | None = None
    ) -> None:
        self.jid = gen_jid()
        self.sender: EventSender | None = None
        self.new: dict[str, Any] = {}
        if fires_own_events(fun):
            kwargs.setdefault("orchestration_jid", self.jid)
            return
        if not os.path.exists(EventBus(opts, name="master").pull_path):
            return
        from briny.master.clientapi import current_user

        self.sender = EventSender(opts, name="master")
        user = user or os.environ.get("SUDO_USER") or current_user()
        self.new = run_new(fun, run_args(args, kwargs), self.jid, user)
        self.sender.fire(f"salt/run/{self.jid}/new", self.new)

    def ret(self, result: Any, success: bool) -> None:
        if self.sender is None:
            return
        try:
            self.sender.fire(f"salt/run/{self.jid}/ret", run_ret(self.new, result, success))
        finally:
            self.sender.close()
            self.sender = None
