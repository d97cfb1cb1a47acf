"""The rules for event tags a minion forwards to the master (``docs/PROTOCOL.md``, "Event tags").

Runs on the master's loop, for every ``event`` request; pure data in, data
out. One function decides, so every check sees the same tag:

1. **Normalise.** Surrounding whitespace goes, the tag is split on ``/``,
   each segment loses its surrounding whitespace and empty segments are
   dropped: ``" salt/key"``, ``"salt//key"`` and ``"salt/key/"`` all become
   ``salt/key``. What is fired is the normalised tag.
2. **Refuse** (``WireError``): a tag that is not a string, is empty once
   normalised, is longer than :data:`MAX_TAG` characters or holds a control
   character; and the master's own tags, compared without regard to case:
   ``salt/auth/...``, ``salt/key/...``, ``salt/job/<jid>/new/...`` and
   Salt's master namespaces ``salt/run/...`` and ``salt/wheel/...``.
3. **Bind to the sender.** ``salt/state_result/<jid>/<id>/...``,
   ``salt/job/<jid>/ret/<id>``, ``salt/job/<jid>/prog/<id>/...`` and
   ``salt/minion/<id>/...`` get the sender's id in their id segment (a
   rewrite is logged); events under ``salt/state_result/`` and
   ``salt/job/``, and any rewritten one, get ``data["id"]`` set to the
   sender by the caller (:attr:`MinionTag.bound`).
4. **Job returns.** ``salt/job/<jid>/ret/<id>`` names the job it claims to
   return for (:attr:`MinionTag.ret_jid`, ``""`` when the segment is not a
   jid): the master accepts it only from a minion that job targets, as it
   does a ``ret`` request.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from briny.common.exceptions import WireError
from briny.common.ids import valid_jid

log = logging.getLogger(__name__)

MAX_TAG = 1024
MASTER_NAMESPACES = frozenset({"auth", "key", "run", "wheel"})   # salt/<these>/...: the master's own
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class MinionTag:
    """A forwarded tag once checked: what to fire, and what the caller must still check."""

    tag: str
    bound: bool              # set data["id"] to the sender
    ret_jid: str | None      # a job return tag: the jid it names ("" when that is not a jid)


def _short(value: str) -> str:
    return value if len(value) <= 64 else value[:61] + "..."


def normalize_tag(tag: object) -> str:
    """The tag in its one form (see the module docstring); WireError when it is not a tag."""
    if not isinstance(tag, str):
        raise WireError(f"an event needs a 'tag' string, not {type(tag).__name__}")
    if len(tag) > MAX_TAG:
        raise WireError(f"an event tag must be at most {MAX_TAG} characters")
    if _CONTROL.search(tag):
        raise WireError("an event tag must not hold control characters")
    parts = [p.strip() for p in tag.split("/")]
    norm = "/".join(p for p in parts if p)
    if not norm:
        raise WireError("an event needs a non-empty 'tag'")
    return norm


def _master_only(parts: list[str]) -> bool:
    low = [p.lower() for p in parts[:4]]
    if len(low) >= 2 and low[0] == "salt" and low[1] in MASTER_NAMESPACES:
        return True
    return len(low) >= 4 and low[:2] == ["salt", "job"] and low[3] == "new"


def check_event_tag(tag: str, minion_id: str) -> str:
    """``tag`` with its minion-id segment set to ``minion_id`` (rule 3; no normalising)."""
    parts = tag.split("/")
    index = None
    if len(parts) >= 4 and parts[:2] == ["salt", "state_result"]:
        index = 3
    elif len(parts) >= 5 and parts[:2] == ["salt", "job"] and parts[3] in ("ret", "prog"):
        index = 4
    elif len(parts) >= 3 and parts[:2] == ["salt", "minion"]:
        index = 2
    if index is not None and parts[index] != minion_id:
        log.warning("event tag %r from %s names another minion; rewritten to its own id",
                    _short(tag), minion_id)
        parts[index] = minion_id
        return "/".join(parts)
    return tag


def minion_tag(tag: object, minion_id: str) -> MinionTag:
    """Every rule of the module docstring for one tag ``minion_id`` forwards; WireError when
    it is refused."""
    norm = normalize_tag(tag)
    parts = norm.split("/")
    if _master_only(parts):
        raise WireError(f"minions cannot fire {_short(norm)!r} (a tag only the master fires)")
    bound = check_event_tag(norm, minion_id)
    ret_jid = None
    if len(parts) >= 4 and parts[:2] == ["salt", "job"] and parts[3] == "ret":
        ret_jid = parts[2] if valid_jid(parts[2]) else ""
    return MinionTag(bound, bound != norm or norm.startswith(("salt/state_result/", "salt/job/")), ret_jid)
