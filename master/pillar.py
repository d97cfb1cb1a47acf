"""Each minion's pillar, compiled on the master from the master's ``pillar_roots``.

Owns the master's half of pillar (issue 6, ``docs/PROTOCOL.md``): for one
minion, the pillar top file and SLS of the master's ``pillar_roots`` are
rendered with that minion's cached grains (what it last sent in its
``grains`` request) and the master's opts with ``id`` set to the minion's
id, by :class:`briny.common.pillar.PillarCompiler` over a
:class:`~briny.common.fileclient.LocalFileClient` of ``pillar_roots``. Render
problems never raise: they come back under ``_errors`` (state runs on the
minion refuse to start on them, as they do masterless).

Templates may call execution functions through ``salt[...]``, but on the
master only the pure ones (:data:`PURE_FUNCTIONS`: readers of the minion's
grains and pillar and of the config, matchers, ``slsutil`` merges, the
master's file server listings and a few path helpers), by every path: the
``salt`` templates see and the ``__salt__`` of the modules they call are a
:class:`~briny.common.state.hostview.SaltFunctions` guarded by a
:class:`~briny.common.state.hostview.HostBoundary`, built from the built-in
modules only (never a custom module folder). Any other function
(``cmd.run``, ``user.info``, ``pkg.version``, ...) is refused with a render
error naming it: it would otherwise run on the master, with the master's
privileges, for a minion. So are host-reading Jinja filters (``which``) and
``#!py`` pillar files, which would run Python in the master: refused unless
the master config sets ``pillar_allow_py: True`` (for the operator's own
trusted pillar code). Salt would run all of these on the master; briny
deliberately does not. Pillar templates see the master's config as
``opts`` (with the minion's ``id``), as in Salt, as a deep copy.

Compiled pillars are cached per (minion, pillar environment); an entry is
used again only while the pillar tree (every file and folder under the
roots: path, mtime, size) and the minion's grains (a digest) are unchanged.

Where it runs: **in the master's worker threads**. The ``pillar`` request
handler is registered as blocking (:meth:`MasterServer.register_handler`),
so compiles never run on the asyncio loop; several minions compile at
once, one compile at a time per minion and environment.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from briny.common import loader
from briny.common.digest import data_digest
from briny.common.exceptions import WireError
from briny.common.fileclient import FileClient
from briny.common.state.hostview import HostBoundary, OptsView, SaltFunctions
from briny.common.ids import other_minion
from briny.common.jobcontext import JobContext, MasterRequest
from briny.common.reported import is_env_name
from briny.master.pillarcache import PillarFiles

log = logging.getLogger(__name__)

# Execution functions a template may call on the master: they read the minion's grains, pillar
# and config, match, merge data or list the master's file server, and change nothing on any host.
# Exact names: a function added to one of these modules is not pure until it is listed here.
PURE_FUNCTIONS: frozenset[str] = frozenset(
    {
        "grains.get",
        "grains.item",
        "grains.items",
        "grains.ls",
        "grains.has_value",
        "grains.equals",
        "grains.filter_by",
        "pillar.get",
        "pillar.fetch",
        "pillar.item",
        "pillar.items",
        "pillar.data",
        "pillar.raw",
        "pillar.keys",
        "pillar.ls",
        "pillar.obfuscate",
        "pillar.filter_by",
        "pillar.file_exists",  # in pillar_roots: the master's for pillar; a state compile reads the minion's
        "config.get",
        "config.option",
        "config.items",
        "config.valid_fileproto",
        "config.dot_vals",
        "match.compound",
        "match.glob",
        "match.pcre",
        "match.list",
        "match.grain",
        "match.grain_pcre",
        "match.pillar",
        "match.pillar_pcre",
        "match.pillar_exact",
        "match.ipcidr",
        "match.nodegroup",
        "match.data",
        "match.ifelse",
        "match.search_by",
        "match.filter_by",
        "slsutil.update",
        "slsutil.merge",
        "slsutil.merge_all",
        "slsutil.boolstr",
        "slsutil.banner",
        "slsutil.serialize",
        "slsutil.deserialize",
        # renders with this same guarded salt and boundary; a local file (the minion's host) is refused
        "slsutil.renderer",
        "slsutil.file_exists",
        "slsutil.dir_exists",
        "slsutil.path_exists",
        "slsutil.findup",
        "cp.list_master",
        "cp.list_master_dirs",
        "cp.list_states",
        "mine.get",  # the master's own mine store, as this minion's mine.get reads it (master/mine.py)
        "defaults.get",  # salt://<formula>/defaults.yaml|json: the master's file roots
        "defaults.merge",
        "defaults.update",
        "defaults.deepcopy",
        "file.dirname",
        "file.basename",
        "file.join",
    }
)
# for messages: what templates rendered on the master may call
ALLOWED = (
    "the pure functions (grains.get/item/items/ls/has_value/equals/filter_by, pillar.get and "
    "its readers, config.get/option/items/dot_vals, match.*, slsutil merges, serializers, renderer, "
    "banner and file server checks, defaults.*, mine.get, cp.list_master/list_master_dirs/list_states, "
    "file.dirname/basename/join)"
)
PY_HINT = (
    "pillar_allow_py: True in the master config allows #!py pillar files (for the operator's own trusted pillar code)"
)
GrainsLookup = Callable[[str], Mapping[str, Any] | None]


def is_pure(key: str) -> bool:
    """Whether ``mod.fun`` may run on the master for a minion."""
    return key in PURE_FUNCTIONS


def master_side_mods(
    module_opts: OptsView,
    grains: dict[str, Any],
    pillar: dict[str, Any],
    boundary: HostBoundary,
    file_client: FileClient,
    mine: MasterRequest | None = None,
) -> SaltFunctions:
    """A minion's ``salt`` on the master: the built-in execution modules (never a custom module
    folder) with ``module_opts``, ``grains`` and ``pillar`` as their dunders, behind
    ``boundary``; the modules' own ``__salt__`` is the same guarded object, so a pure function
    cannot reach another one either. ``file_client`` is what their ``__job__`` lists and reads
    (``cp.list_master``: the master's file roots); ``mine`` answers that minion's ``mine.get``
    from the master's own store (:meth:`briny.master.mine.MineStore.reader`)."""
    job = JobContext(file_client=file_client, mine=mine)
    mods = loader.minion_mods(module_opts, grains, pillar, extra_dirs=[], job=job)
    salt = SaltFunctions(mods, boundary)
    mods.pack["__salt__"] = salt
    return salt


def check_env(value: Any, what: str) -> str | None:
    """``None`` or a valid environment name; WireError for anything else."""
    if value is None or value == "":
        return None
    if not is_env_name(value):
        raise WireError(f"'{what}' must be an environment name (letters, digits, . _ - @ +), not {str(value)[:40]!r}")
    return value


@dataclass
class _Entry:
    tree: str
    grains: str
    pillar: dict[str, Any]


class MinionPillars:
    """Compiles and caches each minion's pillar (worker threads; thread-safe).

    ``grains_of`` gives a minion's cached grains (the server's
    :class:`~briny.master.grainscache.GrainsCache` ``get``, safe from any thread); a minion the
    master has no grains for is compiled with ``{}``.
    """

    def __init__(self, opts: dict[str, Any], grains_of: GrainsLookup) -> None:
        self.opts = opts
        self.grains_of = grains_of
        self.mine: Any = None  # the master's MineStore (master/mine.py), set by the daemon
        self.files = PillarFiles(opts)  # the pillar each minion last fetched, on disk (cache.pillar)
        self.fire: Any = None  # the master's fire(tag, data) (thread-safe), set by the daemon
        self.hits = 0
        self.compiles = 0
        self._lock = threading.Lock()
        self._entries: dict[tuple[str, str | None], _Entry] = {}
        self._compiling: dict[tuple[str, str | None], threading.Lock] = {}

    # -- what a cached entry depends on ------------------------------------------------------
    def _roots(self) -> list[str]:
        roots: list[str] = []
        for dirs in (self.opts.get("pillar_roots") or {}).values():
            for root in dirs or []:
                if str(root) not in roots:
                    roots.append(str(root))
        return roots

    def tree_signature(self) -> str:
        """A digest of every file and folder under ``pillar_roots`` (path, mtime, size)."""
        follow = bool(self.opts.get("fileserver_followsymlinks", True))
        hasher = hashlib.blake2b(digest_size=16)
        for root in self._roots():
            hasher.update(b"\0root\0" + root.encode("utf-8", "surrogateescape"))
            for dirpath, dirnames, filenames in os.walk(root, followlinks=follow):
                dirnames.sort()
                for name in [*dirnames, *sorted(filenames)]:
                    path = os.path.join(dirpath, name)
                    try:
                        st = os.stat(path) if follow else os.lstat(path)
                    except OSError:
                        continue
                    hasher.update(f"\0{path}\0{st.st_mtime_ns}\0{st.st_size}".encode("utf-8", "surrogateescape"))
        return hasher.hexdigest()

    # -- compiling -----------------------------------------------------------------------------
    def minion_opts(self, minion_id: str, grains: dict[str, Any], pillarenv: str | None) -> dict[str, Any]:
        """The master's opts as a minion's templates see them (``id`` is the minion's)."""
        from briny.common.pillar import render_opts

        opts = render_opts({k: v for k, v in self.opts.items() if not k.startswith("__")}, pillarenv)
        opts["id"] = minion_id
        opts["grains"] = grains
        return opts

    def compile_now(self, minion_id: str, grains: dict[str, Any], pillarenv: str | None = None) -> dict[str, Any]:
        """Render ``minion_id``'s pillar now (no cache); errors under ``_errors``."""
        from briny.common.fileclient import LocalFileClient  # Jinja and the compiler: only now
        from briny.common.pillar import PillarCompiler
        from briny.common.state.stages import RenderEnv

        opts = self.minion_opts(minion_id, grains, pillarenv)
        roots = opts.get("pillar_roots") or {}
        if pillarenv and pillarenv not in roots:
            log.debug("pillarenv %r asked for by %s is not in pillar_roots; empty pillar", pillarenv, minion_id)
            return {}
        follow = bool(opts.get("fileserver_followsymlinks", True))
        client = LocalFileClient(roots, follow)
        boundary = HostBoundary(
            minion_id,
            "the pillar",
            is_pure,
            ALLOWED,
            code_allowed=bool(self.opts.get("pillar_allow_py")),
            code_hint=PY_HINT,
        )
        # the modules' own file client (cp.list_master: the master's file_roots), kept out of sight
        files = LocalFileClient(self.opts.get("file_roots") or {}, follow)
        mine = self.mine.reader(minion_id) if self.mine is not None else None
        salt = master_side_mods(OptsView(opts), grains, {}, boundary, files, mine)
        env = RenderEnv(
            opts=opts,
            client=client,
            salt=salt,
            grains=grains,
            pillar={},
            template_opts=OptsView(opts),
            boundary=boundary,
        )
        pillar = PillarCompiler(env).compile()
        if pillar.get("_errors"):
            log.warning(
                "the pillar of %s has %d error(s); its state runs will refuse to start",
                minion_id,
                len(pillar["_errors"]),
            )
        return pillar

    def _effective_env(self, saltenv: str | None, pillarenv: str | None) -> str | None:
        if pillarenv:
            return pillarenv
        if saltenv and self.opts.get("pillarenv_from_saltenv"):
            return saltenv
        configured = self.opts.get("pillarenv")
        return str(configured) if configured else None

    def get(self, minion_id: str, saltenv: str | None = None, pillarenv: str | None = None) -> dict[str, Any]:
        """``minion_id``'s pillar (a copy): from the cache while still valid, else compiled.

        ``pillarenv`` restricts the pillar to that environment; ``saltenv``
        does only with ``pillarenv_from_saltenv`` (Salt's rule); otherwise
        the master's ``pillarenv`` applies, and by default every environment.
        """
        env = self._effective_env(saltenv, pillarenv)
        key = (minion_id, env)
        with self._lock:
            gate = self._compiling.setdefault(key, threading.Lock())
        with gate:
            grains = copy.deepcopy(dict(self.grains_of(minion_id) or {}))
            # a pillar may read the mine (mine.get): any change to it makes entries old
            grains_digest = data_digest([grains, self.mine.generation if self.mine is not None else 0])
            tree = self.tree_signature()
            with self._lock:
                entry = self._entries.get(key)
            if entry is not None and entry.tree == tree and entry.grains == grains_digest:
                self.hits += 1
                return copy.deepcopy(entry.pillar)
            pillar = self.compile_now(minion_id, grains, env)
            self.compiles += 1
            with self._lock:
                self._entries[key] = _Entry(tree, grains_digest, pillar)
            return copy.deepcopy(pillar)

    def cached(self, minion_id: str) -> dict[str, Any] | None:
        """``minion_id``'s pillar as last compiled for the master's default environment, or None
        (never compiles: what pillar targeting of the mine reads)."""
        with self._lock:
            entry = self._entries.get((minion_id, self._effective_env(None, None)))
        return None if entry is None else entry.pillar

    def for_targeting(self, minion_id: str) -> dict[str, Any] | None:
        """``minion_id``'s pillar for a pillar target (``-I``, ``I@``, ``J@``; worker): as last
        compiled (what the minion last got, as Salt's minion data cache), else compiled now."""
        cached = self.cached(minion_id)
        return cached if cached is not None else self.get(minion_id)

    def forget(self, minion_id: str | None = None) -> None:
        """Drop the cached pillars of one minion (or of all)."""
        with self._lock:
            for key in [k for k in self._entries if minion_id is None or k[0] == minion_id]:
                del self._entries[key]

    # -- the request ---------------------------------------------------------------------------
    def handle_request(self, session: Any, payload: dict[str, Any]) -> dict[str, Any]:
        """The ``pillar`` request (worker thread): the pillar of the minion the session belongs to.

        ``saltenv`` and ``pillarenv`` are honoured; a payload naming another
        minion (``id``/``minion_id``/``tgt``) is refused: a minion reads only
        its own pillar.
        """
        minion_id = session.id
        other = other_minion(payload, minion_id)
        if other is not None:
            log.warning("%s asked for the pillar of %s; refused", minion_id, other)
            return {"error": f"a minion can read only its own pillar; {minion_id} cannot read the pillar of {other}"}
        try:
            saltenv = check_env(payload.get("saltenv"), "saltenv")
            pillarenv = check_env(payload.get("pillarenv"), "pillarenv")
        except WireError as exc:
            log.warning("pillar request from %s refused: %s", minion_id, exc)
            return {"error": str(exc)}
        pillar = self.for_minion(minion_id, saltenv, pillarenv)
        self.files.store(minion_id, pillar)  # what cache.pillar shows, as Salt's minion data cache
        return {"pillar": pillar}

    def for_minion(self, minion_id: str, saltenv: str | None = None, pillarenv: str | None = None) -> dict[str, Any]:
        """:meth:`get` for ``minion_id``'s own use (its ``pillar`` request, the compile of its state
        job: where Salt's minion asks for its pillar), and ``minion/refresh/<id>`` fired, as Salt's
        master fires it for each pillar it gives a minion."""
        pillar = self.get(minion_id, saltenv, pillarenv)
        if self.fire is not None:
            self.fire(f"minion/refresh/{minion_id}", {"Minion data cache refresh": minion_id})
        return pillar

    def register(self, server: Any) -> None:
        """Serve ``pillar`` requests of ``server`` (a MasterServer), in its worker threads."""
        server.register_handler("pillar", self.handle_request, blocking=True)
