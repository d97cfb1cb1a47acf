"""Logging for every briny command and daemon, set up as Salt 3007 sets it up.

Runs once at process start (and again on a config change in tests); the
one owner of handlers on the root logger. Two destinations:

- the console (stderr) at ``-l/--log-level``, else the config's
  ``log_level``, formatted by ``log_fmt_console`` / ``log_datefmt``
  (daemons started with ``-d`` have no console);
- the log file ``log_file`` (``key_logfile`` for ``briny-key``) at
  ``--log-file-level``, else ``log_level_logfile``, else the config's
  ``log_level`` (``-l`` changes only the console, as in Salt), formatted by
  ``log_fmt_logfile`` / ``log_datefmt_logfile``. The file is a
  ``WatchedFileHandler`` (created 0640 in a 0750 folder), so a logrotate
  that renames it is followed at the next line; :func:`reopen_logfiles`
  (the daemons' SIGHUP) reopens it at once. ``log_rotate_max_bytes`` > 0
  rotates in-process instead, as Salt does; ``udp://HOST[:PORT][/FACILITY]``,
  ``tcp://...`` and ``file:///dev/log[/FACILITY]`` send to syslog.

``log_granular_levels`` sets the level of named loggers (briny's names, the
second column of the log file; Salt's ``salt``, ``salt.modules`` and
``salt.states`` are translated). Level names are Salt's (``all``,
``garbage``, ``trace``, ``debug``, ``profile``, ``info``, ``warning``,
``error``, ``critical``, ``quiet``). Console formats may use Salt's
``%(bracketlevel)s``, ``%(bracketname)s``, ``%(bracketprocess)s`` and the
``%(color...)s`` forms (coloured on a terminal).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import logging
import logging.handlers
import os
import socket
import sys
import time
from collections.abc import Iterator
from typing import Any, TextIO
from urllib.parse import urlsplit

from .exceptions import ConfigError

log = logging.getLogger(__name__)

TRACE, GARBAGE, PROFILE = 5, 1, 15
QUIET = 1000
LEVELS: dict[str, int] = {
    "all": GARBAGE,
    "garbage": GARBAGE,
    "trace": TRACE,
    "debug": logging.DEBUG,
    "profile": PROFILE,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "quiet": QUIET,
}
for _num, _name in ((TRACE, "TRACE"), (GARBAGE, "GARBAGE"), (PROFILE, "PROFILE"), (QUIET, "QUIET")):
    logging.addLevelName(_num, _name)

# Salt's defaults for the format keys (config.py holds them with the other defaults)
CONSOLE_FORMAT = "[%(levelname)-8s] %(message)s"
FILE_FORMAT = "%(asctime)s,%(msecs)03d [%(name)-17s:%(lineno)-4d][%(levelname)-8s][%(process)d] %(message)s"
CONSOLE_DATEFMT = "%H:%M:%S"
FILE_DATEFMT = "%Y-%m-%d %H:%M:%S"
FORMAT_KEYS = ("log_fmt_console", "log_fmt_logfile", "log_datefmt", "log_datefmt_logfile")

# Salt's logger names in log_granular_levels, and briny's for the same code
SALT_LOGGERS = {
    "salt": "briny",
    "salt.modules": "briny.loaded.modules",
    "salt.loaded.int.module": "briny.loaded.modules",
    "salt.states": "briny.loaded.states",
    "salt.loaded.int.states": "briny.loaded.states",
}
SYSLOG_SCHEMES = ("udp", "tcp", "file")
_COLOURS = {
    "TRACE": "\033[0;35m",
    "GARBAGE": "\033[0;35m",
    "DEBUG": "\033[0;36m",
    "PROFILE": "\033[0;36m",
    "INFO": "\033[0;32m",
    "WARNING": "\033[1;33m",
    "ERROR": "\033[1;31m",
    "CRITICAL": "\033[1;31m",
}
_RESET = "\033[0m"
_granular: set[str] = set()  # loggers whose level log_granular_levels set (reset on the next set-up)


def level_of(name: Any, default: int = logging.WARNING) -> int:
    """The numeric level of a Salt level name (``default`` for None or an unknown name)."""
    return LEVELS.get(str(name or "").lower(), default)


def is_syslog(path: Any) -> bool:
    """True for a ``log_file`` that names syslog (``udp://``, ``tcp://``, ``file://``), not a file."""
    return isinstance(path, str) and "://" in path and path.split("://", 1)[0].lower() in SYSLOG_SCHEMES


@contextlib.contextmanager
def timed(logger: logging.Logger, before: str, after: str, *args: Any) -> Iterator[None]:
    """Log ``before % args`` at ``debug`` ahead of the block and ``after % (*args, seconds)`` at
    ``profile`` when it ends (Salt's ``Time (in seconds) to render ...``); free when both are off."""
    if not logger.isEnabledFor(PROFILE):
        yield
        return
    logger.debug(before, *args)
    start = time.perf_counter()
    try:
        yield
    finally:
        logger.log(PROFILE, after, *args, time.perf_counter() - start)


# -- formatting --------------------------------------------------------------------------------------


class SaltFormatter(logging.Formatter):
    """A formatter that also fills Salt's ``bracket*`` and ``color*`` record fields when the
    format uses them (``colour``: with ANSI colours, for a terminal)."""

    def __init__(self, fmt: str, datefmt: str | None = None, colour: bool = False) -> None:
        super().__init__(fmt, datefmt)
        self._extras = "%(bracket" in fmt or "%(color" in fmt
        self._colour = colour

    def format(self, record: logging.LogRecord) -> str:
        if self._extras:
            level, name, proc = f"[{record.levelname:<8}]", f"[{record.name:<17}]", f"[{record.process:>5}]"
            record.bracketlevel, record.bracketname, record.bracketprocess = level, name, proc
            if self._colour:
                col = _COLOURS.get(record.levelname, "")
                record.colorlevel, record.colorname = f"{col}{level}{_RESET}", f"\033[1;34m{name}{_RESET}"
                record.colorprocess = f"\033[0;35m{proc}{_RESET}"
                record.colormsg = f"{col}{record.getMessage()}{_RESET}"
            else:
                record.colorlevel, record.colorname, record.colorprocess = level, name, proc
                record.colormsg = record.getMessage()
        return super().format(record)


def format_problem(fmt: Any) -> str | None:
    """Why ``fmt`` cannot format a log line (None when it can), checked on a probe record."""
    if not isinstance(fmt, str) or not fmt:
        return "must be a non-empty string"
    record = logging.LogRecord("briny.probe", logging.INFO, __file__, 1, "probe", None, None)
    try:
        SaltFormatter(fmt).format(record)
    except (ValueError, KeyError, TypeError) as exc:
        return f"is not a usable log format ({type(exc).__name__}: {exc})"
    return None


# -- handlers ----------------------------------------------------------------------------------------


class _Console(logging.StreamHandler[TextIO]):
    """stderr as it is at each write (CLIs and tests swap ``sys.stderr``), or a given stream."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__(stream)
        self._own = stream

    @property
    def stream(self) -> Any:
        return self._own if self._own is not None else sys.stderr

    @stream.setter
    def stream(self, value: Any) -> None:
        self._own = value


class _OwnModeFile:
    """Opens the log file 0640 (it may hold what a debug run logs), appending, close-on-exec."""

    baseFilename: str
    mode: str
    encoding: str | None
    errors: str | None

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o640)
        return open(fd, "a", encoding=self.encoding or "utf-8", errors=self.errors)


class _WatchedFile(_OwnModeFile, logging.handlers.WatchedFileHandler):
    """Follows a rename or removal (logrotate) at the next record."""


class _RotatingFile(_OwnModeFile, logging.handlers.RotatingFileHandler):
    """``log_rotate_max_bytes`` / ``log_rotate_backup_count``: rotates by itself."""


def _syslog_handler(url: str) -> logging.Handler:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    facility_name = "LOG_USER"
    path = parts.path
    last = path.rsplit("/", 1)[-1]
    if last.upper().startswith("LOG_"):
        facility_name, path = last.upper(), path[: -len(last) - 1]
    facility = logging.handlers.SysLogHandler.facility_names.get(facility_name[4:].lower())
    if facility is None:
        raise ConfigError(f"log_file {url!r}: unknown syslog facility {facility_name}")
    if scheme == "file":
        address: Any = path or "/dev/log"
        socktype = None
    else:
        address = (parts.hostname or "localhost", parts.port or 514)
        socktype = socket.SOCK_DGRAM if scheme == "udp" else socket.SOCK_STREAM
    return logging.handlers.SysLogHandler(address=address, facility=facility, socktype=socktype)


def _file_handler(path: str, opts: dict[str, Any]) -> logging.Handler:
    if is_syslog(path):
        return _syslog_handler(path)
    folder = os.path.dirname(path) or "."
    if not os.path.lexists(folder):
        os.makedirs(folder, mode=0o750, exist_ok=True)
    max_bytes = int(opts.get("log_rotate_max_bytes") or 0)
    if max_bytes > 0:
        return _RotatingFile(
            path, maxBytes=max_bytes, backupCount=int(opts.get("log_rotate_backup_count") or 0), encoding="utf-8"
        )
    return _WatchedFile(path, encoding="utf-8")


# -- set-up ------------------------------------------------------------------------------------------


def _own_handlers() -> list[logging.Handler]:
    return [h for h in logging.getLogger().handlers if getattr(h, "_briny", False)]


def _remove(kind: str | None = None) -> None:
    root = logging.getLogger()
    for handler in _own_handlers():
        if kind is None or getattr(handler, "_briny") == kind:
            root.removeHandler(handler)
            handler.close()


def _install(handler: logging.Handler, kind: str, level: int, formatter: logging.Formatter) -> None:
    handler._briny = kind  # type: ignore[attr-defined]  # marks the handlers we installed
    handler.setLevel(level)
    handler.setFormatter(formatter)
    logging.getLogger().addHandler(handler)


def _set_root_level() -> None:
    levels = [h.level for h in _own_handlers()]
    logging.getLogger().setLevel(min(levels) if levels else logging.WARNING)


def _console_colour(stream: TextIO | None) -> bool:
    target = stream if stream is not None else sys.stderr
    try:
        return bool(target.isatty()) and "NO_COLOR" not in os.environ
    except (AttributeError, ValueError):
        return False


def setup_console(
    level: Any = None, stream: TextIO | None = None, fmt: str = CONSOLE_FORMAT, datefmt: str = CONSOLE_DATEFMT
) -> None:
    """The console alone, before the config is read (``level`` None: warning)."""
    _remove("console")
    _install(_Console(stream), "console", level_of(level), SaltFormatter(fmt, datefmt, _console_colour(stream)))
    _set_root_level()


def _apply_granular(levels: Any) -> None:
    for name in _granular:
        logging.getLogger(name).setLevel(logging.NOTSET)
    _granular.clear()
    if not isinstance(levels, dict):
        return
    for name, level in levels.items():
        name = str(name)
        target = SALT_LOGGERS.get(name, name)
        if target.startswith("salt."):
            log.warning(
                "log_granular_levels: %r is a Salt logger name briny does not have; briny's "
                "loggers are named briny.* (the log file's second column); ignored",
                name,
            )
            continue
        logging.getLogger(target).setLevel(level_of(level))
        _granular.add(target)


def setup_logging(
    opts: dict[str, Any],
    *,
    console_level: Any = None,
    console: bool = True,
    file_key: str = "log_file",
    stream: TextIO | None = None,
) -> None:
    """Console and log file from ``opts`` (see the module docstring).

    ``console_level`` is ``-l`` (None: the config's ``log_level``); ``file_key``
    names the option holding the log file (empty: no file). Raises
    :class:`ConfigError` when the log file cannot be opened (the commands exit 2).
    """
    _remove()
    if console:
        fmt = str(opts.get("log_fmt_console") or CONSOLE_FORMAT)
        datefmt = str(opts.get("log_datefmt") or CONSOLE_DATEFMT)
        _install(
            _Console(stream),
            "console",
            level_of(console_level or opts.get("log_level")),
            SaltFormatter(fmt, datefmt, _console_colour(stream)),
        )
    path = opts.get(file_key)
    if path:
        path = str(path)
        try:
            handler = _file_handler(path, opts)
        except OSError as exc:
            _set_root_level()
            raise ConfigError(
                f"cannot open the log file {path}: {exc.strerror or exc}; set '{file_key}' in the config, or --log-file"
            ) from None
        fmt = str(opts.get("log_fmt_logfile") or FILE_FORMAT)
        datefmt = str(opts.get("log_datefmt_logfile") or FILE_DATEFMT)
        _install(
            handler,
            "file",
            level_of(opts.get("log_level_logfile") or opts.get("log_level")),
            SaltFormatter(fmt, datefmt),
        )
    _set_root_level()
    _apply_granular(opts.get("log_granular_levels"))
    log.debug(
        "logging to the console at %s and to %s at %s",
        (console_level or opts.get("log_level")) if console else "no level",
        path or "no file",
        opts.get("log_level_logfile") or opts.get("log_level"),
    )


def reopen_logfiles() -> list[str]:
    """Close and reopen every log file (a daemon's SIGHUP, after logrotate); the paths reopened."""
    reopened: list[str] = []
    for handler in _own_handlers():
        if not isinstance(handler, _OwnModeFile) or not isinstance(handler, logging.FileHandler):
            continue  # (each _OwnModeFile is a FileHandler too)
        handler.acquire()
        try:
            old = handler.stream
            handler.stream = handler._open()
            if old is not None:
                old.close()
            if isinstance(handler, logging.handlers.WatchedFileHandler):
                st = os.fstat(handler.stream.fileno())
                handler.dev, handler.ino = st.st_dev, st.st_ino
        except OSError as exc:
            log.error("cannot reopen the log file %s: %s", handler.baseFilename, exc.strerror or exc)
            continue
        finally:
            handler.release()
        reopened.append(handler.baseFilename)
    if reopened:
        log.info("reopened the log file %s (SIGHUP)", ", ".join(reopened))
    return reopened


def close() -> None:
    """Remove and close the handlers this module installed (tests; a process's end)."""
    _remove()
    _apply_granular(None)


# -- the command line --------------------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser, *, short: bool = True, default_file: str = "log_file") -> None:
    """Salt's logging options: ``-l/--log-level`` (``--log-level`` only when ``short`` is False,
    as briny-key uses ``-l`` for listing), ``--log-file``, ``--log-file-level``."""
    names = ("-l", "--log-level") if short else ("--log-level",)
    choices = list(LEVELS)
    parser.add_argument(
        *names,
        dest="log_level",
        choices=choices,
        metavar="LOG_LEVEL",
        help=f"console log level: {', '.join(choices)} (default: the config's log_level, warning)",
    )
    parser.add_argument("--log-file", dest="log_file", help=f"log file (default: the config's {default_file})")
    parser.add_argument(
        "--log-file-level",
        dest="log_file_level",
        choices=choices,
        metavar="LOG_LEVEL_LOGFILE",
        help="log file level (default: the config's log_level_logfile, else its log_level)",
    )


def cli_overrides(ns: argparse.Namespace, file_key: str = "log_file") -> dict[str, Any]:
    """The config overrides ``--log-file`` / ``--log-file-level`` make (``-l`` is the console's only)."""
    overrides: dict[str, Any] = {}
    if getattr(ns, "log_file", None):
        overrides[file_key] = ns.log_file if is_syslog(ns.log_file) else os.path.abspath(ns.log_file)
    if getattr(ns, "log_file_level", None):
        overrides["log_level_logfile"] = ns.log_file_level
    return overrides
