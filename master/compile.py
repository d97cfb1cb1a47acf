"""Compiled jobs: the master renders and compiles each targeted minion's states (issue 6).

Owns, for ``state.apply``, ``state.highstate`` and ``state.sls`` jobs, what
goes into each minion's own sealed publish under ``"compiled"``
(``docs/PROTOCOL.md``, "Compiled jobs"):

- ``{"chunks": [...]}``: the low chunks the minion runs as they are (no
  compile on the minion);
- ``{"errors": [...], "retcode": N}``: the render/compile errors (or pillar
  errors, retcode 5) that are that minion's result, as Salt returns them;
- ``{"no_states": "<comment>"}``: the top file gives that minion nothing;
- nothing (``None``): the minion compiles its own states, as it does
  without a master compile.

The compile is the same :class:`~briny.common.state.compiler.StateCompiler` a
minion runs, over a :class:`~briny.common.state.stages.RenderEnv` whose file
client serves the master's ``file_roots`` (listings from the file server),
whose ``grains`` are the grains the minion last sent, whose ``pillar`` is
the minion's pillar from :class:`~briny.master.pillar.MinionPillars` (with a
``pillar=`` override merged over it, as on the minion), and whose ``salt``
is the guarded master-side ``salt``
(:func:`~briny.master.pillar.master_side_mods`, built-in modules only).
Everything the compile may touch goes through one
:class:`~briny.common.state.hostview.HostBoundary` for that minion: pure functions
run on the master; a function that needs the host (``cmd.run``,
``user.info``, a module only the minion has, a built-in one the file roots'
``_modules`` replace on the minion, ...), the ``which`` filter and ``#!py``
SLS never run here.

Opts come in three views (:meth:`MasterCompiler.views`): the compiler and
loader use the master's own config (file roots, extension modules, cachedir,
renderer and Jinja settings: a minion's report never steers them); templates
and the modules they call see the minion's view, built from what the master
took of the config the minion reported (:mod:`briny.common.reported`: no
paths, module locations, sockets, keys or secrets, size-capped). Reading a
key whose value the master does not know for that minion, or a compile
setting the minion has set otherwise, counts as needing the host.

``state_compile`` (master config) chooses: ``minion`` — every minion
compiles itself; ``master`` — always compile here, a host function (or
``#!py``) being a render error for that minion; ``auto`` (default) —
compile here, and when the compile needed the host (see above), let that
minion compile itself (so the result is exactly Salt's).

Results are cached (packed, at most ``state_compile_cache`` of them, the least
recently used going first; equal compiles of several minions are handed out as one
object, which nobody changes) per (minion, function, mods, saltenv, pillarenv, test,
exclude, ``pillar=`` override) and reused while the file roots' signature
(every listed file's path, inode, size, mtime, ctime; listings from the file
server's own change detection), the minion's grains and its pillar are
unchanged. Fallback decisions are cached the same way.

The ``compile`` request (``briny-call state.apply`` on a minion, through
its daemon) gets the same ``compiled`` field for the asking minion only:
:meth:`MasterCompiler.handle_request`, registered on the server as a
blocking handler.

Where it runs: **in the master's worker threads** (the server awaits
:meth:`MasterCompiler.compile_for` through its executor, and runs the
``compile`` request handler there), never on the loop.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
from pathlib import Path
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from briny.common import config
from briny.common.args import publish_args, split_input
from briny.common.digest import data_digest
from briny.common.exceptions import BrinyError, FileServerError
from briny.common.fileclient import LocalFileClient
from briny.common.state.hostview import HostBoundary, OptsView
from briny.common.ids import other_minion
from briny.common.jid import gen_jid
from briny.common.modfolders import VIRTUALNAME_RE
from briny.common.reported import COMPILE_KEYS, JOB_KEYS, ReportedConfig, accept_reported
from briny.common.unpacking import Limits, unpack
from briny.common.wire import pack
from briny.master.fileserver import FileServer
from briny.master.pillar import ALLOWED, MinionPillars, is_pure, master_side_mods

log = logging.getLogger(__name__)

SHARED_RESULTS = 256  # distinct compiles whose one object is kept to hand out again
STATE_FUNS = frozenset({"state.apply", "state.highstate", "state.sls"})
MODES = ("auto", "master", "minion")
EX_STATE_COMPILER_ERROR = 1
PY_HINT = "with state_compile: auto (the default) or minion, the minion compiles such an SLS itself"
_MISSING = object()
GrainsLookup = Callable[[str], Mapping[str, Any] | None]
Compiled = dict[str, Any]


@dataclass(frozen=True)
class StateRequest:
    """What a state job asks for, read from the publish as the minion's ``state`` module reads it."""

    kind: str  # "highstate" or "sls"
    mods: tuple[str, ...]
    saltenv: str | None
    pillarenv: str | None
    test: bool | None
    exclude: tuple[Any, ...]  # SLS globs, or {"id": ...} / {"sls": ...} maps
    pillar: dict[str, Any] | None
    force: bool

    def cache_key(self, minion_id: str, fun: str) -> tuple[Any, ...]:
        return (
            minion_id,
            fun,
            self.kind,
            self.mods,
            self.saltenv,
            self.pillarenv,
            self.test,
            data_digest(list(self.exclude)),
            None if self.pillar is None else data_digest(self.pillar),
            self.force,
        )


# positional parameters of the minion's state functions, in order
_POSITIONAL = {
    "state.apply": ("mods",),
    "state.sls": ("mods", "test", "exclude"),
    "state.highstate": ("test", "exclude"),
}


def parse_request(fun: str, arg: Any, kwarg: Any) -> StateRequest | None:
    """The state request of a publish; None when the master should not compile it (the minion
    then compiles, and answers odd arguments with its own errors)."""
    if fun not in STATE_FUNS or not isinstance(arg, list) or not isinstance(kwarg, dict):
        return None
    args, kwargs = publish_args(arg, {str(k): v for k, v in kwarg.items()})
    names = _POSITIONAL[fun]
    if len(args) > len(names):
        return None
    bound = dict(zip(names, args))
    if set(bound) & set(kwargs):
        return None  # the same argument twice: the minion's TypeError is the answer
    bound.update(kwargs)
    raw = bound.get("mods")
    kind = "sls" if fun == "state.sls" or (fun == "state.apply" and raw) else "highstate"
    if kind == "sls" and not raw:
        return None  # the minion answers a state.sls without SLS with Salt's error
    mods = split_input(raw, str) if kind == "sls" else []
    override = bound.get("pillar")
    if override is not None and not isinstance(override, dict):
        return None  # the minion returns Salt's error for a pillar that is not a map
    saltenv, pillarenv = bound.get("saltenv"), bound.get("pillarenv")
    if (saltenv is not None and not isinstance(saltenv, str)) or (
        pillarenv is not None and not isinstance(pillarenv, str)
    ):
        return None
    test = bound.get("test")
    return StateRequest(
        kind,
        tuple(mods),
        saltenv or None,
        pillarenv or None,
        None if test is None else bool(test),
        tuple(split_input(bound.get("exclude"))),
        override,
        bool(bound.get("force")),
    )


class MasterFileClient(LocalFileClient):
    """The master's ``file_roots`` for a compile: files from disk (first root wins), listings
    from the file server's cached listing (no walk per compile)."""

    def __init__(self, fileserver: FileServer) -> None:
        super().__init__(fileserver.roots, fileserver.followsymlinks)
        self.fileserver = fileserver

    def find(self, path: str, saltenv: str) -> Path | None:
        """The file server's own resolution (its path checks; a gitfs tree's symlinks stay in it)."""
        if (saltenv or "base") not in self.fileserver.roots:
            return None
        found = self.fileserver.resolve(path, saltenv)
        return None if found is None else Path(found[1])

    def list_files(self, saltenv: str) -> list[str]:
        try:
            return list(self.fileserver.listing(saltenv).files)
        except FileServerError:
            return []


@dataclass
class _Entry:
    roots: str
    grains: str
    pillar: str
    result: bytes | None  # the compile, packed (msgpack): a few KB, not a tree of objects


class MasterCompiler:
    """Compiles state jobs per minion and caches them; thread-safe (worker threads)."""

    def __init__(
        self,
        opts: dict[str, Any],
        fileserver: FileServer,
        pillars: MinionPillars,
        grains_of: GrainsLookup,
        opts_of: Callable[[str], ReportedConfig | Mapping[str, Any] | None] | None = None,
    ) -> None:
        self.opts = opts
        self.fileserver = fileserver
        self.pillars = pillars
        self.grains_of = grains_of
        # the config each minion reported at auth: templates see the minion's opts, as in Salt
        self.opts_of = opts_of or (lambda _minion: None)
        self.mine: Any = None  # the master's MineStore (master/mine.py), set by the daemon
        self._custom: tuple[str, frozenset[str]] = ("", frozenset())  # (roots signature, names)
        # compiles actually run, answered from the cache, and left to the minion (tests count
        # them): changed under self._lock only (_count), as compiles run in several worker threads
        self.renders = 0
        self.hits = 0
        self.fallbacks = 0
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[Any, ...], _Entry] = OrderedDict()
        # packed -> (that packed form, the object handed out): the last SHARED_RESULTS distinct compiles
        self._results: OrderedDict[bytes, tuple[bytes, Compiled]] = OrderedDict()
        mode = str(config.setting(opts, "state_compile")).lower()
        if mode not in MODES:
            log.warning("state_compile %r is not one of %s; using auto", mode, ", ".join(MODES))
            mode = "auto"
        self.mode = mode
        self.cache_max = config.count(opts, "state_compile_cache")

    def _count(self, renders: int = 0, fallbacks: int = 0) -> None:
        """Add to the counters (any worker thread): under the lock, so no count is lost."""
        with self._lock:
            self.renders += renders
            self.fallbacks += fallbacks

    def wants(self, fun: Any) -> bool:
        """Whether jobs of ``fun`` are compiled here at all."""
        return self.mode != "minion" and fun in STATE_FUNS

    # -- the ``compile`` request ---------------------------------------------------------------
    def handle_request(self, session: Any, payload: dict[str, Any]) -> dict[str, Any]:
        """The ``compile`` request (worker thread): ``{"compiled": ...}`` for the minion the
        session belongs to, exactly what its publish of ``{"fun", "arg", "kwarg"}`` would carry
        (``None``: the minion compiles itself). There is no way to name another minion: a
        payload carrying ``id``/``minion_id``/``tgt`` other than the sender's is refused."""
        minion_id = session.id
        other = other_minion(payload, minion_id)
        if other is not None:
            log.warning("%s asked for the compiled states of %s; refused", minion_id, other)
            return {"error": f"a minion can get only its own compiled states; {minion_id} cannot get those of {other}"}
        fun, arg, kwarg = payload.get("fun"), payload.get("arg"), payload.get("kwarg")
        arg = [] if arg is None else arg
        kwarg = {} if kwarg is None else kwarg
        if not isinstance(fun, str) or not fun or len(fun) > 255:
            return {"error": "a compile request needs 'fun', a function name"}
        if not isinstance(arg, list) or not isinstance(kwarg, dict):
            return {"error": "'arg' must be a list and 'kwarg' a map"}
        load = {"jid": gen_jid(), "fun": fun, "arg": arg, "kwarg": kwarg}
        compiled = self.compile_for(minion_id, load)
        shown = (
            "the minion compiles"
            if compiled is None
            else f"{len(compiled['chunks'])} chunk(s)"
            if "chunks" in compiled
            else f"{len(compiled.get('errors') or [])} error(s)"
            if "errors" in compiled
            else "no states"
        )
        log.info("compile request from %s for %s: %s", minion_id, fun, shown)
        return {"compiled": compiled}

    def register(self, server: Any) -> None:
        """Serve ``compile`` requests of ``server`` (a MasterServer), in its worker threads."""
        server.register_handler("compile", self.handle_request, blocking=True)

    # -- what a cached result depends on --------------------------------------------------------
    def roots_signature(self) -> str:
        """A digest of the master's ``file_roots`` (worker): every listed file's path and stat.

        Listings come from the file server, which walks again only when a folder changed; each
        listed file is stat'ed (a content change keeps its folder's mtime)."""
        hasher = hashlib.blake2b(digest_size=16)
        for env in self.fileserver.envs():
            try:
                listing = self.fileserver.listing(env)
            except FileServerError:
                continue
            roots = self.fileserver.roots.get(env, [])
            hasher.update(f"\0env\0{env}\0{len(listing.dirs)}".encode("utf-8", "surrogateescape"))
            for rel in listing.files:
                stamp = "-"
                for root in roots:
                    try:
                        st = os.stat(os.path.join(root, rel))
                    except OSError:
                        continue
                    stamp = f"{root}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}\0{st.st_ctime_ns}"
                    break
                hasher.update(f"\0{rel}\0{stamp}".encode("utf-8", "surrogateescape"))
        return hasher.hexdigest()

    # -- compiling -------------------------------------------------------------------------------
    def compile_for(self, minion_id: str, load: dict[str, Any], roots: str | None = None) -> Compiled | None:
        """The ``compiled`` field of ``minion_id``'s publish of ``load`` (worker), or None when
        the minion compiles itself. ``roots`` is :meth:`roots_signature`, computed once per job."""
        fun = str(load.get("fun") or "")
        if not self.wants(fun):
            return None
        request = parse_request(fun, load.get("arg") or [], load.get("kwarg") or {})
        if request is None:
            return None
        try:
            return self._cached(minion_id, fun, request, roots)
        except Exception as exc:  # a compiler bug must not lose the job: say so, or let the minion try
            log.exception("compiling %s for %s on the master failed", fun, minion_id)
            if self.mode == "master":
                return {
                    "errors": [f"The master could not compile the states of {minion_id}: {exc}"],
                    "retcode": EX_STATE_COMPILER_ERROR,
                }
            return None

    def _cached(self, minion_id: str, fun: str, request: StateRequest, roots: str | None) -> Compiled | None:
        roots = roots if roots is not None else self.roots_signature()
        grains = copy.deepcopy(dict(self.grains_of(minion_id) or {}))
        pillar = self.pillars.for_minion(minion_id, request.saltenv, request.pillarenv)
        key = request.cache_key(minion_id, fun)
        report = self.reported(minion_id)
        generation = self.mine.generation if self.mine is not None else 0  # templates may read the mine
        grains_digest = data_digest([grains, report and report.digest, generation])
        pillar_digest = data_digest(pillar)
        with self._lock:
            entry = self._cache.get(key)
            if entry is not None and (entry.roots, entry.grains, entry.pillar) == (roots, grains_digest, pillar_digest):
                self._cache.move_to_end(key)
                self.hits += 1
                kept: bytes | None | object = entry.result
            else:
                kept = _MISSING
        if kept is not _MISSING:
            return None if not isinstance(kept, bytes) else self._shared_result(kept)[1]
        result = self.compile_now(minion_id, request, grains, pillar, roots)
        try:
            packed = None if result is None else pack(result)
        except (TypeError, ValueError, OverflowError) as exc:  # the publish will say so; nothing to keep
            log.warning("the compile of %s for %s cannot be packed (%s); not cached", fun, minion_id, exc)
            return result
        if packed is not None:  # equal compiles of several minions: one packed form, one object
            packed, result = self._shared_result(packed, result)
        with self._lock:
            self._cache[key] = _Entry(roots, grains_digest, pillar_digest, packed)
            self._cache.move_to_end(key)
            while len(self._cache) > self.cache_max:
                self._cache.popitem(last=False)
        return result

    def _shared_result(self, packed: bytes, fresh: Compiled | None = None) -> tuple[bytes, Compiled]:
        """The one packed form and the one object handed out for a compile packed as ``packed``
        (minions whose compiles are equal share them: a highstate of thousands of alike minions
        keeps one tree, not one each, in their publishes waiting for returns, and one packed form
        in the cache); ``fresh`` is that compile when it was just made. Nobody changes what this
        returns (the publish only packs it)."""
        with self._lock:
            shared = self._results.get(packed)
            if shared is not None:
                self._results.move_to_end(packed)
                return shared
        made = (packed, fresh if fresh is not None else unpack(packed, Limits(*(len(packed),) * 4)))
        with self._lock:
            shared = self._results.setdefault(packed, made)
            self._results.move_to_end(packed)
            while len(self._results) > SHARED_RESULTS:
                self._results.popitem(last=False)
        return shared

    def reported(self, minion_id: str) -> ReportedConfig | None:
        """What the master took of ``minion_id``'s reported config (None: it knows none)."""
        got = self.opts_of(minion_id)
        if got is None or isinstance(got, ReportedConfig):
            return got
        return accept_reported(got, minion_id)  # a raw map: the same rule as the server's

    def custom_modules(self, roots: str) -> frozenset[str]:
        """Names of the execution modules the file roots' ``_modules`` give minions (their file
        names and ``__virtualname__``): a minion syncs them before a highstate, so there they
        replace a built-in module of the same name, which the master must not run in their stead.
        Cached per ``roots`` signature."""
        if self._custom[0] == roots and roots:
            return self._custom[1]
        client = MasterFileClient(self.fileserver)
        names: set[str] = set()
        for env in self.fileserver.envs():
            for rel in client.list_files(env):
                folder, _, name = rel.partition("/")
                if folder != "_modules" or "/" in name or not name.endswith(".py"):
                    continue
                names.add(name[:-3])
                try:
                    found = VIRTUALNAME_RE.search(client.get_text(rel, env) or "")
                except (FileServerError, OSError):
                    found = None
                if found:
                    names.add(found.group(1))
        self._custom = (roots, frozenset(names))
        return self._custom[1]

    def views(
        self,
        minion_id: str,
        request: StateRequest,
        grains: dict[str, Any],
        pillar: dict[str, Any],
        report: ReportedConfig | None,
        client: Any,
        boundary: HostBoundary,
    ) -> tuple[OptsView, OptsView, OptsView]:
        """The opts of one compile for ``minion_id``: (what the compiler uses, what templates see,
        what the modules they call see as ``__opts__``).

        The compiler's are the master's own (file roots, extension modules, cachedir,
        renderer...), with the minion's id, grains, pillar and job settings; a read of a compile
        setting whose value this minion reported differently (or did not report) is recorded.
        Templates see the minion's view: what the master took of its reported config
        (:mod:`briny.common.reported`), the compile settings in effect, its id, grains, pillar
        and job settings; a read of a key whose value the master does not know for it (a private
        key, one it refused, any key of a minion that never reported) is recorded.
        """
        master = {k: v for k, v in self.opts.items() if isinstance(k, str) and not k.startswith("__")}
        data = report.data if report is not None else {}
        differing = {k for k in COMPILE_KEYS if report is None or data.get(k, _MISSING) != master.get(k, _MISSING)}
        job: dict[str, Any] = {k: data[k] for k in JOB_KEYS if k in data}
        if request.test is not None:
            job["test"] = request.test
        if request.saltenv:
            job["saltenv"] = request.saltenv
        if request.pillarenv:
            job["pillarenv"] = request.pillarenv
        compiler = OptsView(
            {
                **master,
                **job,
                "id": minion_id,
                "file_client": "remote",
                "state_top": master.get("state_top") or "top.sls",
            },
            boundary=boundary,
            unknown=differing.__contains__,
            listing=False,
            shared={"grains": grains, "pillar": pillar},
        )
        seen = {k: v for k, v in data.items() if k not in COMPILE_KEYS}
        seen.update({k: master[k] for k in COMPILE_KEYS if k in master})
        seen.update(job, id=minion_id)

        def unknown(key: str) -> bool:
            if key in ("id", "grains", "pillar") or key in job:
                return False
            if report is None:
                return True
            if key in COMPILE_KEYS:
                return key in differing
            return not report.knows(key)

        shared = {"grains": grains, "pillar": pillar}
        templates = OptsView(seen, boundary=boundary, unknown=unknown, shared=shared)
        modules = OptsView(seen, boundary=boundary, unknown=unknown, shared=shared)
        return compiler, templates, modules

    def compile_now(
        self,
        minion_id: str,
        request: StateRequest,
        grains: dict[str, Any],
        pillar: dict[str, Any],
        roots: str | None = None,
    ) -> Compiled | None:
        """Render and compile now (no cache); see the module docstring for the result."""
        from briny.common.state.compiler import StateCompiler  # Jinja and the compiler: only now
        from briny.common.pillar import EX_PILLAR_FAILURE, pillar_errors, with_override
        from briny.common.state.stages import RenderEnv
        from briny.common import wire

        errors = pillar_errors(pillar, request.force)
        if errors is not None:
            return {"errors": errors, "retcode": EX_PILLAR_FAILURE}
        if request.pillar is not None:
            pillar = with_override(pillar, request.pillar)
        custom = self.custom_modules(roots if roots is not None else self.roots_signature())
        boundary = HostBoundary(
            minion_id,
            "the states",
            lambda key: is_pure(key) and key.partition(".")[0] not in custom,
            ALLOWED,
            code_hint=PY_HINT,
        )
        client = MasterFileClient(self.fileserver)
        opts, template_opts, module_opts = self.views(
            minion_id, request, grains, pillar, self.reported(minion_id), client, boundary
        )
        mine = self.mine.reader(minion_id) if self.mine is not None else None
        salt = master_side_mods(module_opts, grains, pillar, boundary, client, mine)
        env = RenderEnv(
            opts=opts,
            client=client,
            salt=salt,
            grains=grains,
            pillar=pillar,
            template_opts=template_opts,
            boundary=boundary,
        )
        self._count(renders=1)
        compiler = StateCompiler(env)
        exclude = list(request.exclude) or None
        if request.kind == "sls":
            compiled = compiler.for_sls(list(request.mods), request.saltenv or opts.get("saltenv") or "base", exclude)
        else:
            compiled = compiler.for_highstate(exclude)
        needs_host = boundary.needs
        if needs_host and self.mode == "auto":
            self._count(fallbacks=1)
            log.info("%s compiles its own states: a template needs its host (%s)", minion_id, ", ".join(needs_host[:5]))
            return None
        if compiled.no_states:
            log.info("compiled %s for %s on the master: %s", request.kind, minion_id, compiled.no_states)
            return {"no_states": compiled.no_states}
        if compiled.errors:
            log.info("compiled %s for %s on the master: %d error(s)", request.kind, minion_id, len(compiled.errors))
            return {"errors": [str(e) for e in compiled.errors], "retcode": EX_STATE_COMPILER_ERROR}
        chunks = compiled.chunks
        try:
            if wire.unpack(wire.pack(chunks)) != chunks:
                raise ValueError("the chunks change on the wire")
        except (TypeError, ValueError, OverflowError, BrinyError) as exc:
            if self.mode == "auto":
                log.info("%s compiles its own states: its chunks do not travel as they are (%s)", minion_id, exc)
                self._count(fallbacks=1)
                return None
            return {
                "errors": [f"The compiled states of {minion_id} cannot be sent: {exc}"],
                "retcode": EX_STATE_COMPILER_ERROR,
            }
        log.info("compiled %s for %s on the master: %d chunk(s)", request.kind, minion_id, len(chunks))
        return {"chunks": chunks}
