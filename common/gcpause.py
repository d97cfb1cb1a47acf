"""Pausing Python's cyclic garbage collector around allocation-heavy pure work.

Runs wherever large state trees are parsed or compiled. Building high data
and chunks allocates hundreds of thousands of containers and creates no
reference cycles worth collecting; with the collector on, every pass rescans
all of them and a 10,000-state compile turns quadratic. Reference counting
still frees everything as usual while the collector is paused.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def gc_paused() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def gc_paused_call(func: Callable[P, R]) -> Callable[P, R]:
    """Decorator form of :func:`gc_paused`."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        with gc_paused():
            return func(*args, **kwargs)

    return wrapper


_freeze_lock = __import__("threading").Lock()
_freeze_depth = 0
_kept_frozen = False  # keep_frozen() ran: frozen_heap leaves the collector's state alone


def keep_frozen() -> int:
    """Freeze everything allocated so far for the life of the process, and have
    :func:`frozen_heap` leave the collector alone from now on (its closing ``gc.unfreeze``
    would thaw this too, and ``gc`` cannot unfreeze part of what is frozen). For a process
    whose long-lived heap is most of it and larger than any one run (``briny-swarm``, N
    minions in one heap). Call it again to add what was allocated since. The number of
    objects frozen."""
    global _kept_frozen
    with _freeze_lock:
        gc.freeze()
        _kept_frozen = True
        return gc.get_freeze_count()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Keep everything allocated so far out of cyclic collections while the block runs.

    For long work over a large, already-built structure (a state run over
    its chunks): unlike :func:`gc_paused`, new garbage is still collected.
    Nested and concurrent uses (several jobs in one minion) are counted, and
    the heap is unfrozen when the last one ends; after :func:`keep_frozen`, nothing
    is done (what that froze stays frozen).
    """
    global _freeze_depth
    with _freeze_lock:
        _freeze_depth += 1
        if not _kept_frozen:
            gc.freeze()
    try:
        yield
    finally:
        with _freeze_lock:
            _freeze_depth -= 1
            if _freeze_depth == 0 and not _kept_frozen:
                gc.unfreeze()
