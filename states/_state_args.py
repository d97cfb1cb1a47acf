"""Keyword arguments a state function does not take, refused as Salt words it (a private sibling
of the state modules that import it: the database states through ``_db_state_args.py``, ``gem``).

Salt refuses a keyword argument a state function without ``**kwargs`` does not take ("'x' is an
invalid keyword argument for 'gem.installed'") and aborts the whole run with it; briny's
engine hands such a function only what it takes, so these modules take ``**kwargs`` and fail
that one state with Salt's words instead.
"""

from __future__ import annotations

from typing import Any

from briny.common.badargs import invalid_keywords_message

# keywords the state system itself may hand a state function that takes **kwargs
_STATE_KEYWORDS = frozenset({"name_order", "names", "listen", "listen_in", "use", "use_in"})


def _invalid_args(name: str, fun: str, kwargs: dict[str, Any], **extra: Any) -> dict[str, Any] | None:
    """A failed result naming the arguments ``fun`` does not take, or None when there are none."""
    bad = [k for k in kwargs if not str(k).startswith("__") and k not in _STATE_KEYWORDS]
    if not bad:
        return None
    comment = invalid_keywords_message(fun, bad)
    return {"name": name, **extra, "changes": {}, "result": False, "comment": comment}
