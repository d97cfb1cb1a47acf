"""Configuration: Salt's keys and defaults for master and minion.

Runs in every process at start. ``load_minion_config(DIR)`` reads
``DIR/minion`` (and ``DIR/minion.d/*.conf``), ``load_master_config(DIR)``
reads ``DIR/master``; both return a plain ``dict`` (the ``__opts__`` modules
see). Values are type-checked against the defaults; a wrong type is a
:class:`ConfigError` naming the key, the file and what was expected.

Paths (``pki_dir``, ``cachedir``, ``sock_dir``, ``log_file``, ``pidfile``,
``key_logfile``, ``extension_modules``) live under ``root_dir`` the way Salt
places them: a relative path is joined to ``root_dir``, and an absolute one not
already under it is re-rooted there (a syslog ``log_file`` URL is left as it is).

Code reads a setting through one accessor, never restating its default:
:func:`setting` (the value, or its default when unset), :func:`number` (a
positive number: seconds, milliseconds), :func:`count` (a positive
integer) and :func:`limit` (a positive integer, or no limit). The defaults
are the tables below (``MINION_DEFAULTS``, ``MASTER_DEFAULTS``); a value
that cannot be used (zero or negative where a positive number is needed)
falls back to the default with a warning naming the key, once.
``ping_interval`` is the one setting whose 0 (Salt's default: no
heartbeat) means something else in briny: a heartbeat every 10 s
(:data:`ZERO_MEANS`).

Their defaults are briny's own, never Salt's: a host may still run Salt, and
briny must not take its keys, pidfiles, sockets, caches or logs
(``/etc/briny/pki/{master,minion}``, ``/var/cache/briny/{master,minion}``,
``/var/log/briny/{master,minion,key}``, ``/run/briny/{master,minion}`` and
``/run/briny/briny-{master,minion}.pid``). The state and pillar trees keep
Salt's defaults (``/srv/salt``, ``/srv/pillar``): running the same trees is
the point.
"""

from __future__ import annotations

import copy
import logging
import os
import socket
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from .exceptions import ConfigError
from .numbers import non_negative, positive
from .logsetup import CONSOLE_DATEFMT, CONSOLE_FORMAT, FILE_DATEFMT, FILE_FORMAT, FORMAT_KEYS, LEVELS
from .logsetup import format_problem, is_syslog

log = logging.getLogger(__name__)

_NUMBER = (int, float)

COMMON_DEFAULTS: dict[str, Any] = {
    "root_dir": "/",
    "log_level": "warning",
    "log_level_logfile": None,
    "log_fmt_console": CONSOLE_FORMAT,
    "log_fmt_logfile": FILE_FORMAT,
    "log_datefmt": CONSOLE_DATEFMT,
    "log_datefmt_logfile": FILE_DATEFMT,
    "log_granular_levels": {},
    "log_rotate_max_bytes": 0,
    "log_rotate_backup_count": 0,
    "file_roots": {"base": ["/srv/salt", "/srv/spm/salt"]},
    "pillar_roots": {"base": ["/srv/pillar", "/srv/spm/pillar"]},
    "state_top": "top.sls",
    "state_top_saltenv": None,
    "top_file_merging_strategy": "merge",
    "env_order": [],
    "default_top": "base",
    "renderer": "jinja|yaml",
    "state_auto_order": True,
    "state_output": "full",
    "state_verbose": True,
    "state_output_diff": False,
    "failhard": False,
    "test": False,
    "saltenv": None,
    "pillarenv": None,
    "hash_type": "sha256",
    "fileserver_followsymlinks": True,
    "pillar_safe_render_error": True,
    "pillar_source_merging_strategy": "smart",
    "pillar_merge_lists": False,
    "color": True,
    "jinja_env": {},
    "jinja_sls_env": {},
    "allow_undefined": False,
    "timeout": 5,
    "keep_jobs": 24,
    "reactor": [],
    "nodegroups": {},
    "transport": "zeromq",
}

# the event bus and the reactor (docs/events.md): one block, so other config work merges easily
EVENT_DEFAULTS: dict[str, Any] = {
    "event_listener_hwm": 10000,  # events the bus holds for one slow listener before it drops (and says so)
    "event_sender_hwm": 10000,  # events a firing process holds while the bus is busy before it drops (and says so)
}
REACTOR_DEFAULTS: dict[str, Any] = {
    "reactor_worker_threads": 10,  # reactions running at once (Salt's key and default)
    "reactor_worker_hwm": 10000,  # reactions waiting for a worker before new ones are dropped (and reported)
}
COMMON_DEFAULTS.update(EVENT_DEFAULTS)
# storing the master's events (Salt's event_return; master/eventreturn.py): off by default, as in Salt
EVENT_RETURN_DEFAULTS: dict[str, Any] = {
    "event_return": "",  # job_cache (or a Salt SQL returner's name, read as job_cache): store them
    "event_return_whitelist": [],  # tag globs: only these are stored
    "event_return_blacklist": [],  # tag globs: these are not stored
    "event_return_queue": 0,  # Salt's batch size; briny batches on its own (a warning says so)
    "event_return_queue_max_seconds": 0,
}

MINION_DEFAULTS: dict[str, Any] = {
    **COMMON_DEFAULTS,
    "id": None,
    "master": "salt",
    "master_port": 4506,
    "publish_port": 4505,
    "master_finger": "",
    "file_client": "remote",
    "pki_dir": "/etc/briny/pki/minion",
    "cachedir": "/var/cache/briny/minion",
    "sock_dir": "/run/briny/minion",
    "log_file": "/var/log/briny/minion",
    "pidfile": "/run/briny/briny-minion.pid",
    "extension_modules": "",
    # briny's own: masterless, also load the file roots' _modules/_states/_grains in place, without
    # a sync (Salt loads them only once synced: a highstate, saltutil.sync_*, sync_mods=)
    "custom_modules_from_roots": False,
    "grains": {},
    "pillar": {},
    "state_compile": "auto",
    "acceptance_wait_time": 10,
    "random_reauth_delay": 10,
    "recon_default": 1000,
    "recon_max": 10000,
    "ping_interval": 0,
    "auth_timeout": 10,
    "shutdown_grace": 5,
    "outbox_max": 1000,  # returns and events kept while no master takes them (docs/events.md)
    "multiprocessing": True,
    "process_count_max": -1,
    "startup_states": "",
    "mine_enabled": True,
    "mine_interval": 60,
    "file_buffer_size": 262144,  # bytes per cp.push request
    "http_connect_timeout": 20.0,
}

MASTER_DEFAULTS: dict[str, Any] = {
    **COMMON_DEFAULTS,
    "id": None,
    "interface": "0.0.0.0",  # noqa: S104 - Salt's default: the master serves its minions on every interface
    "publish_port": 4505,
    "ret_port": 4506,
    "pki_dir": "/etc/briny/pki/master",
    "cachedir": "/var/cache/briny/master",
    "sock_dir": "/run/briny/master",
    "log_file": "/var/log/briny/master",
    "key_logfile": "/var/log/briny/key",
    "pidfile": "/run/briny/briny-master.pid",
    "extension_modules": "",
    "auto_accept": False,
    "worker_threads": 5,
    # what peers without a session may make the master hold (docs/PROTOCOL.md, "Frame limits")
    "ret_send_hwm": 32,  # replies queued per connection to the request port
    "ret_max_connections": 10000,  # connections to the request port
    "auth_peer_rate": 100,  # hellos, auths and refusals answered a second per connection
    "pub_hwm": 1000,  # publishes queued per connection to the publish port (Salt's key and default)
    "pub_max_connections": 10000,  # connections to the publish port
    "gather_job_timeout": 10,
    "state_compile": "auto",
    "state_compile_cache": 10000,  # compiles the master keeps (master/compile.py): one per minion and job kind
    "job_cache": "sqlite",
    "key_store": "files",  # or postgres: the minion keys shared by several masters (master/keys/pg.py)
    "fileserver_list_cache_time": 1,
    # gitfs (master/gitfs.py, docs/GITFS.md); per-remote parameters override the gitfs_* ones
    "fileserver_backend": ["roots"],
    "fileserver_events": False,  # fire salt/fileserver/gitfs/update after each gitfs update
    "gitfs_remotes": [],
    "gitfs_update_interval": 60,
    "gitfs_timeout": 60,  # briny's own: seconds one git command may take before it is killed
    "gitfs_base": "master",
    "gitfs_root": "",
    "gitfs_mountpoint": "",
    "gitfs_saltenv": [],
    "gitfs_ref_types": ["branch", "tag", "sha"],
    "gitfs_user": "",
    "gitfs_password": "",
    "gitfs_insecure_auth": False,
    "gitfs_pubkey": "",
    "gitfs_privkey": "",
    "gitfs_passphrase": "",
    "gitfs_ssl_verify": True,
    "gitfs_disable_saltenv_mapping": False,
    "gitfs_fallback": "",
    "gitfs_saltenv_whitelist": [],
    "gitfs_saltenv_blacklist": [],
    "pillar_allow_py": False,
    **REACTOR_DEFAULTS,
    **EVENT_RETURN_DEFAULTS,
    "file_recv": False,  # cp.push: minions may send files to the master (master/filerecv.py)
    "file_recv_max_size": 100,  # MB per pushed file
    "salt_cp_chunk_size": 98304,  # bytes per briny-cp -C job
}

# settings whose 0 (or unset) means another value than their default says, in briny
ZERO_MEANS: dict[str, float] = {"ping_interval": 10.0}  # Salt's 0 is "no heartbeat"; briny's minions always beat

PATH_KEYS = ("pki_dir", "cachedir", "sock_dir", "log_file", "key_logfile", "pidfile", "extension_modules")
LOG_LEVELS = tuple(LEVELS)


def _type_name(value: Any) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a mapping",
    }.get(type(value), type(value).__name__)


STR_OR_LIST = frozenset({"master", "event_return"})  # a string, or a list of strings
STR_OR_BOOL = frozenset({"job_cache"})  # a string, or Salt's boolean (job_cache: True, Salt's own default)


def _check_types(opts: dict[str, Any], defaults: dict[str, Any], source: str) -> None:
    for key, default in defaults.items():
        if key not in opts or default is None or opts[key] is None:
            continue
        val = opts[key]
        if isinstance(default, bool):
            ok = isinstance(val, bool)
        elif isinstance(default, _NUMBER):
            ok = isinstance(val, _NUMBER) and not isinstance(val, bool)
        elif isinstance(default, str) and key in STR_OR_BOOL and isinstance(val, bool):
            ok = True  # read where it is used (briny.master.jobcache.base.backend)
        elif isinstance(default, str) and key in STR_OR_LIST and isinstance(val, list):
            ok = all(isinstance(v, str) for v in val)  # several masters (briny.minion.masters)
        elif isinstance(default, str):
            ok = isinstance(val, (str, int, float)) and not isinstance(val, bool)
            if ok and not isinstance(val, str):
                opts[key] = str(val)
        elif isinstance(default, list):
            ok = isinstance(val, list)
        elif isinstance(default, dict):
            ok = isinstance(val, dict)
        else:
            ok = True
        if not ok:
            raise ConfigError(f"{source}: '{key}' must be {_type_name(default)}, not {_type_name(val)} ({val!r})")
    for key in ("file_roots", "pillar_roots"):
        roots = opts.get(key)
        if isinstance(roots, dict):
            for env, dirs in roots.items():
                if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
                    raise ConfigError(f"{source}: '{key}:{env}' must be a list of directories")
    _check_logging(opts, source)


def _check_logging(opts: dict[str, Any], source: str) -> None:
    for key in ("log_level", "log_level_logfile"):
        level = opts.get(key)
        if level is not None and str(level).lower() not in LOG_LEVELS:
            raise ConfigError(f"{source}: '{key}' must be one of {', '.join(LOG_LEVELS)}, not {level!r}")
    for name, level in (opts.get("log_granular_levels") or {}).items():
        if str(level).lower() not in LOG_LEVELS:
            raise ConfigError(
                f"{source}: 'log_granular_levels:{name}' must be one of {', '.join(LOG_LEVELS)}, not {level!r}"
            )
    for key in FORMAT_KEYS:
        if key in opts and key.startswith("log_fmt"):
            problem = format_problem(opts[key])
            if problem:
                raise ConfigError(f"{source}: '{key}' {problem}")


def _rooted(root_dir: str, path: str) -> str:
    if not path:
        return path
    root = os.path.abspath(root_dir)
    if not os.path.isabs(path):
        return os.path.join(root, path)
    if root == "/" or path == root or path.startswith(root + os.sep):
        return path
    return os.path.join(root, path.lstrip(os.sep))


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror}") from exc
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {path} is not valid YAML: {exc}") from exc
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path} must hold a mapping of keys, not {_type_name(data)}")
    return data


def apply_config(overrides: dict[str, Any], defaults: dict[str, Any], source: str = "config") -> dict[str, Any]:
    """Defaults + overrides, type-checked, with paths placed under root_dir."""
    opts = copy.deepcopy(defaults)
    opts.update(overrides)
    _check_types(opts, defaults, source)
    for key in PATH_KEYS:
        if key == "extension_modules" and not opts.get(key):
            opts[key] = os.path.join(str(opts.get("cachedir", "")), "extmods")
            continue
        if isinstance(opts.get(key), str) and not is_syslog(opts[key]):
            opts[key] = _rooted(str(opts["root_dir"]), opts[key])
    if opts.get("extension_modules") and not os.path.isabs(opts["extension_modules"]):
        opts["extension_modules"] = _rooted(str(opts["root_dir"]), opts["extension_modules"])
    return opts


def _load(
    config_dir: str | os.PathLike[str] | None, name: str, defaults: dict[str, Any], overrides: dict[str, Any] | None
) -> dict[str, Any]:
    data: dict[str, Any] = {}
    source = name
    if config_dir is not None:
        cdir = Path(config_dir)
        path = cdir / name
        source = str(path)
        if path.is_file():
            log.debug("Reading configuration from %s", path)
            data.update(_read_yaml(path))
        elif not cdir.is_dir():
            raise ConfigError(f"config directory {cdir} does not exist")
        else:
            log.debug("No %s config file in %s; using the defaults", name, cdir)
        dropins = cdir / f"{name}.d"
        if dropins.is_dir():
            for extra in sorted(dropins.glob("*.conf")):
                log.debug("Reading configuration from %s", extra)
                data.update(_read_yaml(extra))
        data.setdefault("conf_dir", str(cdir))
        data.setdefault("conf_file", str(path))
    data.update(overrides or {})
    opts = apply_config(data, {**defaults, "conf_dir": "", "conf_file": ""}, source)
    opts["__role"] = name
    return opts


def load_minion_config(
    config_dir: str | os.PathLike[str] | None = None, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The minion's ``__opts__``: ``config_dir/minion`` over Salt's defaults."""
    opts = _load(config_dir, "minion", MINION_DEFAULTS, overrides)
    if not opts.get("id"):
        opts["id"] = socket.gethostname()
    return opts


def load_master_config(
    config_dir: str | os.PathLike[str] | None = None, overrides: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The master's opts: ``config_dir/master`` over Salt's defaults."""
    opts = _load(config_dir, "master", MASTER_DEFAULTS, overrides)
    if not opts.get("id"):
        opts["id"] = socket.gethostname() + "_master"
    return opts


# -- reading settings: the defaults above, in one place ----------------------------------------

_ROLES = {"master": MASTER_DEFAULTS, "minion": MINION_DEFAULTS}
_warned: set[tuple[str, str]] = set()


def default(key: str, role: str | None = None) -> Any:
    """The default of ``key`` for ``role`` (``master`` or ``minion``): needed only for a key
    whose master and minion defaults differ (the paths). ConfigError for a key briny does not
    know (a programming error: add it to the tables)."""
    table = _ROLES.get(role or "")
    if table is not None and key in table:
        return table[key]
    master, minion = MASTER_DEFAULTS.get(key, ...), MINION_DEFAULTS.get(key, ...)
    if master is not ... and minion is not ... and master != minion:
        raise ConfigError(f"'{key}' has a master default and a minion default; the caller must say which")
    for value in (master, minion):
        if value is not ...:
            return value
    raise ConfigError(f"'{key}' is not a setting briny knows")


def setting(opts: Mapping[str, Any], key: str, role: str | None = None) -> Any:
    """``opts[key]``, or its default (:func:`default`) when it is unset (missing, None or an empty
    string). ``role`` defaults to the config's own (``opts["__role"]``, set by the loaders)."""
    value = opts.get(key)
    return value if value is not None and value != "" else default(key, role or opts.get("__role"))


def _unusable(key: str, value: Any, wanted: str, fallback: Any) -> None:
    if value is None or (key in ZERO_MEANS and value == 0):
        return
    mark = (key, repr(value))
    if mark not in _warned:
        _warned.add(mark)
        log.warning("config: '%s' must be %s, not %r; using %s", key, wanted, value, fallback)


def number(opts: Mapping[str, Any], key: str, *, zero: bool = False) -> float:
    """The positive number ``key`` holds (with ``zero``: 0 too), else :data:`ZERO_MEANS` or its
    default (an unusable value is named in a warning)."""
    value = opts.get(key)
    found = (non_negative if zero else positive)(value, None)
    if found is not None:
        return found
    fallback = float(ZERO_MEANS.get(key, default(key, opts.get("__role"))))
    _unusable(key, value, "a number of 0 or more" if zero else "a positive number", fallback)
    return fallback


def _whole(value: Any) -> int | None:
    """A number of 1 or more, as an int (rounded down, as ``int()``); None for anything else."""
    found = positive(value, None)
    return int(found) if found is not None and found >= 1 else None


def count(opts: Mapping[str, Any], key: str) -> int:
    """The positive integer ``key`` holds, else its default (an unusable value is named in a
    warning)."""
    value = opts.get(key)
    whole = _whole(value)
    if whole is not None:
        return whole
    fallback = int(default(key, opts.get("__role")))
    _unusable(key, value, "a positive integer", fallback)
    return fallback


def limit(opts: Mapping[str, Any], key: str) -> int | None:
    """The positive integer ``key`` holds, or None for no limit (0 or less, Salt's -1, unset)."""
    return _whole(setting(opts, key))
