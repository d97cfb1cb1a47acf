"""Execution module ``config``: one lookup across config, grains and pillar.

Runs wherever ``__salt__`` does (minion, ``briny-call``, master-side
rendering). ``config.get`` looks in Salt 3007's order and returns the first
hit: the minion config (``__opts__``), grains, pillar, the master config
published in pillar under ``master``, then a few built-in defaults. Keys may
be nested (``a:b:c``). With ``merge='recurse'`` (or ``'overwrite'``) the
sources are merged instead, lowest priority first (defaults, master, pillar,
grains, config), and the key is looked up in the result.
"""

from __future__ import annotations

import copy
import fnmatch
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from briny.common.dictupdate import merge as _dict_merge
from briny.common.traverse import DEFAULT_DELIM
from briny.common.traverse import traverse as _traverse

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __opts__, __pillar__


log = logging.getLogger(__name__)

_MISSING = object()

# Defaults some Salt modules expect config.get to know about.
DEFAULTS: dict[str, Any] = {
    "mongo.db": "salt",
    "mongo.password": "",
    "mongo.port": 27017,
    "mongo.user": "",
    "redis.db": "0",
    "redis.host": "localhost",
    "redis.port": 6379,
    "test.foo": "unconfigured",
    "ca.cert_base_path": "/etc/pki",
    "solr.cores": [],
    "solr.host": "localhost",
    "solr.port": "8983",
    "solr.baseurl": "/solr",
    "solr.type": "master",
    "solr.request_timeout": None,
    "solr.init_script": "/etc/rc.d/solr",
    "solr.dih.import_options": {"clean": False, "optimize": True, "commit": True, "verbose": False},
    "solr.backup_path": None,
    "solr.num_backups": 1,
    "poudriere.config": "/usr/local/etc/poudriere.conf",
    "poudriere.config_dir": "/usr/local/etc/poudriere.d",
    "ldap.uri": "",
    "ldap.server": "localhost",
    "ldap.port": "389",
    "ldap.tls": False,
    "ldap.no_verify": False,
    "ldap.anonymous": True,
    "ldap.scope": 2,
    "ldap.attrs": None,
    "ldap.binddn": "",
    "ldap.bindpw": "",
    "hosts.file": "/etc/hosts",
    "aliases.file": "/etc/aliases",
    "virt": {"tunnel": False, "images": "/srv/salt-images"},
    "docker.exec_driver": "docker-exec",
    "docker.compare_container_networks": {
        "static": ["Aliases", "Links", "IPAMConfig"],
        "automatic": ["IPAddress", "Gateway", "GlobalIPv6Address", "IPv6Gateway"],
    },
}


def _merge(dest: dict[str, Any], upd: Mapping[str, Any], strategy: str, merge_lists: bool) -> dict[str, Any]:
    return _dict_merge(dest, dict(upd), strategy if strategy == "overwrite" else "recurse", "yaml", merge_lists)


def _sources(omit_opts: bool, omit_grains: bool, omit_pillar: bool, omit_master: bool) -> list[Mapping[str, Any]]:
    """Highest priority first."""
    pillar = __pillar__ or {}
    out: list[Mapping[str, Any]] = []
    if not omit_opts:
        out.append(__opts__)
    if not omit_grains:
        out.append(__grains__ or {})
    if not omit_pillar:
        out.append(pillar)
    if not omit_master:
        master = pillar.get("master", {})
        out.append(master if isinstance(master, Mapping) else {})
    return out


def get(
    key: str,
    default: Any = "",
    delimiter: str = DEFAULT_DELIM,
    merge: str | None = None,
    omit_opts: bool = False,
    omit_pillar: bool = False,
    omit_master: bool = False,
    omit_grains: bool = False,
    **kwargs: Any,
) -> Any:
    """The value of ``key`` from config, grains, pillar, master config, defaults; else ``default``."""
    sources = _sources(omit_opts, omit_grains, omit_pillar, omit_master)
    if merge is None:
        for source in sources:
            ret = _traverse(source, key, _MISSING, delimiter)
            if ret is not _MISSING:
                return ret
        ret = _traverse(DEFAULTS, key, _MISSING, delimiter)
        return default if ret is _MISSING else ret
    if merge not in ("recurse", "overwrite"):
        log.warning("Unsupported merge strategy '%s'. Falling back to 'recurse'.", merge)
        merge = "recurse"
    merge_lists = bool(__opts__.get("pillar_merge_lists", False))
    data: dict[str, Any] = copy.deepcopy(DEFAULTS)
    for source in reversed(sources):
        data = _merge(data, copy.deepcopy(dict(source)), merge, merge_lists)
    ret = _traverse(data, key, _MISSING, delimiter)
    return default if ret is _MISSING else ret


def merge(
    value: str,
    default: Any = "",
    omit_opts: bool = False,
    omit_master: bool = False,
    omit_pillar: bool = False,
    **kwargs: Any,
) -> Any:
    """``value`` from the config, the master config in pillar and the pillar, combined (Salt's
    ``config.merge``): the first text found wins; maps are merged (an earlier source's keys win),
    lists are joined in that order; else the defaults, else ``default``."""
    pillar = __pillar__ or {}
    master = pillar.get("master", {})
    sources = [
        (omit_opts, __opts__),
        (omit_master, master if isinstance(master, Mapping) else {}),
        (omit_pillar, pillar),
    ]
    ret: Any = None
    for omitted, source in sources:
        if omitted or value not in source:
            continue
        found = source[value]
        if ret is None:
            ret = found
            if isinstance(ret, str):
                return ret
        elif isinstance(ret, dict) and isinstance(found, dict):
            ret = {**found, **ret}
        elif isinstance(ret, (list, tuple)) and isinstance(found, (list, tuple)):
            ret = list(ret) + list(found)
    if ret is None:
        return DEFAULTS.get(value, default)
    return ret


def option(
    value: str,
    default: Any = "",
    omit_opts: bool = False,
    omit_grains: bool = False,
    omit_pillar: bool = False,
    omit_master: bool = False,
    omit_all: bool = False,
    wildcard: bool = False,
    **kwargs: Any,
) -> Any:
    """The value of the top-level key ``value`` (no nesting); ``wildcard=True`` globs keys."""
    if omit_all:
        omit_opts = omit_grains = omit_pillar = omit_master = True
    sources = _sources(omit_opts, omit_grains, omit_pillar, omit_master) + [DEFAULTS]
    if wildcard:
        found: dict[str, Any] = {}
        for source in sources:
            for key, val in source.items():
                if isinstance(key, str) and fnmatch.fnmatchcase(key, value) and key not in found:
                    found[key] = val
        return found if found else default
    for source in sources:
        if value in source:
            return source[value]
    return default


def items(**kwargs: Any) -> dict[str, Any]:
    """The minion configuration."""
    return dict(__opts__)


def valid_fileproto(uri: str, **kwargs: Any) -> bool:
    """True when ``uri`` uses a protocol the file client can fetch."""
    return uri.partition("://")[0] in ("salt", "file", "http", "https", "ftp", "s3", "swift")


def dot_vals(value: str, **kwargs: Any) -> dict[str, Any]:
    """Config and pillar keys that start with ``value.``."""
    ret: dict[str, Any] = {}
    prefix = f"{value}."
    for source in (__pillar__ or {}, __opts__):
        for key, val in source.items():
            if isinstance(key, str) and key.startswith(prefix):
                ret[key] = val
    return ret
