"""Execution module ``http``: HTTP requests from the managed host (Salt 3007's ``http.query``).

``http.query URL [method=POST data=... params={...} header_dict={...} status=True
headers=True text=True decode=True decode_type=json|yaml|auto test=True test_url=...]``
answers as Salt does: :mod:`briny.common.httpquery` (shared with the ``http_query`` Jinja
filter) makes the request with Python's ``urllib``. The timeout is the minion's
``http_request_timeout`` (Salt's key; default 3600 seconds). ``test=True`` answers ``{}``
without a request unless ``test_url`` is given, as Salt's does. Runs on the host (network):
never on the master for a template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from briny.common import httpquery
from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __opts__


def query(url: str, **kwargs: Any) -> dict[str, Any]:
    """One HTTP(S) request to ``url``: ``{"body": ...}`` and what the options ask for."""
    args = {k: v for k, v in kwargs.items() if not k.startswith("__")}
    timeout = float(__opts__.get("http_request_timeout") or 3600)
    try:
        return httpquery.query(url, timeout=timeout, **args)
    except ValueError as exc:
        raise CommandExecutionError(str(exc)) from None
