"""The token store of ``briny-api``: where logins live until they expire or log out.

Runs in ``briny-api``. A token is 40 random hex characters (:func:`secrets.token_hex`, as long
as Salt's); it is kept as a file ``<cachedir>/tokens/<sha256 of the token>`` (folder 0700,
files 0600: the master's state, its user only), holding the token's record (``token``,
``start``, ``expire``, ``user``, ``eauth``, ``perms``, ``groups``) as JSON. The file name is a
hash, so no token appears in a listing; a lookup compares the stored token with the given one
in constant time (:func:`hmac.compare_digest`). An expired token is removed when it is seen
and by :meth:`TokenStore.prune`. Tokens are never logged: log lines name the user.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import re
import secrets
import time
from typing import Any

from briny.common.atomicfile import write_atomic

log = logging.getLogger(__name__)

_TOKEN = re.compile(r"\A[0-9a-f]{40}\Z")


class TokenStore:
    def __init__(self, opts: dict[str, Any]) -> None:
        self.path = os.path.join(str(opts.get("cachedir") or "/var/cache/briny/master"), "tokens")
        os.makedirs(self.path, mode=0o700, exist_ok=True)
        os.chmod(self.path, 0o700)

    def _file(self, token: str) -> str:
        return os.path.join(self.path, hashlib.sha256(token.encode()).hexdigest())

    def create(self, record: dict[str, Any], lifetime: float) -> dict[str, Any]:
        token = secrets.token_hex(20)
        now = time.time()
        full = {**record, "token": token, "start": now, "expire": now + lifetime}
        write_atomic(self._file(token), json.dumps(full).encode(), mode=0o600)
        return full

    def get(self, token: Any) -> dict[str, Any] | None:
        """The record of a live token; None for a malformed, unknown or expired one."""
        if not isinstance(token, str) or not _TOKEN.match(token):
            return None
        path = self._file(token)
        try:
            with open(path, encoding="utf-8") as fh:
                record = json.load(fh)
        except (OSError, ValueError):
            return None
        if not isinstance(record, dict) or not hmac.compare_digest(str(record.get("token", "")), token):
            return None
        if float(record.get("expire", 0)) < time.time():
            with contextlib.suppress(OSError):
                os.unlink(path)
            log.info("api: the token of %s expired", record.get("user"))
            return None
        return record

    def remove(self, token: Any) -> bool:
        if not isinstance(token, str) or not _TOKEN.match(token):
            return False
        try:
            os.unlink(self._file(token))
        except OSError:
            return False
        return True

    def prune(self) -> int:
        """Remove expired tokens; how many."""
        gone = 0
        now = time.time()
        for name in os.listdir(self.path):
            path = os.path.join(self.path, name)
            try:
                with open(path, encoding="utf-8") as fh:
                    expire = float(json.load(fh).get("expire", 0))
            except (OSError, ValueError, AttributeError, TypeError):
                continue
            if expire < now:
                with contextlib.suppress(OSError):
                    os.unlink(path)
                    gone += 1
        return gone
