"""HTTP basic-auth credentials in URLs: put in, and redacted from what is shown.

Pure (strings in, strings out, the standard library only), so state modules
may import it as well as execution modules (``tests/unit/test_imports.py``
lists the pure modules state modules may use). The git execution module puts
``https_user`` / ``https_pass`` into the URLs it hands to git, and both it and
the git states show those URLs (and git's messages about them) redacted, as
Salt 3007 does: ``https://user:pass@host/x`` becomes
``https://<redacted>@host/x``.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, overload
from urllib.parse import quote, urlparse, urlunparse

_T = TypeVar("_T")
_CREDENTIALS = re.compile(r"(https?)://.*@", re.IGNORECASE)


def add_http_basic_auth(url: str, user: Any = None, password: Any = None, https_only: bool = False) -> str:
    """``url`` with ``user[:password]@`` in its network location, each percent-encoded.

    Unchanged when both are None. Raises ``ValueError("Basic Auth only supported for HTTPS")``
    (Salt's words) for a URL that is not ``https://`` when ``https_only``.
    """
    if user is None and password is None:
        return url
    parts = urlparse(url)
    if https_only and parts.scheme != "https":
        raise ValueError("Basic Auth only supported for HTTPS")
    userinfo = quote(str(user), safe="")
    if password is not None:
        userinfo += ":" + quote(str(password), safe="")
    return urlunparse(parts._replace(netloc=f"{userinfo}@{parts.netloc}"))


@overload
def redact_http_basic_auth(text: str) -> str: ...
@overload
def redact_http_basic_auth(text: _T) -> _T: ...


def redact_http_basic_auth(text: Any) -> Any:
    """``text`` with what stands between ``http(s)://`` and the last ``@`` replaced by
    ``<redacted>``; anything but a string is returned as it is."""
    if not isinstance(text, str):
        return text
    return _CREDENTIALS.sub(r"\1://<redacted>@", text)
