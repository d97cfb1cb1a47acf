"""Running one module file as a loaded module: fresh globals with the loader's dunders each time.

Runs wherever a :class:`~briny.common.loader.LazyLoader` loads a module (a minion's jobs, briny-call,
the master's renders), in the calling thread; the kept compiled code and the finders are shared by
every thread of the process (their tables are guarded by locks or changed only by their own load).

- :func:`run_file` runs a file under a name of its own (``briny.loaded.modules17.test``: what the
  import system knows it by, so the private siblings of two loads never mix) while the module's
  ``__name__`` is the same for every load (:func:`stable_name`);
- :class:`SiblingFinder` answers ``from ._name import ...`` of a module being loaded with a copy of
  that private file run with the same dunders (first on ``sys.meta_path``);
- :class:`SaltShimFinder` answers ``from salt.exceptions import ...`` in custom modules written for
  Salt (last on ``sys.meta_path``);
- each file's compiled code is kept once per process (:data:`SOURCES`).
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import exceptions

_counter = 0
_counter_lock = threading.Lock()


class _SourceCache:
    """Each module file's compiled code, kept once per process (thread-safe) and taken again
    when a custom file's size or mtime changes (a built-in file comes with briny and does not
    change while it runs: it is compiled once, and not looked at again). A daemon runs every
    job with fresh loaders (fresh module globals); without this each job would compile each
    module it loads anew (and with ``PYTHONDONTWRITEBYTECODE`` there is no ``.pyc`` to fall
    back on). What the folders hold is kept by :mod:`briny.common.modfolders`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._code: dict[Path, tuple[int, int, types.CodeType]] = {}

    def code(self, path: Path, builtin: bool = False) -> types.CodeType:
        """The compiled code of the module file ``path`` (OSError, SyntaxError as compiling)."""
        with self._lock:
            kept = self._code.get(path)
        if builtin and kept is not None:
            return kept[2]
        st = path.stat()
        if kept is not None and kept[0] == st.st_mtime_ns and kept[1] == st.st_size:
            return kept[2]
        code = compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
        with self._lock:
            self._code[path] = (st.st_mtime_ns, st.st_size, code)
        return code


SOURCES = _SourceCache()


def _next_load() -> int:
    global _counter
    with _counter_lock:
        _counter += 1
        return _counter


@dataclass
class _Load:
    """One module being loaded: its folder, its dunders, the name its files take (``__name__``),
    the private siblings it imported."""

    folder: Path
    pack: dict[str, Any]
    names: str
    builtin: bool  # briny's own folder (its files do not change while it runs)
    siblings: list[types.ModuleType] = field(default_factory=list)


def stable_name(kind: str, stem: str) -> str:
    """The ``__name__`` a loaded file of ``kind`` gets: the same for every load of it
    (``briny.loaded.modules.test``), as Salt's ``salt.loaded.int.module.test``. Its logger is
    that name (one per file, not one per job: a per-load name made a new logger each job, kept by
    :mod:`logging` for ever) and Salt's ``log_granular_levels`` names reach it
    (``salt.modules`` -> ``briny.loaded.modules``, :mod:`briny.common.logsetup`). The import
    system knows the load by its own unique name (``__spec__.name``, ``__package__``), so the
    private siblings of two loads never mix."""
    return f"briny.loaded.{kind}.{stem}"


_EXEC_LOCK = threading.RLock()  # one loaded file runs at a time (see _registered)


@contextlib.contextmanager
def _registered(module: types.ModuleType) -> Iterator[None]:
    """While a loaded file runs, ``sys.modules[module.__name__]`` is its module, as an import
    makes it: ``dataclasses`` (string annotations), ``typing.get_type_hints`` and ``pickle``
    look a class's module up there by its ``__module__``. That name is shared by every load of
    the file (:func:`stable_name`), so one loaded file runs at a time in the process: one
    re-entrant lock (a module runs its private siblings inside its own run; one lock, so no
    order between two can deadlock). The entry is taken out again when the run ends."""
    name = module.__name__
    with _EXEC_LOCK:
        previous = sys.modules.get(name)
        sys.modules[name] = module
        try:
            yield
        finally:
            if previous is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = previous


class _SiblingLoader(importlib.machinery.SourceFileLoader):
    """Loads a private sibling of a loaded module with that module's dunders."""

    def __init__(self, fullname: str, path: str, load: _Load) -> None:
        super().__init__(fullname, path)
        self.load = load

    def exec_module(self, module: types.ModuleType) -> None:
        for key, val in self.load.pack.items():
            setattr(module, key, val)
        setattr(module, "__salt_system_encoding__", "utf-8")
        module.__name__ = f"{self.load.names}.{self.name.rpartition('.')[2]}"  # stable_name's
        self.load.siblings.append(module)
        with _registered(module):
            exec(SOURCES.code(Path(self.path), self.load.builtin), module.__dict__)  # noqa: S102 - exec_module's work, with the code kept


class SiblingFinder(importlib.abc.MetaPathFinder):
    """Finds ``from ._name import ...`` of a module being loaded (first on ``sys.meta_path``).

    While :func:`run_file` runs a module, its own package (one per load, e.g.
    ``briny.loaded.states17``) is registered here with the folder and the dunders; a private
    file of that folder imported by the module (or by one of its siblings) is loaded from it with
    the dunders. Any other name is left to the other finders."""

    def __init__(self) -> None:
        self.packages: dict[str, _Load] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        parent, _, stem = fullname.rpartition(".")
        load = self.packages.get(parent)
        if load is None:
            return None
        if not stem.startswith("_") or not stem.isidentifier():
            raise ImportError(
                f"{fullname}: a loaded module imports only its private sibling files (_name.py), not {stem!r}"
            )
        source = load.folder / f"{stem}.py"
        if not source.is_file():
            raise ModuleNotFoundError(f"no private sibling file {source}", name=fullname)
        return importlib.util.spec_from_file_location(
            fullname, source, loader=_SiblingLoader(fullname, str(source), load)
        )


class SaltShimFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``salt`` and ``salt.exceptions`` for custom modules written for Salt (last on
    ``sys.meta_path``: a real ``salt`` package, when one is installed, is found first and wins).

    ``salt`` is an empty package; ``salt.exceptions`` holds briny's classes under Salt's names
    (:data:`briny.common.exceptions.SALT_NAMES`). No other ``salt.*`` module is provided."""

    NAMES = ("salt", "salt.exceptions")

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.NAMES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=fullname == "salt")

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return None  # the default module object

    def exec_module(self, module: types.ModuleType) -> None:
        if module.__name__ == "salt":
            module.__doc__ = "briny's stand-in for Salt: only salt.exceptions (see briny.common.loader)"
            module.__path__ = []
            return
        module.__doc__ = "Salt's exception names, as briny's classes (briny.common.exceptions.SALT_NAMES)"
        for name, cls in exceptions.SALT_NAMES.items():
            setattr(module, name, cls)


def _install_finders() -> SiblingFinder:
    for finder in sys.meta_path:
        if isinstance(finder, SiblingFinder):
            return finder
    siblings = SiblingFinder()
    sys.meta_path.insert(0, siblings)
    if not any(isinstance(f, SaltShimFinder) for f in sys.meta_path):
        sys.meta_path.append(SaltShimFinder())
    return siblings


_SIBLINGS = _install_finders()


def run_file(
    kind: str, path: Path, pack: dict[str, Any], builtin: bool
) -> tuple[types.ModuleType, list[types.ModuleType]] | None:
    """Run ``path`` as a fresh module of ``kind`` with the dunders of ``pack`` (``builtin``: a
    file of briny's own folder): (the module, the private siblings it imported), or None when
    the import system makes no spec of it. What the file raises is raised."""
    package = f"briny.loaded.{kind}{_next_load()}"  # one per load: its siblings are its own
    spec = importlib.util.spec_from_file_location(f"{package}.{path.stem}", path)
    if spec is None or spec.loader is None:
        return None
    mod = importlib.util.module_from_spec(spec)
    for key, val in pack.items():
        setattr(mod, key, val)
    setattr(mod, "__salt_system_encoding__", "utf-8")
    mod.__name__ = stable_name(kind, path.stem)  # __spec__ and __package__ stay this load's
    holder = types.ModuleType(package)
    holder.__path__ = [str(path.parent)]
    holder.__package__ = package
    load = _Load(path.parent, pack, f"briny.loaded.{kind}", builtin)
    sys.modules[package] = holder
    _SIBLINGS.packages[package] = load
    try:
        with _registered(mod):
            exec(SOURCES.code(path, builtin), mod.__dict__)  # noqa: S102 - what exec_module does, with the code kept
    finally:  # the package and its siblings live on in the module's functions only
        del _SIBLINGS.packages[package]
        for sibling in load.siblings:
            sys.modules.pop(sibling.__spec__.name if sibling.__spec__ else sibling.__name__, None)
        sys.modules.pop(package, None)
    return mod, load.siblings
