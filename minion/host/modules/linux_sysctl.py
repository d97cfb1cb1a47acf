"""Execution module ``sysctl``: kernel parameters on Linux (Salt 3007's ``linux_sysctl``).

``show`` (every live value from ``sysctl -a``, or the ``key = value``
lines of a config file: ``[]`` when it does not exist, None when it cannot
be read), ``get`` (``sysctl -n``, its output as Salt gives it, error text
included), ``assign`` (``sysctl -w``; ``{key: value}`` as the kernel echoes
it), ``persist`` (the config file, then the live value: ``"Updated"`` or
``"Already set"``) and ``default_config`` (``/etc/sysctl.d/99-salt.conf``
where systemd 207 or later is running, else ``/etc/sysctl.conf``).

Salt's errors: ``sysctl NAME does not exist`` (no ``/proc/sys`` entry),
``sysctl -w failed: OUTPUT`` (the kernel refused the value: a read-only
key, an invalid value; on such keys ``sysctl -w`` exits 0 with an empty
output, so the message ends there, as Salt's does), ``Could not read from
file: F`` / ``Could not write to file: F``. As in Salt, ``persist`` writes
the config file before it sets the live value, so a value the kernel
refuses stays in the file.

The config file is rewritten atomically (owner and mode kept), every other
line untouched; a new file starts with Salt's ``# Kernel sysctl
configuration`` header, in a folder created as needed. Differences from
Salt, on purpose: a key written on several lines is settled by all of them
(Salt looks at the first only, though the last one wins at boot), and a
file whose last line has no newline gets one before the new line (Salt
glues the two lines together).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.sysfiles.replace import read_text, replace_text

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __salt__

log = logging.getLogger(__name__)

__virtualname__ = "sysctl"
_HEADER = "#\n# Kernel sysctl configuration\n#\n"


def __virtual__() -> Any:
    if __grains__.get("kernel") != "Linux":
        return False, "The linux_sysctl execution module cannot be loaded: only available on Linux systems."
    return __virtualname__


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _sysctl() -> str:
    found = shutil.which("sysctl") or next(
        (p for p in ("/usr/sbin/sysctl", "/sbin/sysctl") if os.access(p, os.X_OK)), None
    )
    if not found:
        raise CommandExecutionError("Command 'sysctl' cannot be found")
    return found


def _systemd_version() -> int:
    out = _salt("cmd.run_all")(["systemctl", "--version"], python_shell=False, ignore_retcode=True)
    found = re.match(r"systemd (\d+)", str(out.get("stdout", "")))
    return int(found.group(1)) if found else 0


def default_config(**kwargs: Any) -> str:
    """Where ``persist`` writes when no config file is named."""
    if os.path.isdir("/run/systemd/system") and shutil.which("systemctl") and _systemd_version() >= 207:
        return "/etc/sysctl.d/99-salt.conf"
    return "/etc/sysctl.conf"


def show(config_file: Any = False, **kwargs: Any) -> Any:
    """Live values (``sysctl -a``), or those of ``config_file``."""
    out: dict[str, str] = {}
    if config_file:
        if not os.path.exists(str(config_file)):
            return []
        try:
            text = read_text(str(config_file), errors="surrogateescape") or ""
        except OSError:
            log.error("Could not open sysctl file")
            return None
        for line in text.splitlines():
            line = line.strip()
            if not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                out[key.rstrip()] = value.lstrip()
        return out
    listing = _salt("cmd.run_stdout")([_sysctl(), "-a"], output_loglevel="trace", python_shell=False)
    for line in str(listing).splitlines():
        if " = " in line:
            key, value = line.split(" = ", 1)
            out[key] = value
    return out


def get(name: str, **kwargs: Any) -> str:
    """The live value of ``name`` (``sysctl -n``; sysctl's error text when it has none)."""
    return str(_salt("cmd.run")([_sysctl(), "-n", str(name)], python_shell=False))


def assign(name: str, value: Any, **kwargs: Any) -> dict[str, str]:
    """Set ``name`` live; ``{name: value}`` as the kernel reports it."""
    name, value = str(name), str(value)
    if not os.path.exists("/proc/sys/" + name.translate(str.maketrans("./", "/."))):
        raise CommandExecutionError(f"sysctl {name} does not exist")
    data = _salt("cmd.run_all")([_sysctl(), "-w", f"{name}={value}"], python_shell=False)
    out, err = str(data.get("stdout", "")), str(data.get("stderr", ""))
    if not re.match(rf"^{re.escape(name)}\s+=\s+{re.escape(value)}$", out) or "Invalid argument" in err:
        error = err if data.get("retcode") and err else out
        raise CommandExecutionError(f"sysctl -w failed: {error}")
    new_name, new_value = out.split(" = ", 1)
    return {new_name: new_value}


def _same(a: Any, b: Any) -> bool:
    """Values compared as the kernel shows them (white space runs are one tab)."""
    return re.sub(r"\s+", "\t", str(a).strip()) == re.sub(r"\s+", "\t", str(b).strip())


def persist(name: str, value: Any, config: str | None = None, **kwargs: Any) -> str:
    """Write ``name = value`` into ``config`` and set it live: ``Updated`` or ``Already set``."""
    name = str(name)
    config = str(config) if config else default_config()
    try:
        text = read_text(config, errors="surrogateescape")
    except OSError:
        raise CommandExecutionError(f"Could not read from file: {config}") from None
    lines = (_HEADER if text is None else text).splitlines(keepends=True)
    mine = []
    for i, line in enumerate(lines):
        if "=" not in line:
            continue
        key, current = (part.strip() for part in line.split("=", 1))
        if key == name and not key.startswith("#"):
            mine.append((i, current))
    if mine and all(_same(current, value) for _, current in mine):
        if _same(get(name), value):
            return "Already set"
        assign(name, value)
        return "Updated"
    for i, _ in mine:
        lines[i] = f"{name} = {value}\n"
    if not mine:
        if lines and not lines[-1].endswith("\n"):
            lines[-1] += "\n"
        lines.append(f"{name} = {value}\n")
    try:
        folder = os.path.dirname(config)
        if folder and not os.path.isdir(folder):
            os.makedirs(folder)
        replace_text(config, "".join(lines), errors="surrogateescape")
    except OSError:
        raise CommandExecutionError(f"Could not write to file: {config}") from None
    assign(name, value)
    return "Updated"
