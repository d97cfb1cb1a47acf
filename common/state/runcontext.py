"""One state run's context: what its state calls read, typed, and the run's own.

A run of low chunks (:mod:`briny.common.state.engine`) gets one :class:`RunContext`:
its loaders (``__salt__``, ``__states__``), its test flag, its job's identity
(jid, minion id), its event sink and the run options the engine reads
(``failhard``, ``state_events``). Nothing in the state call path learns or
changes test mode through an opts dict:

- a ``prereq`` check runs in a derived context (:meth:`RunContext.for_prereq`,
  ``dataclasses.replace``); while it runs, the modules of its loaders see
  ``__opts__["test"]`` True through a copy of their opts made for that call
  (:meth:`Loader.testing`), and their own opts are never written;
- a ``parallel: True`` state's thread runs in a context of its own
  (:meth:`RunContext.for_thread`) with loaders of its own (fresh module
  objects, the same folders, dunders and ``__context__``): what the main
  thread's calls see (a prereq check's test mode, the modules a
  ``reload_modules`` forgets) never reaches it, and the reverse, as Salt's
  process per parallel state keeps them apart; they are released when the
  thread is done (:meth:`RunContext.release_thread`).

A loader is thus used by one thread at a time: the run's, or the parallel
state's it was made for. Plain code, no sockets.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ..jobcontext import FireEvent


class Loader(Protocol):
    """``__salt__`` or ``__states__`` as a state run uses them (a ``mod.fun`` mapping;
    :class:`briny.common.loader.LazyLoader` is one)."""

    def __getitem__(self, key: str) -> Callable[..., Any]: ...

    def __contains__(self, key: object) -> bool: ...

    def missing_message(self, key: str) -> str:
        """Why ``mod.fun`` is not there, in Salt's words."""
        ...

    def inject(self, name: str, dunders: Mapping[str, Any]) -> bool:
        """Set a call's dunders (``__low__``, ``__env__``, ...) on module ``name``."""
        ...

    def reload(self) -> None:
        """Forget the modules loaded (``reload_modules``)."""
        ...

    def sibling(self, salt: Loader | None = None) -> Loader:
        """A loader of the same folders and dunders whose modules are its own (``salt``: its
        ``__salt__`` instead of this one's)."""
        ...

    def testing(self, test: bool) -> contextlib.AbstractContextManager[None]:
        """While it lasts, the modules see ``__opts__["test"]`` as ``test``."""
        ...

    def release(self) -> None:
        """The job (or the parallel state's thread) that made it is over: empty its modules."""
        ...


@dataclass(frozen=True)
class RunContext:
    """What the calls of one state run read (see the module docstring)."""

    salt: Loader
    states: Loader
    test: bool
    jid: str | None = None
    minion_id: str = ""
    fire_event: FireEvent | None = None
    state_events: bool = False  # a progress event per state (``salt/job/<jid>/prog/...``)
    failhard: bool = False  # the default of the chunks' ``failhard``

    @classmethod
    def from_opts(
        cls,
        opts: Mapping[str, Any],
        salt: Loader,
        states: Loader,
        *,
        jid: str | None = None,
        fire_event: FireEvent | None = None,
    ) -> RunContext:
        """The context of a run with these options (``test``, ``id``, ``state_events``,
        ``failhard``), read once here."""
        return cls(
            salt=salt,
            states=states,
            test=bool(opts.get("test")),
            jid=jid,
            minion_id=str(opts.get("id", "")),
            fire_event=fire_event,
            state_events=bool(opts.get("state_events")),
            failhard=bool(opts.get("failhard", False)),
        )

    def for_prereq(self) -> RunContext:
        """The context of a ``prereq`` check: this one, in test mode."""
        return replace(self, test=True)

    def for_thread(self) -> RunContext:
        """The context of a ``parallel: True`` state's thread: loaders of its own."""
        salt = self.salt.sibling()
        return replace(self, salt=salt, states=self.states.sibling(salt))

    def release_thread(self) -> None:
        """The parallel state's thread of this context (:meth:`for_thread`) is done: its loaders'
        module namespaces are emptied, as a thread job's are at its end (never on a run's own)."""
        self.states.release()
        self.salt.release()

    @contextlib.contextmanager
    def modules_view(self) -> Iterator[None]:
        """While a call of this context runs, its loaders' modules read this context's test flag as
        ``__opts__["test"]`` (used for derived contexts only: a run's own loaders already do)."""
        with self.salt.testing(self.test), self.states.testing(self.test):
            yield
