"""Job ids: Salt's ``YYYYMMDDhhmmssffffff`` form, unique within a process.

Runs on the master (jobs) and in ``briny-call`` (local runs).
"""

from __future__ import annotations

import datetime
import re
import threading

_lock = threading.Lock()
_last = ""
JID_RE = re.compile(r"^\d{20}$")


def gen_jid() -> str:
    """A new jid, strictly greater than the previous one from this process."""
    global _last
    with _lock:
        jid = datetime.datetime.now().strftime("%Y%m%d%H%M%S%f")
        if jid <= _last:
            jid = str(int(_last) + 1)
        _last = jid
        return jid


def is_jid(value: object) -> bool:
    return isinstance(value, str) and bool(JID_RE.match(value))
