"""Helpers of the ``file`` state functions (``states/file.py`` and its private files).

Runs on the host applying states, loaded by the loader with the ``file``
state module's dunders (a private sibling of ``states/file.py``, see
:mod:`briny.common.loader`): the fresh result, its failure, the checks of
``name``, the saltenv of a call, the ``file`` execution functions.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any


if TYPE_CHECKING:
    from briny.common.dunders import __salt__


def _salt(fun: str) -> Any:
    return __salt__[f"file.{fun}"]


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "changes": {}, "result": False, "comment": ""}


def _fail(ret: dict[str, Any], comment: str) -> dict[str, Any]:
    ret["result"] = False
    ret["comment"] = comment
    return ret


def _start(name: Any) -> tuple[str, dict[str, Any], str | None]:
    """(expanded name, fresh ret, error comment when ``name`` is not absolute)."""
    name = os.path.expanduser(str(name)) if name else ""
    ret = _ret(name)
    if not name or not os.path.isabs(name):
        return name, ret, f"Specified file {name} is not an absolute path"
    return name, ret, None


def _env(saltenv: Any, kwargs: dict[str, Any]) -> str:
    return str(saltenv or kwargs.get("__env__") or globals().get("__env__") or "base")


def _err(exc: BaseException) -> str:
    return str(getattr(exc, "strerror", None) or exc)
