"""The reactor: events on an event bus start reactions written in reactor SLS files.

Shared by the master (:mod:`briny.master.reactor`: ``local``, ``runner``, ``wheel`` reactions)
and a masterless minion (:mod:`briny.minion.reactor`: ``caller`` reactions); each gives its
reaction runner (:class:`briny.common.reactions.ReactionRunner`) and its render env. One listener
thread on the bus (:class:`briny.common.event.EventListener`) and a bounded pool of worker
threads (``reactor_worker_threads``, with at most ``reactor_worker_hwm`` events waiting). The
listener only matches tags and queues, so a slow reaction never blocks the bus or makes the
listener fall behind; a full queue drops the reaction, counts it, logs it and fires
``salt/reactor/dropped`` (``count``: reactions dropped since the last notice, at most one notice
a second, ``where: queue``); events the bus dropped before the reactor's listener saw them are
announced the same way (``where: bus``).

What runs is Salt 3007's reactor (``docs/events.md``, "Reactor"):

- ``reactor:`` in the config is a list of one-key mappings, a tag glob to one reactor SLS or a
  list of them: ``salt://path.sls`` (the file roots, ``?saltenv=`` allowed) or an absolute path
  (a glob);
- each matching event renders each SLS (``#!jinja|yaml`` by default, through
  :func:`briny.common.state.render.render_text`) with ``tag`` and ``data`` in the template context; the
  IDs of every SLS make one set of reactions, run in Salt's order (``order``, then kind, ID and
  function);
- a reaction is ``<kind>.<function>`` with its arguments (:mod:`briny.common.reactions`).

Every reaction that ran fires ``salt/reactor/ret`` (``id``, ``sls``, ``tag``, ``reaction``,
``result``, ``return`` or ``error``). A broken reactor SLS (it is missing, does not render, has
an unknown reaction or function, bad arguments, a target no minion matches) is logged as an
error and fired once as ``salt/reactor/error`` (``sls``, ``tag``, ``error``); the same problem
again is logged at debug level only, and the daemon keeps going. Events under ``salt/reactor/``
never start reactions (no loops on the reactor's own outcomes).
"""

from __future__ import annotations

import fnmatch
import glob
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from briny.common import config
from briny.common.state.compiler import compile_high_data
from briny.common.event import DROPPED_TAG, EventListener, EventSender
from briny.common.exceptions import BrinyError, FileServerError, ReactionError, RenderError
from briny.common.fileclient import LocalFileClient, split_url
from briny.common.reactions import Reaction, ReactionRunner, parse_reaction

log = logging.getLogger(__name__)

OWN_TAGS = "salt/reactor/"
RET_TAG = "salt/reactor/ret"
ERROR_TAG = "salt/reactor/error"
DROPPED_REACTIONS_TAG = "salt/reactor/dropped"
READY_WAIT = 5.0  # seconds the listener may take to prove it is subscribed (start() waits for it)
REPORTED_MAX = 10000  # distinct problems remembered (then forgotten, and reported again)

Fire = Callable[[str, dict[str, Any]], None]


@dataclass(frozen=True)
class ReactorMap:
    """``reactor:`` read once: (tag glob, SLS refs) in config order."""

    entries: tuple[tuple[str, tuple[str, ...]], ...]

    @classmethod
    def from_opts(cls, opts: dict[str, Any]) -> "ReactorMap":
        """The usable entries of ``reactor:``; each unusable one is named in a warning."""
        raw = opts.get("reactor") or []
        entries: list[tuple[str, tuple[str, ...]]] = []
        if not isinstance(raw, list):
            log.warning("config: 'reactor' must be a list of {tag glob: [reactor SLS, ...]}; no reactions run")
            return cls(())
        for item in raw:
            if not isinstance(item, dict) or len(item) != 1:
                log.warning("config: 'reactor' entry %r is not a one-key mapping of a tag glob; ignored", item)
                continue
            glob_, refs = next(iter(item.items()))
            refs = [refs] if isinstance(refs, str) else refs
            if not isinstance(glob_, str) or not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
                log.warning("config: 'reactor' entry %r must map a tag glob to SLS paths; ignored", item)
                continue
            bad = [r for r in refs if not (r.startswith("salt://") or os.path.isabs(r))]
            if bad:
                log.warning(
                    "config: reactor SLS %s for %r must be salt:// URLs or absolute paths; ignored",
                    ", ".join(repr(b) for b in bad),
                    glob_,
                )
            good = tuple(r for r in refs if r not in bad)
            if good:
                entries.append((glob_, good))
        return cls(tuple(entries))

    def refs_for(self, tag: str) -> list[str]:
        """The reactor SLS refs for an event tag, in config order (Salt's fnmatch)."""
        if tag.startswith(OWN_TAGS):
            return []
        refs: list[str] = []
        for glob_, sls in self.entries:
            if fnmatch.fnmatch(tag, glob_):
                refs.extend(sls)
        return refs


class Reactor:
    """Renders reactor SLS for one event and runs its reactions (worker threads). Pure of the bus:
    ``fire`` sends the outcome events; ``reactions`` runs each kind; ``make_env`` gives the render
    env of this host (the master's guarded functions, or a minion's loader)."""

    def __init__(
        self,
        opts: dict[str, Any],
        fire: Fire,
        reactions: ReactionRunner,
        make_env: Callable[[LocalFileClient], Any],
    ) -> None:
        self.opts = opts
        self.map = ReactorMap.from_opts(opts)
        self.fire = fire
        self.reactions = reactions
        follow = bool(config.setting(opts, "fileserver_followsymlinks"))
        self.files = LocalFileClient(opts.get("file_roots") or {}, follow)
        self._make_env = make_env  # the render env of reactor SLS (made once, on first use)
        self._env: Any = None
        self._env_lock = threading.Lock()
        self._reported: set[tuple[str, str]] = set()
        self._reported_lock = threading.Lock()
        self.problems = 0  # every problem, repeated or not

    # -- reporting ----------------------------------------------------------------------------
    def report(self, sls: str, tag: str, error: str, reaction_id: str | None = None) -> None:
        """Log a broken reactor SLS; fire ``salt/reactor/error`` the first time this problem is seen."""
        self.problems += 1
        key = (sls, error)
        with self._reported_lock:
            first = key not in self._reported
            if first:
                if len(self._reported) >= REPORTED_MAX:
                    self._reported.clear()
                self._reported.add(key)
        if not first:
            log.debug("reactor %s (event %s): %s (reported before)", sls, tag, error)
            return
        log.error("reactor %s (event %s): %s", sls, tag, error)
        data: dict[str, Any] = {"sls": sls, "tag": tag, "error": error}
        if reaction_id is not None:
            data["id"] = reaction_id
        self.fire(ERROR_TAG, data)

    # -- rendering ----------------------------------------------------------------------------
    def _render_env(self) -> Any:
        with self._env_lock:
            if self._env is None:
                self._env = self._make_env(self.files)
            return self._env

    def _files(self, ref: str) -> list[tuple[str, str]]:
        """(name for messages, text) of each file a ref names; BrinyError when there is none."""
        if ref.startswith("salt://"):
            path, saltenv = split_url(ref)
            try:
                found = self.files.find(path, saltenv)
            except FileServerError as exc:
                raise BrinyError(str(exc)) from None
            paths = [str(found)] if found is not None and found.is_file() else []
        else:
            paths = sorted(glob.glob(ref))
        if not paths:
            raise BrinyError(f"Can not render SLS {ref}. File missing or not found.")
        out = []
        for path in paths:
            try:
                with open(path, encoding="utf-8") as fh:
                    out.append((path, fh.read()))
            except (OSError, UnicodeDecodeError) as exc:
                raise BrinyError(f"Can not read SLS {path}: {exc}") from None
        return out

    def render(self, ref: str, tag: str, data: dict[str, Any]) -> dict[str, Any]:
        """The high data of one reactor SLS for one event; BrinyError (a clear message) when broken."""
        from briny.common.state.render import render_text

        high: dict[str, Any] = {}
        for _path, text in self._files(ref):
            try:
                rendered = render_text(
                    text, env=self._render_env(), saltenv="base", relpath=None, extra={"tag": tag, "data": data}
                )
            except RenderError as exc:
                raise BrinyError(f"Rendering SLS '{ref}' failed: {exc}") from None
            if not isinstance(rendered, dict):
                raise BrinyError(f"SLS '{ref}' does not render to a mapping of reaction IDs")
            for rid, body in rendered.items():
                high[rid] = normalize(rid, body, ref)
        return high

    def compile(self, refs: list[str], tag: str, data: dict[str, Any]) -> list[Reaction]:
        """The reactions of every SLS for one event, in Salt's order; each broken SLS reported."""
        high: dict[str, Any] = {}
        for ref in refs:
            try:
                high.update(self.render(ref, tag, data))
            except BrinyError as exc:
                self.report(ref, tag, str(exc))
        reactions: list[Reaction] = []
        for chunk in compile_high_data(high) if high else []:
            try:
                reactions.append(parse_reaction(chunk, self.reactions))
            except ReactionError as exc:
                self.report(str(chunk.get("__sls__")), tag, str(exc), str(chunk.get("__id__")))
        return reactions

    # -- running ------------------------------------------------------------------------------
    def react(self, tag: str, data: dict[str, Any], refs: list[str] | None = None) -> list[dict[str, Any]]:
        """Render and run every reaction to one event; the outcome events' data, in order."""
        refs = self.map.refs_for(tag) if refs is None else refs
        outcomes = []
        for reaction in self.compile(refs, tag, data):
            outcome: dict[str, Any] = {
                "id": reaction.id,
                "sls": reaction.sls,
                "tag": tag,
                "reaction": f"{reaction.kind}.{reaction.fun}",
            }
            try:
                outcome.update(self.reactions.run(reaction))
            except ReactionError as exc:
                outcome.update(result=False, error=str(exc))
                self.report(reaction.sls, tag, str(exc), reaction.id)
            except Exception as exc:
                log.exception("reaction %s (%s) failed", reaction.id, outcome["reaction"])
                outcome.update(result=False, error=f"{type(exc).__name__}: {exc}")
            self.fire(RET_TAG, outcome)
            outcomes.append(outcome)
        return outcomes


def normalize(rid: Any, body: Any, sls: str) -> dict[str, Any]:
    """One reaction ID's body as high data (``kind: [fun, {arg: value}, ...]``); BrinyError in
    Salt's words for what its compiler refuses."""
    if not isinstance(rid, str):
        raise BrinyError(f"ID '{rid}' in SLS '{sls}' is not formed as a string, but is a {type(rid).__name__}")
    if isinstance(body, str) and "." in body:  # ``id: local.test.ping`` (no arguments)
        kind, _, fun = body.partition(".")
        return {kind: [fun], "__sls__": sls}
    if not isinstance(body, dict):
        raise BrinyError(f"ID {rid} in SLS {sls} is not a dictionary")
    out: dict[str, Any] = {"__sls__": sls}
    for key, run in body.items():
        if not isinstance(key, str) or key.startswith("__"):
            continue
        if run is None:
            run = []
        if not isinstance(run, list):
            raise BrinyError(f"State '{rid}' in SLS '{sls}' is not formed as a list")
        kind, dot, fun = key.partition(".")
        if not dot or not fun:
            raise BrinyError(
                f"ID '{rid}' in SLS '{sls}': '{key}' is not a reaction (kind.function, e.g. local.test.ping)"
            )
        if kind in out:
            raise BrinyError(f"ID '{rid}' in SLS '{sls}' contains multiple state declarations of the same type")
        args = [a for a in run if not isinstance(a, str)]
        extra = [a for a in run if isinstance(a, str)]
        if extra:
            raise BrinyError(f"ID '{rid}' in SLS '{sls}': '{extra[0]}' is not an argument (write it as 'key: value')")
        out[kind] = [fun, *args]
    return out


class ReactorService:
    """The reactor on one event bus (``bus``: the master's, or a masterless minion's): a listener
    thread and the worker pool (see the module). ``make_reactor`` gets the bus's ``fire``."""

    def __init__(self, opts: dict[str, Any], make_reactor: Callable[[Fire], Reactor], bus: str) -> None:
        self.opts = opts
        self.bus = bus
        self._sender = EventSender(opts, name=bus)
        self.reactor = make_reactor(self._sender.fire)
        self.workers = config.count(opts, "reactor_worker_threads")
        self.queue: queue.Queue[tuple[str, dict[str, Any], list[str]]] = queue.Queue(
            config.count(opts, "reactor_worker_hwm")
        )
        self.dropped = 0  # reactions dropped because the queue was full
        self.missed = 0  # events the listener missed (the bus's dropped notices)
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._listening = threading.Event()
        self._last_drop_report = 0.0
        self._announced = 0  # dropped reactions already announced

    def start(self) -> "ReactorService":
        listener = threading.Thread(target=self._listen, name=f"briny-reactor-{self.bus}", daemon=True)
        self._threads.append(listener)
        for n in range(self.workers):
            self._threads.append(threading.Thread(target=self._work, name=f"briny-reactor-{n}", daemon=True))
        for thread in self._threads:
            thread.start()
        self._listening.wait(READY_WAIT + 1)
        log.info("reactor (%s bus): %d tag globs, %d workers", self.bus, len(self.reactor.map.entries), self.workers)
        return self

    def _listen(self) -> None:
        with EventListener(self.opts, "*", name=self.bus) as events:
            # proven subscribed before start() returns: an event fired after it is never missed
            if not events.wait_ready(READY_WAIT):
                log.warning(
                    "reactor (%s bus): the bus did not answer within %g s; listening anyway", self.bus, READY_WAIT
                )
            self._listening.set()
            while not self._stop.is_set():
                self._announce_drops()
                got = events.get_event(0.2)
                if got is None:
                    continue
                tag, data = got
                if tag == DROPPED_TAG and data.get("where") == "listener":
                    count = int(data.get("count") or 0)
                    self.missed += count
                    log.error("reactor: the event bus dropped %d events before the reactor saw them", count)
                    self._sender.fire(DROPPED_REACTIONS_TAG, {"count": count, "where": "bus"})
                    continue
                refs = self.reactor.map.refs_for(tag)
                if refs:
                    self._submit(tag, data, refs)

    def _submit(self, tag: str, data: dict[str, Any], refs: list[str]) -> None:
        try:
            self.queue.put_nowait((tag, data, refs))
        except queue.Full:
            self.dropped += 1
            self._announce_drops()

    def _announce_drops(self, force: bool = False) -> None:
        """Fire ``salt/reactor/dropped`` for the reactions dropped since the last notice (at most
        one notice a second; the listener calls this at least every 0.2 s, so none is left unsaid)."""
        pending = self.dropped - self._announced
        now = time.monotonic()
        if not pending or (not force and now - self._last_drop_report < 1.0):
            return
        self._last_drop_report = now
        self._announced = self.dropped
        log.error(
            "reactor: %d reactions waiting (reactor_worker_hwm); dropped %d more (%d in all)",
            self.queue.qsize(),
            pending,
            self.dropped,
        )
        self._sender.fire(DROPPED_REACTIONS_TAG, {"count": pending, "where": "queue"})

    def _work(self) -> None:
        while not self._stop.is_set():
            try:
                tag, data, refs = self.queue.get(timeout=0.2)
            except queue.Empty:
                continue
            try:
                self.reactor.react(tag, data, refs)
            except Exception:
                log.exception("reactor: reacting to %s failed", tag)

    def stop(self, timeout: float = 2.0) -> None:
        """Stop listening and taking reactions (what waits is dropped); wait (bounded) for the
        reactions running now."""
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._announce_drops(force=True)
        self._sender.close()
