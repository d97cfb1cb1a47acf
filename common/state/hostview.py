"""What templates see of the host they render for: ``salt``, ``opts``, and the master's limits.

Runs wherever templates render. On a minion (and in ``briny-call --local``) a
render may use its whole host. On the master, which renders each minion's
pillar and (``state_compile: auto|master``) its states, a render must reach
only the pure functions and only data, by every path: a
:class:`HostBoundary` says what the render may use, records what it needed
of the minion's host, and refuses it.

- :class:`SaltFunctions` is the ``salt`` every template sees (on the master
  also the ``__salt__`` of the modules it calls): ``salt['m.f']``,
  ``salt.m.f``, ``'m.f' in salt``, ``salt.get('m.f')`` and ``salt.keys()``,
  which is what Salt 3007's template loader offers (no ``len``, no
  iteration). Never the loader itself: no module objects, no dunders, no
  ``reload``, no ``pack``.
- :class:`OptsView` is the ``opts`` a render on the master sees (and the
  ``__opts__`` of the modules it calls): plain data, deep-copied, with the
  render's own objects (its file client) kept apart where only the modules'
  own lookups find them; each read of a key whose value the master does not
  know for this minion is recorded.
- :class:`HostBoundary`: one render for one minion on the master. A function
  it may not run is looked up (``'cmd.run' in salt`` is true, as on the
  minion) but calling it raises :class:`HostAccessError` naming it; so do
  host-reading Jinja filters (``which``) and code renderers (``#!py``) unless
  allowed. Everything refused or read-but-unknown is in :attr:`HostBoundary.needs`,
  which lets ``state_compile: auto`` hand that minion its own compile.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..exceptions import FunctionNotFound, HostAccessError, RenderError
from ..loader import LazyLoader, ModuleNamespace

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

# renderers that run arbitrary Python on the host that renders
CODE_RENDERERS = frozenset({"py", "pydsl"})


@dataclass
class HostBoundary:
    """The master's limits on one render (``rendering``, e.g. ``"the states"``) for one minion."""

    minion_id: str
    rendering: str
    pure: Callable[[str], bool]  # may ``mod.fun`` run here?
    allowed: str = ""  # what templates may call here, for messages
    code_allowed: bool = False  # may a code renderer (#!py) run here?
    code_hint: str = ""  # what to do about a refused code renderer
    _needs: dict[str, None] = field(default_factory=dict, init=False, repr=False)

    @property
    def needs(self) -> list[str]:
        """What the render needed of the minion's host, in order, each once."""
        return list(self._needs)

    def need(self, what: str) -> None:
        self._needs.setdefault(what, None)

    def where(self) -> str:
        return f"on the master while rendering {self.rendering} of minion '{self.minion_id}'"

    def refusal(self, what: str, need: str | None = None) -> HostAccessError:
        """Record ``need`` (by default ``what``) and return the error that refuses ``what``."""
        self.need(need or what)
        return HostAccessError(
            f"{what} needs the minion's host and is not run {self.where()}; "
            f"templates rendered on the master may call only {self.allowed}"
        )

    def function(self, key: str, lookup: Mapping[str, Callable[..., Any]]) -> Callable[..., Any]:
        """``lookup[key]`` when pure; else a stand-in that raises :meth:`refusal` when called.

        Lookups of what is not pure are recorded first, even of a function the
        master does not have (a custom module that exists only on the minion).
        """
        pure = self.pure(key)
        if not pure:
            self.need(key)
        func = lookup[key]  # FunctionNotFound: not even the minion's loader has it
        if pure:
            return func
        boundary = self

        def refused(*args: Any, **kwargs: Any) -> Any:
            raise boundary.refusal(f"'{key}'", key)

        refused.__name__ = key.rpartition(".")[2]
        refused.__doc__ = getattr(func, "__doc__", None)
        return refused

    def code(self, renderer: str) -> None:
        """Refuse a code renderer (RenderError) unless this render allows it."""
        if self.code_allowed:
            return
        self.need(f"#!{renderer}")
        raise RenderError(
            f"The '{renderer}' renderer runs Python and is not run {self.where()}"
            + (f"; {self.code_hint}" if self.code_hint else "")
        )


class SaltFunctions:
    """The ``salt`` templates see: execution functions by name, and nothing else.

    ``boundary`` None: every function of ``loader`` (a minion). Otherwise the
    boundary decides each lookup (the master).
    """

    __slots__ = ("_loader", "_boundary")

    def __init__(self, loader: Mapping[str, Callable[..., Any]], boundary: HostBoundary | None = None) -> None:
        self._loader = loader
        self._boundary = boundary

    @property
    def boundary(self) -> HostBoundary | None:
        """The render's limits on the master (None on a minion): what a pure function that
        renders (``slsutil.renderer``) passes on to the render it makes."""
        return self._boundary

    def __getitem__(self, key: str) -> Callable[..., Any]:
        if not isinstance(key, str):
            raise FunctionNotFound(f"{key!r} is not a module.function name")
        if self._boundary is None:
            return self._loader[key]
        return self._boundary.function(key, self._loader)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except FunctionNotFound:
            return default

    def keys(self) -> list[str]:
        """Every ``mod.fun`` name (the minion's own list: not known on the master)."""
        if self._boundary is not None:
            raise self._boundary.refusal("the list of the minion's functions (salt.keys())")
        return list(self._loader)

    def __getattr__(self, name: str) -> ModuleNamespace:
        """``salt.mod`` (as in ``salt.mod.fun(...)``): AttributeError when there is no such module,
        so Jinja names it (``... has no attribute 'mod'``), as Salt does; also for ``salt['m.f']``
        of a missing function, which Jinja tries as an attribute next (``... 'm.f'``)."""
        if name.startswith("_") or "." in name:
            raise AttributeError(name)
        has_module = getattr(self._loader, "has_module", None)
        known = has_module(name) if callable(has_module) else any(k.startswith(f"{name}.") for k in self._loader)
        if not known:
            if self._boundary is not None:  # a module only the minion has (a custom one): its compile
                self._boundary.need(f"salt.{name}")
            raise AttributeError(name)
        return ModuleNamespace(self, name)

    def __repr__(self) -> str:
        return "<salt functions>"


def template_salt(salt: Any) -> Any:
    """What templates get as ``salt`` for a render's ``salt``: never a loader itself."""
    if isinstance(salt, LazyLoader):
        return SaltFunctions(salt)
    return salt


class OptsView(dict[str, Any]):
    """Opts as a render on the master shows them: a deep copy of ``data`` without its internal
    ``__`` entries (and, as they are, the ``shared`` entries: the grains and pillar the render
    itself shows).

    The render's own objects (its file client) never travel in opts: the
    modules reach them through their ``__job__``. With
    a ``boundary``, a read of a key for which ``unknown(key)`` is true is
    recorded as ``opts['key']``, and (``listing``, for the minion's view:
    the minion has keys the master never sees) listing the keys as
    ``opts['*']``. Copies are plain dicts.
    """

    def __init__(
        self,
        data: Mapping[str, Any],
        *,
        boundary: HostBoundary | None = None,
        unknown: Callable[[str], bool] | None = None,
        listing: bool = True,
        shared: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(
            copy.deepcopy({k: v for k, v in data.items() if not (isinstance(k, str) and k.startswith("__"))})
        )
        super().update(shared or {})  # not copied: the render's own grains and pillar
        self._boundary = boundary
        self._unknown = unknown
        self._listing = listing

    def _read(self, key: Any) -> None:
        if self._boundary is not None and self._unknown is not None and self._unknown(str(key)):
            self._boundary.need(f"opts['{key}']")

    def _all(self) -> None:
        if self._boundary is not None and self._unknown is not None and self._listing:
            self._boundary.need("opts['*']")

    def __getitem__(self, key: Any) -> Any:
        self._read(key)
        return super().__getitem__(key)

    def get(self, key: Any, default: Any = None) -> Any:
        self._read(key)
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        self._read(key)
        return super().__contains__(key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._read(key)
        return super().setdefault(key, default)

    def keys(self) -> dict_keys[str, Any]:
        self._all()
        return super().keys()

    def items(self) -> dict_items[str, Any]:
        self._all()
        return super().items()

    def values(self) -> dict_values[str, Any]:
        self._all()
        return super().values()

    def __iter__(self) -> Iterator[Any]:
        self._all()
        return super().__iter__()

    def copy(self) -> dict[str, Any]:
        return dict(self.items())

    def __copy__(self) -> dict[str, Any]:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        return copy.deepcopy(dict(self.items()), memo)

    def __reduce__(self) -> Any:
        return (dict, (dict(self.items()),))
