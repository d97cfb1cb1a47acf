"""The module loader: execution modules and state modules, found lazily.

Runs wherever functions are called: in ``briny-call``, in the minion's job
workers, and on the master when it renders templates for a minion.

A :class:`LazyLoader` is a read-only mapping from ``"mod.fun"`` to callables,
as Salt's ``__salt__`` and ``__states__`` are. Nothing is imported until a
function of a module is asked for, so a CLI call pays only for what it uses.

Where modules come from, first match wins:

1. extra folders given by the caller, or by default :func:`custom_dirs`
   (synced ``extension_modules``, and with ``custom_modules_from_roots`` a
   local tree's ``_modules`` / ``_states``),
2. the built-in folder: ``minion/host/modules/`` for execution modules,
   ``states/`` for state modules.

How a module is written (the Salt way, which users' custom modules follow):

- public functions are the module's functions whose names do not start with
  ``_`` and that the module defines itself (imported ones are not exposed);
  ``__func_alias__ = {"list_": "list"}`` renames;
- ``__virtualname__`` and ``__virtual__()`` choose the name (``__virtual__``
  returns True, a name, False or ``(False, reason)``);
- each module is executed afresh per loader, with these globals injected:
  ``__opts__``, ``__grains__``, ``__pillar__``, ``__salt__``, ``__context__``,
  ``__states__`` (state modules), ``__job__`` (the job's runtime, a
  :class:`~briny.common.jobcontext.JobContext`), and per call ``__low__`` and
  ``__env__`` (set by the engine through :meth:`LazyLoader.inject`);
- a long module may keep some of its code in private sibling files
  (``_name.py`` beside it) and import them with ordinary relative imports
  (``from ._file_edit import append as append``, ``from ._file_common import
  _fail``). Each load of a module gets its own copies of the siblings it
  imports, with the same dunders (the per-call ones too), so a function
  defined in a sibling works as one defined in the module itself; a public
  function the module imports from a sibling is one of its functions.
  Nothing but private siblings (``_*.py``) can be imported this way.

Kinds: ``modules`` (execution modules), ``states``, and ``grains`` (custom
grains modules only: the core grains are :mod:`briny.minion.host.grains`; see
:func:`grain_funcs`).

Custom modules written for Salt may ``from salt.exceptions import
CommandExecutionError`` (and the other names of
:data:`briny.common.exceptions.SALT_NAMES`): when no real ``salt`` package is
installed in briny's Python, a small ``salt`` package holding only
``salt.exceptions`` answers that import, with briny's own classes, so
``raise`` and ``except`` work as in Salt (:class:`SaltShimFinder`).

Because each loader owns its module objects, two loaders (two minions'
compiles on the master, two jobs on a minion) never share dunders.
"""

from __future__ import annotations

import contextlib
import logging
import types
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import modfolders, modimport
from .exceptions import FunctionNotFound, LoaderError
from .jobcontext import JobContext

if TYPE_CHECKING:
    from .state.runcontext import Loader

log = logging.getLogger(__name__)

_PKG_ROOT = Path(__file__).resolve().parent.parent
BUILTIN_DIRS: dict[str, Path | None] = {
    "modules": _PKG_ROOT / "minion" / "host" / "modules",
    "states": _PKG_ROOT / "states",
    "grains": None,  # custom grains modules only; the core grains are briny.minion.host.grains
}


class LazyLoader(Mapping[str, Callable[..., Any]]):
    """``"mod.fun"`` → function, loading each module on first use.

    ``kind`` is ``"modules"``, ``"states"`` or ``"grains"``; ``pack`` holds the dunders to
    inject (``__opts__``, ``__grains__``, ...). ``__context__`` is created per
    loader unless given, and so is an empty ``__job__``.
    """

    def __init__(
        self,
        kind: str,
        pack: dict[str, Any],
        extra_dirs: list[Path] | None = None,
        rescan: Callable[[], list[Path]] | None = None,
    ) -> None:
        if kind not in BUILTIN_DIRS:
            raise LoaderError(f"unknown loader kind {kind!r}")
        self.kind = kind
        self.pack = dict(pack)
        self.pack.setdefault("__context__", {})
        self.pack.setdefault("__job__", JobContext())
        self.opts: dict[str, Any] = self.pack.get("__opts__", {})  # the modules' __opts__ (but: testing)
        builtin = BUILTIN_DIRS[kind]
        self.dirs = [Path(d) for d in (extra_dirs or [])] + ([builtin] if builtin is not None else [])
        self._modules: dict[str, types.ModuleType | None] = {}  # name -> module or None (unavailable)
        self._siblings: dict[str, list[types.ModuleType]] = {}  # name -> the private files it imported
        self._reasons: dict[str, str] = {}
        self._funcs: dict[str, dict[str, Callable[..., Any]]] = {}
        self._virtual_index: dict[str, list[Path]] | None = None
        self._rescan = rescan  # the custom folders read again from disk, once, on a miss
        self._released = False  # release() ran: the job that made it is over
        job = self.pack["__job__"]
        if isinstance(job, JobContext) and job.loaders is not None:
            job.loaders.append(self)  # emptied when the job ends (JobContext.release)

    # -- mapping protocol -------------------------------------------------
    def __getitem__(self, key: str) -> Callable[..., Any]:
        mod, _, fun = key.partition(".")
        if not fun:
            raise FunctionNotFound(f"'{key}' is not a module.function name")
        funcs = self._functions(mod)
        if funcs is None or fun not in funcs:
            raise FunctionNotFound(self.missing_message(key))
        return funcs[fun]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        try:
            self[key]
        except FunctionNotFound:
            return False
        return True

    def __iter__(self) -> Iterator[str]:
        for name in self.list_modules():
            for fun in sorted(self._functions(name) or {}):
                yield f"{name}.{fun}"

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __getattr__(self, name: str) -> "ModuleNamespace":
        # __salt__.cmd.run(...) in modules (templates see SaltFunctions, common/state/hostview.py)
        if name.startswith("_"):
            raise AttributeError(name)
        return ModuleNamespace(self, name)

    # -- public helpers ---------------------------------------------------
    def sibling(self, salt: "Loader | None" = None) -> "LazyLoader":
        """A loader of the same kind, dunders and folders whose modules are loaded afresh: their
        globals (the per-call ``__low__``, ``__env__``, a prereq check's ``__opts__`` view) and
        what a ``reload`` forgets are their own (a ``parallel`` state's thread:
        :mod:`briny.common.state.runcontext`). ``__opts__``, ``__context__`` and ``__job__`` are shared;
        ``salt`` is the sibling's ``__salt__`` when given."""
        builtin = BUILTIN_DIRS[self.kind]
        pack = dict(self.pack)
        if "__opts__" in pack:
            pack["__opts__"] = self.opts  # never a view of the moment (:meth:`testing`)
        other = LazyLoader(self.kind, pack, [d for d in self.dirs if d != builtin], self._rescan)
        for key, value in self.pack.items():
            if value is self:
                other.pack[key] = other
        if salt is not None:
            other.pack["__salt__"] = salt
        return other

    def missing_message(self, key: str) -> str:
        """Salt's words for a function this loader cannot give: ``'mod' __virtual__ returned
        False: <reason>`` when the module declined (or failed to import: the reason is the
        error), else ``'mod.fun' is not available.``"""
        mod = key.partition(".")[0]
        if mod in self._reasons and self._funcs.get(mod) is None:
            reason = self._reasons[mod]
            return f"'{mod}' __virtual__ returned False" + (f": {reason}" if reason else "")
        return f"'{key}' is not available."

    def module(self, name: str) -> types.ModuleType | None:
        """The loaded module object for ``name``, or None."""
        if self._functions(name) is None:
            return None
        return self._modules.get(name)

    def functions(self, name: str) -> dict[str, Callable[..., Any]]:
        """The public functions of module ``name`` by their exposed names (``{}`` when it is not
        available)."""
        return dict(self._functions(name) or {})

    def inject(self, name: str, dunders: Mapping[str, Any]) -> bool:
        """Set per-call dunders (``__low__``, ``__env__``, ...) on module ``name`` and on the private
        sibling files it imported; False when there is no such module."""
        mod = self.module(name)
        if mod is None:
            return False
        for target in (mod, *self._siblings.get(name, ())):
            for key, val in dunders.items():
                setattr(target, key, val)
        return True

    def has_module(self, name: str) -> bool:
        return self._functions(name) is not None

    def list_modules(self) -> list[str]:
        names: set[str] = set()
        for d in self.dirs:
            found = self._listing(d)
            if found is not None:
                names.update(n for n in found.names if not n.startswith("_"))
        names.update(self._index())
        result = []
        for n in sorted(names):
            if self._functions(n) is not None:
                result.append(n)
        return sorted(set(result))

    def release(self) -> None:
        """The job that made this loader is over: empty the namespace of every module (and private
        sibling) it ran and forget them and its dunders. A module's functions and its namespace
        refer to each other, and the namespace holds the job's grains, pillar and opts: left as
        they are, all of it waits for a full collection of the cyclic garbage collector (in a
        daemon running jobs in threads, most of what each job allocated). Functions taken from
        this loader must not be called afterwards; asking it for one raises LoaderError."""
        for mod in self._modules.values():
            if mod is not None:
                mod.__dict__.clear()
        for siblings in self._siblings.values():
            for sibling in siblings:
                sibling.__dict__.clear()
        self.reload()
        self.pack.clear()
        self.opts = {}
        self._released = True

    def reload(self) -> None:
        """Forget every loaded module (``reload_modules``)."""
        self._modules.clear()
        self._siblings.clear()
        self._funcs.clear()
        self._reasons.clear()
        self._virtual_index = None

    @contextlib.contextmanager
    def testing(self, test: bool) -> Iterator[None]:
        """While it lasts, the modules of this loader (those loaded and those it loads meanwhile,
        private files included) see ``__opts__["test"]`` as ``test``: their ``__opts__`` is a copy
        of the loader's opts made for it, then the opts again; the opts themselves are never
        written. For one call of the thread that owns the loader (a prereq check:
        :meth:`briny.common.state.runcontext.RunContext.modules_view`)."""
        base = self.opts
        if "__opts__" not in self.pack or bool(base.get("test")) == test:
            yield
            return
        self._show_opts({**base, "test": test})
        try:
            yield
        finally:
            self._show_opts(base)

    def _show_opts(self, opts: dict[str, Any]) -> None:
        self.pack["__opts__"] = opts
        for mod in self._modules.values():
            if mod is not None:
                mod.__dict__["__opts__"] = opts
        for siblings in self._siblings.values():
            for sibling in siblings:
                sibling.__dict__["__opts__"] = opts

    # -- loading ----------------------------------------------------------
    def _functions(self, name: str) -> dict[str, Callable[..., Any]] | None:
        if name in self._funcs:
            return self._funcs[name]
        if self._released:  # its modules would run without their dunders
            raise LoaderError(f"module {name!r} asked of a {self.kind} loader after its job ended")
        if name.startswith("_") or (name in self._modules and self._modules[name] is None):
            return None  # private files (module parts, helpers) are never modules
        for path in self._candidates(name):
            mod, virtual, siblings = self._load(path)
            if mod is None or virtual != name:
                continue
            self._register(name, mod, siblings)
            return self._funcs[name]
        if self._rescan is not None and name not in self._reasons:  # not found: custom folders may be new
            rescan, self._rescan = self._rescan, None
            builtin = BUILTIN_DIRS[self.kind]
            self.dirs = rescan() + ([builtin] if builtin is not None else [])
            self._virtual_index = None
            return self._functions(name)
        self._modules[name] = None
        return None

    def _listing(self, folder: Path) -> modfolders.Listing | None:
        return modfolders.FOLDERS.listing(folder, builtin=folder == BUILTIN_DIRS[self.kind])

    def _candidates(self, name: str) -> list[Path]:
        """The files that may hold module ``name``: ``name.py`` in each folder, then the files
        declaring it as their ``__virtualname__``."""
        candidates = []
        for d in self.dirs:
            found = self._listing(d)
            if found is not None and name in found.names:
                candidates.append(d / f"{name}.py")
        return candidates + [p for p in self._index().get(name, []) if p not in candidates]

    def _register(self, name: str, mod: types.ModuleType, siblings: list[types.ModuleType]) -> None:
        aliases = getattr(mod, "__func_alias__", {}) or {}
        own = {mod.__name__, *(s.__name__ for s in siblings)}
        funcs: dict[str, Callable[..., Any]] = {}
        for attr, val in vars(mod).items():
            if type(val) is not types.FunctionType:  # FunctionType has no subclasses
                continue
            if attr[0] == "_" and attr not in aliases:
                continue
            if val.__module__ not in own:
                continue  # imported from elsewhere: not one of the module's functions
            funcs[aliases.get(attr, attr)] = val
        self._modules[name] = mod
        self._siblings[name] = siblings
        self._funcs[name] = funcs

    def _load(self, path: Path) -> tuple[types.ModuleType | None, str | None, list[types.ModuleType]]:
        """Run ``path`` as a fresh module with the dunders: (module, name, private siblings it
        imported), or (None, None, []) when it fails or its ``__virtual__`` says no."""
        try:
            loaded = modimport.run_file(self.kind, path, self.pack, path.parent == BUILTIN_DIRS[self.kind])
        except Exception as exc:  # a broken custom module must not take the loader down
            log.error("Failed to import %s %s: %s", self.kind, path, exc, exc_info=True)
            self._reasons[path.stem] = str(exc)
            return None, None, []
        if loaded is None:
            return None, None, []
        mod, siblings = loaded
        name = getattr(mod, "__virtualname__", path.stem)
        virtual = getattr(mod, "__virtual__", None)
        if callable(virtual):
            try:
                ret = virtual()
            except Exception as exc:  # noqa: BLE001 - a custom module's __virtual__ may raise anything
                log.error("__virtual__ of %s raised: %s", path, exc)
                self._declined(
                    path,
                    name,
                    f"Exception raised when processing __virtual__ function for {mod.__name__}. "
                    f"Module will not be loaded: {exc}",
                )
                return None, None, []
            reason = None
            if isinstance(ret, tuple):
                ret, reason = (ret + (None,))[:2]
            if ret is False:
                self._declined(path, name, "" if reason is None else str(reason))
                return None, None, []
            if isinstance(ret, str):
                name = ret
        return mod, name, siblings

    def _declined(self, path: Path, name: str, reason: str) -> None:
        """Keep why the module at ``path`` (virtual name ``name``) is not loaded, under both
        names, as Salt does (``vfile.f`` and ``vn.f`` both say why ``vfile.py`` declined)."""
        self._reasons[name] = reason
        self._reasons.setdefault(path.stem, reason)

    def _index(self) -> dict[str, list[Path]]:
        """Virtual name -> files declaring it, read from the text (no import)."""
        if self._virtual_index is None:
            found = [f.virtual for f in map(self._listing, self.dirs) if f is not None and f.virtual]
            if len(found) == 1:
                self._virtual_index = found[0]  # one folder's own (only read)
            else:
                index: dict[str, list[Path]] = {}
                for virtual in found:
                    for name, paths in virtual.items():
                        index.setdefault(name, []).extend(paths)
                self._virtual_index = index
        return self._virtual_index


class ModuleNamespace:
    """``salt.cmd`` in ``salt.cmd.run(...)``: the functions of one module of a ``mod.fun`` mapping
    (a loader, or the :class:`~briny.common.state.hostview.SaltFunctions` templates see)."""

    __slots__ = ("_loader", "_mod")
    # what Jinja's sandbox asks of anything called: answered here, never looked up as functions
    unsafe_callable = False
    alters_data = False
    jinja_pass_arg = None

    def __init__(self, loader: Mapping[str, Callable[..., Any]] | Any, mod: str) -> None:
        self._loader = loader
        self._mod = mod

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"salt.{self._mod} is a module, not a function: call salt.{self._mod}.<function>(...) "
            f"or salt['{self._mod}.<function>'](...)"
        )

    def __repr__(self) -> str:
        return f"<module namespace salt.{self._mod}>"

    def __getattr__(self, fun: str) -> Callable[..., Any]:
        try:
            return self._loader[f"{self._mod}.{fun}"]
        except FunctionNotFound as exc:
            raise AttributeError(str(exc)) from None

    def __getitem__(self, fun: str) -> Callable[..., Any]:
        return self._loader[f"{self._mod}.{fun}"]


CUSTOM_FOLDERS = {"modules": "_modules", "states": "_states", "grains": "_grains"}


def custom_dirs(opts: dict[str, Any], kind: str, recheck: bool = False) -> list[Path]:
    """Where custom modules of ``kind`` come from for these opts, first match wins.

    ``extension_modules/<kind>`` (what ``saltutil.sync_*`` fills from the
    master or the file roots: as Salt's, a custom module is loaded once synced, by a
    highstate, a ``saltutil.sync_*`` or ``sync_mods=``), then, only when the file client is
    local and ``custom_modules_from_roots`` is set (briny's own option), the ``_modules`` /
    ``_states`` folders of the file roots of the run's saltenv (base by default) read in
    place, without a sync. Which of them exist, and what they hold, is kept
    (:mod:`briny.common.modfolders`); ``recheck`` reads again those not read within the
    last second (a loader that missed a module).
    """
    ext = opts.get("extension_modules")
    roots: tuple[Any, ...] = ()
    if opts.get("file_client") == "local" and opts.get("custom_modules_from_roots"):
        roots = tuple((opts.get("file_roots") or {}).get(opts.get("saltenv") or "base", []))
    key = (kind, ext, roots)
    dirs = _CUSTOM_PATHS.get(key)
    if dirs is None:  # Path objects made once per set of folders, not per loader (every job makes two)
        made = ([Path(ext) / kind] if ext else []) + [Path(root) / CUSTOM_FOLDERS[kind] for root in roots]
        if len(_CUSTOM_PATHS) >= 256:
            _CUSTOM_PATHS.clear()
        dirs = _CUSTOM_PATHS[key] = tuple(made)
    look = modfolders.FOLDERS.recheck if recheck else modfolders.FOLDERS.listing
    return [d for d in dirs if look(d) is not None]


_CUSTOM_PATHS: dict[tuple[Any, ...], tuple[Path, ...]] = {}  # custom_dirs' folders by (kind, ext, roots)


def _folders(
    opts: dict[str, Any], kind: str, extra_dirs: list[Path] | None
) -> tuple[list[Path], Callable[[], list[Path]] | None]:
    """A loader's custom folders, and how to look for them again on a miss (none when the caller
    named its folders)."""
    if extra_dirs is not None:
        return extra_dirs, None
    return custom_dirs(opts, kind), lambda: custom_dirs(opts, kind, recheck=True)


def minion_mods(
    opts: dict[str, Any],
    grains: dict[str, Any] | None = None,
    pillar: dict[str, Any] | None = None,
    extra_dirs: list[Path] | None = None,
    context: dict[str, Any] | None = None,
    job: JobContext | None = None,
) -> LazyLoader:
    """The ``__salt__`` loader of one host (or of one minion, on the master); ``job`` is the
    runtime its modules see as ``__job__`` (an empty one when not given)."""
    pack: dict[str, Any] = {
        "__opts__": opts,
        "__grains__": grains if grains is not None else opts.get("grains", {}),
        "__pillar__": pillar if pillar is not None else opts.get("pillar", {}),
    }
    if context is not None:
        pack["__context__"] = context
    if job is not None:
        pack["__job__"] = job
    loader = LazyLoader("modules", pack, *_folders(opts, "modules", extra_dirs))
    loader.pack["__salt__"] = loader
    return loader


def grain_funcs(opts: dict[str, Any], grains: dict[str, Any]) -> LazyLoader:
    """The custom grains modules of this host (``_grains``: :func:`custom_dirs`), with ``__opts__``
    and ``grains`` as their ``__grains__`` (the grains found so far; the caller adds to it)."""
    return LazyLoader("grains", {"__opts__": opts, "__grains__": grains}, *_folders(opts, "grains", None))


def states(opts: dict[str, Any], salt: LazyLoader, extra_dirs: list[Path] | None = None) -> LazyLoader:
    """The ``__states__`` loader, sharing ``__salt__`` and the dunders of ``salt`` (``__job__``
    too)."""
    pack = {k: v for k, v in salt.pack.items()}
    pack["__opts__"] = opts
    pack["__salt__"] = salt
    loader = LazyLoader("states", pack, *_folders(opts, "states", extra_dirs))
    loader.pack["__states__"] = loader
    return loader
