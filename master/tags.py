"""The rules for event tags a minion forwards to the master (``docs/PROTOCOL.md``, "Event tags").

Runs on the master's loop, for every ``event`` request; pure data in, data
out. One function (:func:`minion_tag`) decides, so every check sees the
same tag:

1. **Read in normal form.** For every decision the tag is read as its
   segments: split on ``/``, each segment stripped of surrounding
   whitespace, empty segments dropped, compared without regard to case
   (``" salt/key"``, ``"salt//key"``, ``"SALT/Key/"`` all read as
   ``salt/key``).
2. **Refused** (``WireError``): a tag that is not a string, is empty or
   longer than :data:`MAX_TAG` characters, or holds a control character;
   the master's own tags in any spelling: ``salt/auth/...``,
   ``salt/key/...``, ``salt/job/<jid>/new/...``, Salt's master
   namespaces ``salt/run/...`` and ``salt/wheel/...``, and briny's
   ``salt/event/...`` (dropped notices) and ``salt/reactor/...``; and a ``salt/`` tag
   whose fixed part (``salt/<namespace>``, plus ``<jid>/<id>`` for
   ``state_result``, ``<jid>/ret|prog/<id>`` for ``job``, ``<id>`` for
   ``minion``) is not written exactly in normal form (a space, an empty
   segment or another case there is refused, not guessed at).
3. **Fired as sent** otherwise: the free part after the fixed part keeps its
   empty segments (Salt's ``salt/state_result/<jid>/<id>//etc/motd`` for a
   file state), and tags outside ``salt/`` are not touched (as Salt).
4. **Bound to the sender.** The id segment of
   ``salt/state_result/<jid>/<id>/...``, ``salt/job/<jid>/ret/<id>``,
   ``salt/job/<jid>/prog/<id>/...`` and ``salt/minion/<id>/...`` becomes
   the sender's (a rewrite is logged); events under ``salt/state_result/``
   and ``salt/job/``, and any rewritten one, get ``data["id"]`` set to the
   sender by the caller (:attr:`MinionTag.bound`).
5. **Job returns.** ``salt/job/<jid>/ret...`` names the job it claims to
   return for (:attr:`MinionTag.ret_jid`, ``""`` when that is not a jid):
   the master takes it only from a minion that job targets, as a ``ret``.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from briny.common.exceptions import WireError
from briny.common.ids import valid_jid

log = logging.getLogger(__name__)

MAX_TAG = 1024
# salt/<these>/...: the master's own (event: the bus's dropped notices; reactor: the reactor's outcomes)
MASTER_NAMESPACES = frozenset({"auth", "key", "run", "wheel", "event", "reactor"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class MinionTag:
    """A forwarded tag once checked: what to fire, and what the caller must still check."""

    tag: str
    bound: bool  # set data["id"] to the sender
    ret_jid: str | None  # a job return tag: the jid it names ("" when that is not a jid)


def _short(value: str) -> str:
    return value if len(value) <= 64 else value[:61] + "..."


def tag_segments(tag: str) -> list[str]:
    """The tag's segments in normal form (rule 1, case kept); WireError when it is no tag (rule 2)."""
    if len(tag) > MAX_TAG:
        raise WireError(f"an event tag must be at most {MAX_TAG} characters")
    if _CONTROL.search(tag):
        raise WireError("an event tag must not hold control characters")
    parts = [p for p in (s.strip() for s in tag.split("/")) if p]
    if not parts:
        raise WireError("an event needs a non-empty 'tag'")
    return parts


def _master_only(low: list[str]) -> bool:
    if len(low) >= 2 and low[0] == "salt" and low[1] in MASTER_NAMESPACES:
        return True
    return len(low) >= 4 and low[:2] == ["salt", "job"] and low[3] == "new"


def _fixed_length(low: list[str]) -> int:
    """How many leading segments of a ``salt/`` tag are its fixed part (rule 2)."""
    if low[1:2] == ["state_result"]:
        return 4
    if low[1:2] == ["job"]:
        return 5 if len(low) >= 4 and low[3] in ("ret", "prog") else 3
    if low[1:2] == ["minion"]:
        return 3
    return 2


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
        log.warning("event tag %r from %s names another minion; rewritten to its own id", _short(tag), minion_id)
        parts[index] = minion_id
        return "/".join(parts)
    return tag


def minion_tag(tag: object, minion_id: str) -> MinionTag:
    """Every rule of the module docstring for one tag ``minion_id`` forwards; WireError when
    it is refused."""
    if not isinstance(tag, str):
        raise WireError(f"an event needs a 'tag' string, not {type(tag).__name__}")
    parts = tag_segments(tag)
    low = [p.lower() for p in parts]
    if _master_only(low):
        raise WireError(f"minions cannot fire {_short(tag)!r} (a tag only the master fires)")
    if low[0] != "salt":
        return MinionTag(tag, False, None)
    fixed = min(_fixed_length(low), len(low))
    # the words salt/<namespace>(/ret|prog) in lower case; jids and ids as they are
    words = (0, 1, 3) if low[1] == "job" else (0, 1)
    normal = [low[i] if i in words else parts[i] for i in range(fixed)]
    if tag.split("/")[:fixed] != normal:
        raise WireError(
            f"the tag {_short(tag)!r} must be written {'/'.join(normal)!r}... (no spaces, "
            "empty segments or capitals in the fixed part of a salt/ tag)"
        )
    bound = check_event_tag(tag, minion_id)
    ret_jid = None
    if len(low) >= 4 and low[:2] == ["salt", "job"] and low[3] == "ret":
        ret_jid = parts[2] if valid_jid(parts[2]) else ""
    return MinionTag(bound, bound != tag or tag.startswith(("salt/state_result/", "salt/job/")), ret_jid)
