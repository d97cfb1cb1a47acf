"""The ``stateconf`` state module: the no-op states of the stateconf and pydsl renderers.

Runs wherever states run. ``stateconf.set`` holds the settings a ``#!stateconf`` file gives
its template (and its generated ``start``/``goal`` states; pydsl's ``_slsmod_<sls>`` state);
``stateconf.context`` is the same. Both succeed with no changes and no comment, as in Salt,
in live and test mode.
"""

from __future__ import annotations

from typing import Any


def set(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed, doing nothing: the arguments are for the stateconf renderer."""
    return {"name": name, "result": True, "changes": {}, "comment": ""}


def context(name: str, **kwargs: Any) -> dict[str, Any]:
    """The same as :func:`set`."""
    return set(name, **kwargs)
