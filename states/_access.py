"""The loader's dunders as the state modules read them: one owner for the accessors they shared
(a private sibling file: each state module that imports it gets its own copy, run with that
module's dunders, and each state call's ``__opts__`` / ``__env__`` reach it as they reach the
module: :meth:`briny.common.loader.LazyLoader.inject`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __salt__


def _salt(fun: str) -> Any:
    """The execution function ``fun`` (``"file.managed"``) of this call's ``__salt__``."""
    return __salt__[fun]


def _testing() -> bool:
    """Whether this call runs in test mode (``__opts__["test"]``, a prereq check's included)."""
    return bool(__opts__.get("test"))


def _env() -> str:
    """This call's salt environment (``__env__``; ``base`` when none is set)."""
    return str(globals().get("__env__") or "base")
