"""The config a minion reports to its master, and what the master takes of it.

A minion sends its config with its grains (the ``grains`` request) so that
the templates the master renders for it (``state_compile: auto|master``) see
``opts`` as they would on the minion, where Salt renders them. That report
comes from a host the master does not trust with its own machinery, so it is
data for templates and nothing else: the master's compiler, loader, file
client and every path it uses come from the master's own config.

One rule, applied by the minion before it sends (:func:`public_opts`) and
again by the master when it stores (:func:`accept_reported`), which never
trusts the minion's filtering:

- **never taken** (:func:`is_private`): internal keys (``_...``), ``grains``
  and ``pillar`` (sent and compiled apart), and every key that names a place,
  a way in, or a secret: paths, folders, files, file and pillar roots,
  module and extension locations, loader settings (``file_client``,
  ``extension_modules``, ``module_dirs``, ``autoload_dynamic_modules``...),
  sockets, ports, addresses of the master, keys, certificates, passwords,
  passphrases, tokens, credentials and fingerprints. A template reading one
  of them gets the minion's own value only by letting that minion compile for
  itself (``auto``);
- **compile settings** (:data:`COMPILE_KEYS`: the renderer, Jinja options,
  top file, ordering and requisite settings the compiler reads): kept only
  to compare with the master's own; the master always compiles with its own,
  and in ``auto`` a compile that reads one whose value differs for this
  minion is left to the minion;
- **everything else**: plain data (strings, numbers, booleans, None, lists
  and maps, nested at most :data:`MAX_DEPTH` deep), each key at most
  :data:`KEY_MAX` characters and each value at most :data:`VALUE_MAX` bytes
  packed; a report of more than :data:`MAX_KEYS` keys, or whose kept part
  is over :data:`REPORT_MAX` bytes, is refused whole (the master then knows
  nothing of that minion's config).

``saltenv`` and ``pillarenv`` must be names (or None) and ``test`` a
boolean: they are the minion's defaults for its jobs, as in Salt.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard

import msgpack

from .digest import data_digest

log = logging.getLogger(__name__)

REPORT_MAX = 64 * 1024  # bytes, the whole report packed
VALUE_MAX = 16 * 1024  # bytes, one value packed
KEY_MAX = 128  # characters of one key
MAX_DEPTH = 16  # nesting of one value
MAX_KEYS = 1024  # keys of the whole report

# what the compiler and the Jinja environment read from opts (common/state/render.py, jinja.py,
# highstate.py, top.py, compiler.py): compared with the master's own, never used
COMPILE_KEYS = frozenset(
    {
        "renderer",
        "jinja_env",
        "jinja_sls_env",
        "jinja_trim_blocks",
        "jinja_lstrip_blocks",
        "allow_undefined",
        "state_auto_order",
        "env_order",
        "state_top",
        "state_top_saltenv",
        "top_file_merging_strategy",
        "default_top",
        "disabled_requisites",
        "nodegroups",
    }
)
# the minion's defaults for its jobs (typed below)
JOB_KEYS = frozenset({"saltenv", "pillarenv", "test"})

PRIVATE_KEYS = frozenset(
    {
        "grains",
        "pillar",
        "id_function",
        "root_dir",
        "conf_dir",
        "conf_file",
        "config_dir",
        "cachedir",
        "pidfile",
        "extension_modules",
        "file_client",
        "file_roots",
        "pillar_roots",
        "module_dirs",
        "autoload_dynamic_modules",
        "clean_dynamic_modules",
        "extmod_whitelist",
        "extmod_blacklist",
        "fileserver_backend",
        "master",
        "master_uri",
        "master_ip",
        "master_port",
        "publish_port",
        "ret_port",
        "interface",
        "ipc_mode",
        "tcp_pub_port",
        "tcp_pull_port",
        "master_finger",
        "master_sign_key_name",
        "ext_pillar",
        "gpg_keydir",
        "sign_pub_messages",
    }
)
# a key whose last word names a place, a way in or a secret (words split on . _ : -)
_PRIVATE_WORD = re.compile(
    r"(?:^|[._:-])(?:dir|dirs|file|files|path|paths|root|roots|socket|sockets|sock|logfile|pidfile|"
    r"modules|port|ports|uri|url|host|key|keys|pem|pub|cert|certs|crt|pass|passwd|password|"
    r"passphrase|secret|secrets|token|tokens|finger|fingerprint|hash)$",
    re.IGNORECASE,
)
# ... or holds one of these anywhere
_PRIVATE_PART = re.compile(r"password|passwd|passphrase|secret|token|private|credential|apikey|api_key", re.IGNORECASE)
_ENV_RE = re.compile(r"\A[A-Za-z0-9_.@+-]{1,255}\Z")


def is_env_name(value: Any) -> TypeGuard[str]:
    """Whether ``value`` is a saltenv or pillarenv name: letters, digits and ``. _ - @ +``."""
    return isinstance(value, str) and _ENV_RE.match(value) is not None and value not in (".", "..")


def is_private(key: str) -> bool:
    """Whether the master must never take ``key`` from a minion's config (see the module docstring)."""
    return (
        not key
        or key.startswith("_")
        or key in PRIVATE_KEYS
        or _PRIVATE_WORD.search(key) is not None
        or _PRIVATE_PART.search(key) is not None
    )


def _plain(value: Any, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return False
    if value is None or isinstance(value, (str, bytes, bool, int, float)):
        return type(value) in (str, bytes, bool, int, float) or value is None
    if type(value) in (list, tuple):
        return all(_plain(v, depth + 1) for v in value)
    if type(value) is dict:
        return all(isinstance(k, (str, int)) and _plain(v, depth + 1) for k, v in value.items())
    return False


def _size(value: Any) -> int:
    try:
        return len(msgpack.packb(value, use_bin_type=True))
    except (TypeError, ValueError, OverflowError):
        return REPORT_MAX + 1


def _why_not(key: Any, value: Any) -> str | None:
    """Why ``key: value`` is not taken, or None when it is."""
    if not isinstance(key, str) or len(key) > KEY_MAX:
        return "not a config key"
    if is_private(key):
        return "private"
    if not _plain(value):
        return "not plain data"
    if _size(value) > VALUE_MAX:
        return f"over {VALUE_MAX} bytes"
    if key in ("saltenv", "pillarenv") and value is not None and not is_env_name(value):
        return "not an environment name"
    if key == "test" and not isinstance(value, bool):
        return "not a boolean"
    return None


def public_opts(opts: Mapping[str, Any]) -> dict[str, Any]:
    """What a minion tells its master of its config (with its grains): the keys the master may take."""
    return {k: v for k, v in opts.items() if _why_not(k, v) is None}


@dataclass(frozen=True)
class ReportedConfig:
    """What the master took of one minion's reported config (see the module docstring)."""

    data: dict[str, Any]  # the keys templates may read, with the minion's values
    refused: frozenset[str]  # keys it reported that the master did not take
    digest: str  # of ``data`` (a compile cache key part)

    def knows(self, key: str) -> bool:
        """Whether the master knows the minion's value of ``key`` (or that it has none)."""
        return not is_private(key) and key not in self.refused


def accept_reported(reported: Any, minion_id: str) -> ReportedConfig | None:
    """What the master keeps of a minion's reported config; None (and logged) when it takes
    nothing: not a map, or over :data:`REPORT_MAX` bytes."""
    if not isinstance(reported, Mapping):
        if reported is not None:
            log.warning("%s reported a config that is not a map; the master ignores it", minion_id)
        return None
    if len(reported) > MAX_KEYS:
        log.warning(
            "%s reported a config of over %d keys; the master ignores it (its templates that "
            "read opts are compiled on the minion)",
            minion_id,
            MAX_KEYS,
        )
        return None
    data: dict[str, Any] = {}
    refused: dict[str, str] = {}
    for key, value in reported.items():
        why = _why_not(key, value)
        if why is None:
            data[key] = value
        else:
            refused[str(key)[:KEY_MAX]] = why
    if _size(data) > REPORT_MAX:
        log.warning(
            "%s reported a config over %d bytes; the master ignores it (its templates that "
            "read opts are compiled on the minion)",
            minion_id,
            REPORT_MAX,
        )
        return None
    private = sorted(k for k, why in refused.items() if why == "private")
    if private:
        # a briny minion never sends these: an old or a hostile one does
        log.warning(
            "%s reported config keys the master never takes (paths, module locations, sockets, keys, secrets): %s",
            minion_id,
            ", ".join(private[:20]),
        )
    other = sorted(f"{k} ({why})" for k, why in refused.items() if why != "private")
    if other:
        log.warning("%s reported config values the master does not take: %s", minion_id, ", ".join(other[:20]))
    return ReportedConfig(data, frozenset(refused), data_digest(data))
