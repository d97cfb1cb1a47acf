"""Salt's words for keyword arguments a function does not take.

Pure: data in, data out, the standard library only (state modules may import it:
tests/unit/test_imports.py, ``PURE_FOR_STATES``). The one owner of the message, shared by the
state call (:mod:`briny.common.state.state_call`, a function without ``**kwargs``) and the state
modules that take ``**kwargs`` and refuse the ones they do not know (``states/_state_args.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def invalid_keywords_message(full: str, extra: Sequence[Any]) -> str:
    """``'x' is an invalid keyword argument for 'mod.fun'`` (``'x', 'y' and 'z' are invalid
    keyword arguments for ...`` for several), as Salt 3007 words it."""
    names = [str(k) for k in extra]
    if len(names) == 1:
        return f"'{names[0]}' is an invalid keyword argument for '{full}'"
    listed = ", ".join(f"'{k}'" for k in names[:-1])
    return f"{listed} and '{names[-1]}' are invalid keyword arguments for '{full}'"
