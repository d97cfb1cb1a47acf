"""Running apt and dpkg for the apt ``pkg`` execution module (a private sibling of
``aptpkg.py``, which imports it, as ``_apt_repos.py`` does): commands run non-interactively with
a timeout, dpkg's database read once per job (``__context__``, dropped after every change),
apt-get's errors, and ``refresh_db`` (``apt-get update``). See ``aptpkg.py``'s docstring."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError


if TYPE_CHECKING:
    from briny.common.dunders import __context__, __opts__, __salt__

_APT_ENV = {"DEBIAN_FRONTEND": "noninteractive", "APT_LISTBUGS_FRONTEND": "none", "APT_LISTCHANGES_FRONTEND": "none"}
_QUERY_TIMEOUT = 120
_CTX_LIST = "pkg._list_pkgs"
_CTX_ARCH = "pkg._arch"


def _timeout(key: str, default: int) -> int:
    try:
        return int(__opts__.get(key, default))
    except (TypeError, ValueError):
        return default


def _run(cmd: list[str], timeout: int = _QUERY_TIMEOUT, apt_env: bool = False) -> dict[str, Any]:
    env = dict(_APT_ENV) if apt_env else {}
    return __salt__["cmd.run_all"](
        cmd, python_shell=False, env=env, timeout=timeout, ignore_retcode=True, output_loglevel="trace"
    )


def _clear_cache() -> None:
    __context__.pop(_CTX_LIST, None)


def _native_arch() -> str:
    ctx = __context__
    if _CTX_ARCH not in ctx:
        out = _run(["dpkg", "--print-architecture"])
        ctx[_CTX_ARCH] = out["stdout"].strip() if out["retcode"] == 0 else ""
    return str(ctx[_CTX_ARCH])


def _query() -> dict[str, dict[str, str]]:
    """Every package dpkg knows: name -> {want, status, version, arch}."""
    ctx = __context__
    if _CTX_LIST in ctx:
        return ctx[_CTX_LIST]
    out = _run(["dpkg-query", "--showformat=${Status}\t${Package}\t${Version}\t${Architecture}\n", "-W"])
    if out["retcode"] != 0 and not out["stdout"]:
        raise CommandExecutionError(f"dpkg-query failed: {out['stderr'] or out['stdout']}")
    native = _native_arch()
    pkgs: dict[str, dict[str, str]] = {}
    for line in out["stdout"].splitlines():
        parts = line.split("\t")
        if len(parts) != 4:
            continue
        status, name, version, arch = parts
        words = status.split()
        if len(words) != 3:
            continue
        if arch and arch not in ("all", native) and native:
            name = f"{name}:{arch}"
        pkgs[name] = {"want": words[0], "status": words[2], "version": version, "arch": arch}
    ctx[_CTX_LIST] = pkgs
    return pkgs


def _installed_map() -> dict[str, str]:
    return {
        n: p["version"]
        for n, p in _query().items()
        if p["status"]
        in ("installed", "half-configured", "unpacked", "half-installed", "triggers-awaited", "triggers-pending")
    }


def _config_only_map() -> dict[str, str]:
    return {n: p["version"] for n, p in _query().items() if p["status"] == "config-files"}


def _apt_error(out: dict[str, Any]) -> str:
    text = (out.get("stderr") or "").strip() or (out.get("stdout") or "").strip()
    return text or f"apt-get exited with status {out.get('retcode')}"


def refresh_db(cache_valid_time: int = 0, failhard: bool = False, **kwargs: Any) -> dict[str, Any]:
    """``apt-get -q update``: ``{source: True (fetched) / False (unchanged or
    failed) / None (ignored)}``."""
    _clear_cache()
    if cache_valid_time:
        stamp = "/var/lib/apt/periodic/update-success-stamp"
        try:
            if time.time() - os.path.getmtime(stamp) < int(cache_valid_time):
                return {}
        except OSError:
            pass
    out = _run(["apt-get", "-q", "update"], timeout=_timeout("pkg_refresh_timeout", 600), apt_env=True)
    ret: dict[str, Any] = {}
    errors = []
    for line in out["stdout"].splitlines():
        head, _, rest = line.partition(" ")
        kind = head.split(":", 1)[0]
        if kind not in ("Get", "Hit", "Ign", "Err"):
            continue
        source = rest.rsplit(" [", 1)[0].strip()
        ret[source] = {"Get": True, "Hit": False, "Ign": None, "Err": False}[kind]
        if kind == "Err":
            errors.append(source)
    if out["retcode"] != 0 and (failhard or not ret):
        raise CommandExecutionError(f"Error getting repos: {_apt_error(out)}")
    if errors and failhard:
        raise CommandExecutionError(f"Error getting repos: {', '.join(errors)}")
    return ret
