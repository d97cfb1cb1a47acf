"""The requisite engine: run compiled low chunks exactly as Salt 3007 does.

Owns the run of one job's low chunks, as the compiler leaves them (with
``*_in`` and ``use`` already applied by
:func:`briny.common.state.highdata.requisite_in`), with Salt 3007.17's algorithm
(its ``call_chunk``), quirks included: chunks in compile order; each one is
judged on its requisites' results, and while some have not run, they are
pulled first (kind by kind in Salt's list, then as written, a prereq's
requirers last), and the chunk is judged again. A pulled chunk that was
already started in this pull closes a loop ("Recursive requisite found");
one that only waits on a prereq's test run makes Salt test-run the puller in
its place. Then ``prereq`` test runs, ``mod_watch``, ``failhard``,
``fire_event`` and the ``listen`` pass at the end. Each chunk's turn is a
generator driven from an explicit stack (no recursion, no depth limit).
Where Salt recurses without end (a RecursionError ends its run), briny stops
the third time a chunk is pulled again in the same mode and calls it a loop
(docs/FIDELITY.md, "Requisite loops"). Calling one state is
:mod:`briny.common.state.state_call`'s job. Plain code, no sockets: the minion and
``briny-call --local`` both call :func:`run_low_chunks`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..gcpause import frozen_heap
from .requisites import (
    GATING,
    WATCH_AS_REQUIRE,
    DependencyGraph,
    LowChunk,
    Req,
    compile_key,
    describe,
    gen_tag,
    missing_comment,
    status_from,
    target_stats,
)
from .runcontext import RunContext
from .state_call import RunState, call_state, fake_timing, mod_init, sub_state_results

log = logging.getLogger(__name__)

_RUN_KINDS: tuple[Req, ...] = GATING + (Req.PREREQUIRED,)
# Keys dropped from a chunk that becomes a listener's mod_watch call
_LISTENER_DROP = frozenset(r.key for r in Req) | {"onfail_stop"}

SKIP_COMMENTS = {
    "onfail": "State was not run because onfail req did not change",
    "onchanges": "State was not run because none of the onchanges reqs changed",
    "skip_req": "State was not run because requisites were skipped by another state",
}


# Salt's order for pulling a state's requisites that have not run yet: the gating kinds but
# ``onfail_all`` (Salt waits on it without pulling it)
_PULL_ORDER: tuple[Req, ...] = tuple(k for k in GATING if k is not Req.ONFAIL_ALL)
# Salt gives up re-checking a state whose requisites stay unmet after this many tries
_MAX_RECHECKS = 20
RECURSIVE = "Recursive requisite found"
_REENTRIES = 3


@dataclass(frozen=True)
class Pull:
    """What a state's run asks of the driver: run chunk ``idx`` (``depth``: re-checks so far) first."""

    idx: int
    depth: int = 0


def run_low_chunks(chunks: list[dict[str, Any]], ctx: RunContext) -> dict[str, dict[str, Any]]:
    """Run low chunks (as ``state.show_low_sls`` prints them) in the run context ``ctx`` (its
    loaders, test flag, job: :mod:`briny.common.state.runcontext`) and return Salt's result dict.

    The chunks and the graph built from them are moved out of the cyclic
    collector's reach for the run (``gc.freeze``): they live until the run
    ends anyway, and rescanning them on every collection made large runs
    grow faster than linearly. Garbage the states make is still collected.
    """
    engine = Engine(chunks, ctx)
    with frozen_heap():
        return engine.run()


class Engine:
    """One run of a list of low chunks."""

    def __init__(self, chunks: list[dict[str, Any]], ctx: RunContext) -> None:
        unique: dict[str, LowChunk] = {}
        for low in sorted(chunks, key=compile_key):  # Salt runs (and matches targets in) this order
            unique.setdefault(gen_tag(low), low)
        self.chunks = list(unique.values())
        self.tags = list(unique)
        self.graph = DependencyGraph(self.chunks)
        self.ctx = ctx
        self.run_state = RunState(ctx=ctx, chunks=self.chunks)
        self.running = self.run_state.running
        self.pre: dict[int, dict[str, Any]] = {}  # prereq test runs (Salt's ``self.pre``)
        self.as_prereq: set[int] = set()  # chunks whose next run is a prereq test run (``__prereq__``)
        self.prerequired: set[int] = set()  # chunks pulled as a prereq's requirer (``__prerequired__``)
        self.active: set[int] = set()  # chunks started since the current top-level chunk
        self.looped: set[int] = set()  # chunks whose endless pulling briny cut short
        self.path: list[tuple[int, tuple[int, bool] | None]] = []  # chunks being run, outermost first
        self.entered: Counter[tuple[int, bool]] = Counter()  # (chunk, as prereq) pulled on the path
        self.stopped = False
        self._mod_watch: dict[str, bool] = {}
        self.pending: dict[int, Future[dict[str, Any]]] = {}  # parallel states still running
        self._pool: ThreadPoolExecutor | None = None

    # -- the run ------------------------------------------------------------
    def run(self) -> dict[str, dict[str, Any]]:
        log.debug("running %d state(s)%s", len(self.chunks), " in test mode" if self.run_state.test else "")
        # Salt 3007 walks the chunks in compile order (order, then state+name+fun) and
        # pulls each one's requisites first, kind by kind, in the order they are listed
        try:
            for idx in range(len(self.chunks)):
                if self.tags[idx] not in self.running:
                    self._pull(idx)
                    if self.stopped or self._failhard(idx):
                        break
                self.active = set()
            for idx in list(self.pending):  # the run ends when its parallel states have
                self._settle(idx)
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
        self._listen()
        log.debug("state run done: %d result(s)", len(self.running))
        return self.running

    def _pull(self, first: int) -> None:
        """Run chunk ``first`` as Salt does, with an explicit stack instead of recursion: each
        chunk's run (:meth:`_chunk`) is a generator that yields a :class:`Pull` for each chunk it
        needs run first and resumes when that one is done."""
        self.path = []
        self.entered = Counter()
        stack = [self._start(Pull(first))]
        while stack:
            try:
                need = next(stack[-1])
            except StopIteration:
                stack.pop()
                idx, entry = self.path.pop()
                if entry is not None:
                    self.entered[entry] -= 1
                continue
            stack.append(self._start(need))

    def _start(self, pull: Pull) -> Iterator[Pull]:
        entry = (pull.idx, pull.idx in self.as_prereq) if pull.depth == 0 else None
        if entry is not None:
            self.entered[entry] += 1
        self.path.append((pull.idx, entry))
        return self._chunk(pull.idx, pull.depth)

    def _reentered(self, t: int) -> bool:
        """Pulling ``t`` again, in the mode it is already being run in further up, for the
        ``_REENTRIES``-th time: such a pull repeats itself, and Salt recurses until Python's stack
        runs out (a RecursionError ends its run); briny calls it a loop. (Pulled once or twice
        again, a chunk can still come back: Salt's prereq checks do that.)"""
        return self.entered[(t, t in self.as_prereq)] >= _REENTRIES

    def _chunk(self, idx: int, depth: int) -> Iterator[Pull]:
        """One chunk's turn (Salt's ``call_chunk``): judge its requisites; when some have not run
        yet, pull them (a chunk already started in this pull means a loop), then judge again."""
        if idx in self.looped:  # what briny cut short stays so (Salt never comes back there)
            return
        low = self.chunks[idx]
        mod_init(self.run_state, low)
        deps = self.graph.deps[idx]
        if not low.get("prerequired"):  # Salt does not track prereq targets as started
            self.active.add(idx)
        self._settle_targets(idx)
        if deps.missing:
            self._pull_targets(idx)  # Salt marks the targets it found on the way (itself too)
            ret = self._synthetic(low, False, missing_comment(deps.missing, self._has_mod_watch(low["state"])))
            if idx in self.as_prereq:
                self.pre[idx] = ret
            else:
                self._store(idx, ret)
            return
        buckets = self._buckets(idx)
        status = self._status(buckets) if buckets else "met"
        if status != "unmet":
            self._decide(idx, status, buckets)
            return
        last = None
        for t in self._pull_targets(idx):
            last = t
            if self.tags[t] in self.running:
                continue
            if t in self.active:
                if t in self.prerequired:
                    # the requirer of a prereq met again: Salt test-runs this chunk in its place
                    if idx not in self.pre:
                        self.pre[t] = call_state(self.run_state, low, prereq=True)
                        self.as_prereq.discard(idx)
                    return
                self._recursive(idx, t)
                return
            if self._reentered(t):
                self.looped.add(idx)
                self._recursive(idx, t)
                return
            yield Pull(t)
            if self._failhard(t):
                self.stopped = True
                return
        if idx in self.as_prereq:
            status = self._status(self._buckets(idx))
            ret = call_state(self.run_state, low, prereq=True)
            self.as_prereq.discard(idx)
            if not ret.get("changes") and status == "change":
                ret["changes"] = {"watch": "watch"}
                ret["result"] = None
            self.pre[idx] = ret
        elif depth + 1 >= _MAX_RECHECKS:
            self._recursive(idx, None)
        else:
            yield Pull(idx, depth + 1)
        if last is not None and self._failhard(last):
            self.stopped = True

    def _pull_targets(self, idx: int) -> list[int]:
        """The requisites to run before ``idx``, in Salt's order, marking prereq targets for a test
        run and prereq requirers as such (Salt marks them on the chunk, for good)."""
        deps = self.graph.deps[idx].by_kind
        watch_ok = self._has_mod_watch(self.chunks[idx]["state"])
        kinds = list(_PULL_ORDER)
        if not watch_ok:  # Salt folds watch into require first
            kinds = [Req.REQUIRE, Req.WATCH, Req.REQUIRE_ANY, Req.WATCH_ANY] + kinds[4:]
        if idx not in self.as_prereq:
            kinds.append(Req.PREREQUIRED)
        out: list[int] = []
        for kind in kinds:
            targets = deps.get(kind, ())
            if kind is Req.PREREQ:
                self.as_prereq.update(targets)
            elif kind is Req.PREREQUIRED:
                self.prerequired.update(targets)
            out.extend(targets)
        return out

    # -- deciding -----------------------------------------------------------
    def _has_mod_watch(self, state: str) -> bool:
        if state not in self._mod_watch:
            self._mod_watch[state] = f"{state}.mod_watch" in self.run_state.states
        return self._mod_watch[state]

    def _buckets(self, idx: int) -> dict[Req, list[int]]:
        """Requisite targets per kind; ``watch`` is ``require`` without ``mod_watch``; a prereq
        test run does not wait for its requirers."""
        deps = self.graph.deps[idx]
        watch_ok = self._has_mod_watch(self.chunks[idx]["state"])
        as_prereq = idx in self.as_prereq
        if watch_ok and (not as_prereq or Req.PREREQUIRED not in deps.by_kind):
            return deps.by_kind
        out: dict[Req, list[int]] = {}
        for kind, targets in deps.by_kind.items():
            if kind is Req.PREREQUIRED and as_prereq:
                continue
            eff = kind if watch_ok else WATCH_AS_REQUIRE.get(kind, kind)
            out.setdefault(eff, []).extend(targets)
        return {k: out[k] for k in _RUN_KINDS if k in out}

    def _result_of(self, t: int, kind: Req) -> dict[str, Any] | None:
        if kind is Req.PREREQ:
            return self.pre.get(t)
        return self.running.get(self.tags[t])

    def _status(self, buckets: dict[Req, list[int]]) -> str:
        fun_stats: set[str] = set()
        for kind, targets in buckets.items():
            stats: set[str] = set()
            for t in targets:
                r = self._result_of(t, kind)
                if r is None:
                    stats.add("unmet")
                    continue
                stats |= target_stats(kind, r)
            if kind.is_any:
                if stats & {"met", "change"}:
                    stats.discard("fail")
                if "onchangesmet" in stats:
                    stats.discard("onchanges")
                    stats.discard("fail")
                if "onfail" in stats and "met" in stats:
                    stats.discard("onfail")
            if kind.is_all_onfail and "onfail" in stats and "met" in stats:
                stats.discard("met")
            fun_stats |= stats
        return status_from(fun_stats)

    # -- acting -------------------------------------------------------------
    def _decide(self, idx: int, status: str, buckets: dict[Req, list[int]]) -> None:
        """Act on a judged chunk as Salt does for each status."""
        low = self.chunks[idx]
        as_prereq = idx in self.as_prereq
        if status == "fail":
            self._fail(idx, buckets)
        elif status == "change" and not as_prereq:
            reqs = {k.key: [self.chunks[t] for t in ts] for k, ts in buckets.items()}
            if low.get("parallel"):
                self._launch(idx, lambda run: _state_then_watch(run, low, reqs))
            else:
                self._store(idx, _state_then_watch(self.run_state, low, reqs))
        elif status == "pre":
            ret = self._synthetic(low, True, "No changes detected")
            self.pre[idx] = ret
            self._store(idx, ret)
        elif status in SKIP_COMMENTS:
            self._store(idx, self._synthetic(low, True, SKIP_COMMENTS[status], ran=False))
        elif as_prereq:
            self.pre[idx] = call_state(self.run_state, low, prereq=True)
            self.as_prereq.discard(idx)
        elif low.get("parallel"):
            self._launch(idx, lambda run: call_state(run, low))
        else:
            self._store(idx, call_state(self.run_state, low))

    # -- parallel states ------------------------------------------------------
    def _launch(self, idx: int, work: Callable[[RunState], dict[str, Any]]) -> None:
        """Start a ``parallel: True`` state in a thread of its own and go on, as Salt starts it in
        a process of its own. Its result takes its run number now; what the state returns, with
        ``__parallel__``, fills it in when something needs it (:meth:`_settle`)."""
        low = self.chunks[idx]
        ret: dict[str, Any] = {"name": low["name"], "result": None, "changes": {}, "comment": "Started in a thread"}
        ret["__sls__"] = low.get("__sls__")
        ret["__run_num__"] = self.run_state.next_run_num()
        ret.update(fake_timing())
        ret["__id__"] = low["__id__"]
        self.running[self.tags[idx]] = ret
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                max_workers=sum(1 for c in self.chunks if c.get("parallel")) or 1, thread_name_prefix="briny-parallel"
            )
        log.debug("State [%s] started in parallel", low["name"])
        self.pending[idx] = self._pool.submit(self._in_thread, work, self.run_state.for_thread())

    @staticmethod
    def _in_thread(work: Callable[[RunState], dict[str, Any]], state: RunState) -> dict[str, Any]:
        """A parallel state's thread: run it, then release the loaders made for it."""
        try:
            return work(state)
        finally:
            state.ctx.release_thread()

    def _settle(self, idx: int) -> None:
        """Wait for the parallel state ``idx`` (when it runs) and fill in its result."""
        future = self.pending.pop(idx, None)
        if future is None:
            return
        got = future.result()
        got.pop("__run_num__", None)
        ret = self.running[self.tags[idx]]
        ret.update(got)
        ret["__parallel__"] = True
        self._store(idx, ret)

    def _settle_targets(self, idx: int) -> None:
        """Salt waits for the parallel states a state's requisites name before judging them."""
        if not self.pending:
            return
        for targets in self.graph.deps[idx].by_kind.values():
            for t in targets:
                if t in self.pending:
                    self._settle(t)

    def _fail(self, idx: int, buckets: dict[Req, list[int]]) -> None:
        low = self.chunks[idx]
        ret = self.pre.get(idx)
        if ret is not None:
            # a prereq target whose requirer failed shows its test run, without the changes
            # (Salt shows that very result, so it is the same record in both places)
            if ret.get("changes"):
                ret["changes"] = {}
            ret["__run_num__"] = self.run_state.next_run_num()
            for key in ("__sls__", "__id__", "name"):
                ret[key] = low.get(key)
            self._store(idx, ret)
            return
        failed: dict[str, None] = {}
        for targets in buckets.values():
            for t in targets:
                r = self.pre[t] if t in self.pre else self.running.get(self.tags[t])
                if r is not None and r.get("result") is False:
                    failed[describe(self.chunks[t])] = None
        ret = self._synthetic(low, False, f"One or more requisite failed: {', '.join(failed)}")
        self.pre[idx] = ret
        self._store(idx, ret)

    def _recursive(self, idx: int, target: int | None) -> None:
        """Salt's "Recursive requisite found" for ``idx``; briny adds the loop it closed, starting
        at ``idx`` (each one requires the next). Salt does not count a run number for the one that
        gave up re-checking (``target`` None), so neither does briny."""
        low = self.chunks[idx]
        comment = RECURSIVE
        if target is not None:
            on_path = [i for i, _ in self.path]
            if target in on_path:
                between = dict.fromkeys(on_path[on_path.index(target) : -1])
                loop = [idx, *(i for i in between if i != idx), idx]
            else:  # started earlier in this pull, and still waiting on a prereq test run
                loop = [idx, target]
            path = " -> ".join(describe(self.chunks[i]) for i in loop)
            comment = f"{RECURSIVE}: {path}"
        log.error("%s for state %s", comment, describe(low))
        run_num = self.run_state.run_num
        if target is not None:
            self.run_state.next_run_num()
        ret = {"changes": {}, "result": False, "comment": comment, "__run_num__": run_num}
        for key in ("__sls__", "__id__", "name"):
            ret[key] = low.get(key)
        self._store(idx, ret)

    def _synthetic(self, low: LowChunk, result: bool, comment: str, ran: bool | None = None) -> dict[str, Any]:
        """The result of a state its requisites decided, in Salt's key order."""
        timing = fake_timing()
        ret: dict[str, Any] = {"changes": {}, "result": result, "duration": timing["duration"]}
        ret["start_time"] = timing["start_time"]
        ret["comment"] = comment
        if ran is not None:
            ret["__state_ran__"] = ran
        ret["__run_num__"] = self.run_state.next_run_num()
        ret["__sls__"] = low.get("__sls__")
        ret["__id__"] = low["__id__"]
        ret["name"] = low["name"]
        log.debug("State [%s] not run: %s", low["name"], comment)
        return ret

    def _store(self, idx: int, ret: dict[str, Any]) -> None:
        self._store_tagged(self.tags[idx], self.chunks[idx], ret)

    def _store_tagged(self, tag: str, low: LowChunk, ret: dict[str, Any]) -> None:
        """Record a result, fire its event, then show each ``sub_state_run`` entry as a state of
        its own, as Salt does (the event carries the entries, as Salt's)."""
        self.running[tag] = ret
        if "sub_state_run" not in ret:
            self._event(low, ret)
            return
        self._event(low, dict(ret))
        for sub_tag, sub in sub_state_results(self.run_state, low, ret):
            self.running[sub_tag] = sub

    def _failhard(self, idx: int) -> bool:
        if self.ctx.test:
            return False
        low = self.chunks[idx]
        ret = self.running.get(self.tags[idx])
        if ret is None or not low.get("failhard", self.ctx.failhard):
            return False
        return ret.get("result") is False

    def _event(self, low: LowChunk, ret: dict[str, Any]) -> None:
        send = self.ctx.fire_event
        if send is None:
            return
        jid, minion = self.ctx.jid, self.ctx.minion_id
        fire = low.get("fire_event")
        if fire is True:
            send(f"salt/state_result/{jid}/{minion}/{ret.get('name', low['name'])}", {"ret": ret})
        elif isinstance(fire, str) and fire:
            send(f"salt/state_result/{jid}/{minion}/{fire}", {"ret": ret})
        elif self.ctx.state_events:
            send(f"salt/job/{jid}/prog/{minion}/{ret.get('__run_num__')}", {"ret": ret, "len": len(self.chunks)})

    # -- listen ---------------------------------------------------------------
    def _listen(self) -> None:
        """Salt's listen pass: ``mod_watch`` of listeners whose targets changed, at the end."""
        by_state_key: dict[tuple[str, str], list[int]] = {}
        by_id_or_name: dict[str, int] = {}
        listeners: list[tuple[tuple[str, str], list[Any]]] = []
        for i, low in enumerate(self.chunks):
            for val in {str(low["__id__"]), str(low["name"])}:
                by_state_key.setdefault((low["state"], val), []).append(i)
            by_id_or_name[str(low["__id__"])] = i
            by_id_or_name[str(low["name"])] = i
            if isinstance(low.get("listen"), list):
                listeners.append(((low["state"], str(low["__id__"])), low["listen"]))
            if isinstance(low.get("listen_in"), list):
                for item in low["listen_in"]:
                    if isinstance(item, dict):
                        for key, val in item.items():
                            listeners.append(((str(key).split(".", 1)[0], str(val)), [{low["state"]: low["__id__"]}]))
        if not listeners:
            return
        watchers: dict[str, LowChunk] = {}
        errors: dict[str, dict[str, Any]] = {}
        for (lstate, lid), refs in listeners:
            for ref in refs:
                if not isinstance(ref, dict):
                    hit = by_id_or_name.get(str(ref))
                    if hit is None:
                        continue
                    ref = {self.chunks[hit]["state"]: self.chunks[hit]["__id__"]}
                for tkey, tval in ref.items():
                    tkey = str(tkey).split(".", 1)[0]
                    targets = by_state_key.get((tkey, str(tval)))
                    if not targets:
                        errors[_listen_error_tag(tkey, tval)] = _listen_error(tkey, tval)
                        continue
                    for t in targets:
                        tret = self.running.get(self.tags[t])
                        if tret is None or not tret.get("changes"):
                            continue
                        mine = by_state_key.get((lstate, lid))
                        if not mine:
                            errors[_listen_error_tag(lstate, lid)] = _listen_error(lstate, lid)
                            continue
                        for m in mine:
                            low = {k: v for k, v in self.chunks[m].items() if k not in _LISTENER_DROP}
                            low["sfun"] = low["fun"]
                            low["fun"] = "mod_watch"
                            low["__id__"] = f"listener_{low['__id__']}"
                            watchers.setdefault(gen_tag(low), low)
        for tag, low in watchers.items():
            self._store_tagged(tag, low, call_state(self.run_state, low))
        for tag, err in errors.items():
            err["__run_num__"] = self.run_state.next_run_num()
            self.running[tag] = err


def _state_then_watch(run: RunState, low: LowChunk, reqs: dict[str, list[LowChunk]]) -> dict[str, Any]:
    """A state whose watched requisites changed: the state, then its ``mod_watch`` when the state
    itself changed nothing (and did not ask to skip it)."""
    ret = call_state(run, low)
    if not ret.get("changes") and not ret.get("skip_watch", False):
        watch_low = dict(low)
        watch_low["sfun"] = low["fun"]
        watch_low["fun"] = "mod_watch"
        watch_low["__reqs__"] = reqs
        ret = call_state(run, watch_low)
    return ret


def _listen_error_tag(state: str, id_: Any) -> str:
    return f"Listen_Error_|-listen_{id_}_|-listen_{state}_|-Listen_Error"


def _listen_error(state: str, id_: Any) -> dict[str, Any]:
    return {
        "comment": f"Referenced state {state}: {id_} does not exist",
        "name": f"listen_{state}:{id_}",
        "result": False,
        "changes": {},
    }
