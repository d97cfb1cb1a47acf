"""Execution module ``pkg`` on Debian/Ubuntu: packages through apt-get and dpkg.

Runs on the managed host (minion / ``briny-call``), never on the master. It
answers to the name ``pkg`` where the grains say ``os_family: Debian`` (as Salt's
``__virtual__`` decides) and ``dpkg-query`` and ``apt-get`` exist.

Behaviour follows Salt 3007's apt module as observed on Debian 12:

- apt-get always runs non-interactively: ``DEBIAN_FRONTEND=noninteractive``,
  ``APT_LISTBUGS_FRONTEND=none``, ``APT_LISTCHANGES_FRONTEND=none``, ``-q -y``,
  and installs keep existing config files
  (``-o DPkg::Options::=--force-confold -o DPkg::Options::=--force-confdef``).
  Downgrades and changes to held packages are refused by apt, as in Salt.
- ``list_pkgs`` is ``{name: version}`` (``name:arch`` for foreign
  architectures); ``install`` / ``remove`` return
  ``{name: {"old": ..., "new": ...}}``; ``purge`` returns
  ``{"removed": {...}, "installed": {...}}`` (packages that were only
  config files, and packages that were installed).
- A failed apt-get raises :class:`CommandExecutionError` whose ``info`` is
  ``{"changes": ..., "errors": [apt's message]}``.
- Repositories: ``list_repos``, ``get_repo``, ``mod_repo``, ``del_repo`` and
  the keys (``get_repo_keys``, ``add_repo_key``, ``del_repo_key``), in
  ``_apt_repos.py``, with :mod:`briny.minion.host.aptrepo` doing the work (its
  docstring says where briny differs from Salt: atomic writes, deb822
  ``.sources`` files).

Every command is bounded by a timeout (``pkg_timeout`` / ``pkg_refresh_timeout``
in the config, 1800 s and 600 s by default). Running apt and dpkg, reading dpkg's
database and ``refresh_db`` are in ``_apt_cmd.py``.
"""

from __future__ import annotations

import fnmatch
import logging
import os
import shutil
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from ._apt_cmd import (
    _apt_error,
    _clear_cache,
    _config_only_map,
    _installed_map,
    _query,
    _run,
    _timeout,
    refresh_db,
)
from ._pkg_common import package_names as _names
from ._pkg_common import version_changes as _diff
from ._apt_repos import (
    add_repo_key,
    del_repo,
    del_repo_key,
    expand_repo_def,
    get_repo,
    get_repo_keys,
    list_repos,
    mod_repo,
)

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __opts__, __salt__


log = logging.getLogger(__name__)

__virtualname__ = "pkg"

# the execution functions: those defined here and those of the private files imported above
__all__ = [
    "add_repo_key",
    "available_version",
    "bin_pkg_info",
    "compare_versions",
    "del_repo",
    "del_repo_key",
    "expand_repo_def",
    "get_repo",
    "get_repo_keys",
    "hold",
    "install",
    "latest_version",
    "list_holds",
    "list_pkgs",
    "list_repo_pkgs",
    "list_repos",
    "mod_repo",
    "purge",
    "refresh_db",
    "remove",
    "unhold",
    "upgrade_available",
    "version",
    "version_cmp",
    "version_matches",
]

_CONF_OPTS = ["-o", "DPkg::Options::=--force-confold", "-o", "DPkg::Options::=--force-confdef"]
_OPS = (">=", "<=", "!=", "==", ">", "<", "=")


def __virtual__() -> Any:
    provider = (__opts__.get("providers") or {}).get("pkg")
    if provider and provider not in ("apt", "aptpkg"):
        return (False, f"pkg provider is set to {provider}")
    if __grains__.get("os_family") != "Debian":  # as Salt: the grains choose, not the tools found
        return (False, "The pkg module could not be loaded: unsupported OS family")
    if shutil.which("dpkg-query") and shutil.which("apt-get"):
        return __virtualname__
    return (False, "the apt pkg module needs dpkg-query and apt-get")


# ---------------------------------------------------------------------------
# versions
# ---------------------------------------------------------------------------


def compare_versions(ver1: str = "", oper: str = "==", ver2: str = "", **kwargs: Any) -> bool:
    """``dpkg --compare-versions`` (``oper`` is ``<``, ``<=``, ``==``, ``>=``, ``>``, ``!=``)."""
    ops = {"<": "lt", "<=": "le", "==": "eq", "=": "eq", ">=": "ge", ">": "gt", "!=": "ne"}
    if oper not in ops:
        raise SaltInvocationError(f"Invalid version comparison operator {oper!r}")
    out = _run(["dpkg", "--compare-versions", str(ver1), ops[oper], str(ver2)])
    return bool(out["retcode"] == 0)


def version_cmp(pkg1: str, pkg2: str, **kwargs: Any) -> int:
    """-1, 0 or 1 as ``pkg1`` is older than, equal to or newer than ``pkg2``."""
    if compare_versions(pkg1, "<", pkg2):
        return -1
    if compare_versions(pkg1, "==", pkg2):
        return 0
    return 1


def version_matches(installed: str, spec: str, **kwargs: Any) -> bool:
    """Whether the installed version satisfies ``spec``: exact, ``=v``,
    an operator (``>=1.0``, ``<2``...) or a glob (``1.0*``)."""
    installed, spec = str(installed), str(spec).strip()
    if not installed:
        return False
    for op in _OPS:
        if spec.startswith(op):
            want = spec[len(op) :].strip()
            return compare_versions(installed, "==" if op == "=" else op, want)
    if any(c in spec for c in "*?["):
        return fnmatch.fnmatchcase(installed, spec)
    return installed == spec or compare_versions(installed, "==", spec)


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------


def list_pkgs(
    versions_as_list: bool = False, removed: bool = False, purge_desired: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """Installed packages ``{name: version}``; ``removed=True``: the ones
    that left only their config files behind."""
    pkgs = _config_only_map() if removed else _installed_map()
    if versions_as_list:
        return {n: [v] for n, v in sorted(pkgs.items())}
    return dict(sorted(pkgs.items()))


def version(*names: str, **kwargs: Any) -> Any:
    """Installed version of one package (``""`` when absent), or a dict for several."""
    if not names:
        raise SaltInvocationError("version() needs at least one package name")
    pkgs = _installed_map()
    if len(names) == 1:
        return pkgs.get(names[0], "")
    return {n: pkgs.get(n, "") for n in names}


def _policy(names: Iterable[str]) -> dict[str, dict[str, str]]:
    out = _run(["apt-cache", "-q", "policy", *names])
    found: dict[str, dict[str, str]] = {}
    current: str | None = None
    for line in out["stdout"].splitlines():
        if line and not line.startswith(" ") and line.endswith(":"):
            current = line[:-1]
            found[current] = {}
        elif current is not None and line.startswith("  ") and ":" in line and not line.startswith("    "):
            key, _, val = line.strip().partition(":")
            found[current][key.strip().lower()] = val.strip()
    return found


def latest_version(
    *names: str, refresh: bool = True, show_installed: bool = False, fromrepo: str | None = None, **kwargs: Any
) -> Any:
    """The version apt would install, when it is newer than the installed one
    (``""`` otherwise, or when apt knows no such package)."""
    if not names:
        return ""
    if refresh and not __opts__.get("test"):
        refresh_db()
    policy = _policy(names)
    installed = _installed_map()
    ret: dict[str, str] = {}
    for name in names:
        cand = policy.get(name, {}).get("candidate", "")
        if cand in ("(none)", ""):
            ret[name] = ""
            continue
        cur = installed.get(name, "")
        if not cur or show_installed or compare_versions(cand, ">", cur):
            ret[name] = cand
        else:
            ret[name] = ""
    return ret[names[0]] if len(names) == 1 else ret


def list_repo_pkgs(*args: str, **kwargs: Any) -> dict[str, list[str]]:
    """The versions the repositories offer: ``{name: [version, ...]}`` in apt's order (newest
    first), for the packages named (``name`` or ``name=version``, as ``apt-cache show`` takes
    them) or for every package; a name apt does not know is left out."""
    out = _run(["apt-cache", "show", *args] if args else ["apt-cache", "dump"])
    found: dict[str, list[str]] = {}
    current: str | None = None
    for line in out["stdout"].splitlines():
        key, _, val = line.strip().partition(" ")
        if line.startswith("Package:"):
            current = val.strip()
        elif current is not None and key == "Version:":
            versions = found.setdefault(current, [])
            if val.strip() not in versions:
                versions.append(val.strip())
    return found


def available_version(*names: str, **kwargs: Any) -> Any:
    """Alias of :func:`latest_version`."""
    return latest_version(*names, **kwargs)


def upgrade_available(name: str, **kwargs: Any) -> bool:
    return latest_version(name, **kwargs) != ""


def bin_pkg_info(path: str, saltenv: str = "base", **kwargs: Any) -> dict[str, str]:
    """``{"name", "version", "arch"}`` read from a ``.deb`` (local or ``salt://``)."""
    local: Any = path
    if str(path).startswith("salt://"):
        local = __salt__["cp.cache_file"](path, saltenv)
    if not local or not os.path.isfile(str(local)):
        raise CommandExecutionError(f"{path} does not exist on minion")
    out = _run(["dpkg-deb", "-f", str(local), "Package", "Version", "Architecture"])
    if out["retcode"] != 0:
        raise CommandExecutionError(f"{path} is not a valid .deb: {_apt_error(out)}")
    fields: dict[str, str] = {}
    for line in out["stdout"].splitlines():
        key, _, val = line.partition(":")
        fields[key.strip().lower()] = val.strip()
    return {
        "name": fields.get("package", ""),
        "version": fields.get("version", ""),
        "arch": fields.get("architecture", ""),
    }


# ---------------------------------------------------------------------------
# changes
# ---------------------------------------------------------------------------


def _targets(name: str | None, pkgs: Any, sources: Any, version: str | None, saltenv: str) -> list[str]:
    targets: list[str] = []
    if sources:
        if not isinstance(sources, list):
            raise SaltInvocationError("'sources' must be a list of {name: path} mappings")
        for item in sources:
            if isinstance(item, dict):
                paths = [str(v) for v in item.values()]
            else:
                paths = [str(item)]
            for src in paths:
                local = src
                if src.startswith("salt://"):
                    local = __salt__["cp.cache_file"](src, saltenv)
                    if not local:
                        raise CommandExecutionError(f"Unable to cache {src}")
                elif src.startswith("file://"):
                    local = src[len("file://") :]
                if not os.path.isfile(str(local)):
                    raise CommandExecutionError(f"{src} does not exist on minion")
                targets.append(os.path.abspath(str(local)))
        return targets
    if pkgs:
        if not isinstance(pkgs, list):
            raise SaltInvocationError("'pkgs' must be a list")
        for item in pkgs:
            if isinstance(item, dict):
                for pname, pver in item.items():
                    targets.append(_pin(str(pname), None if pver is None else str(pver)))
            else:
                targets.append(str(item))
        return targets
    if not name:
        raise SaltInvocationError("No package name, 'pkgs' or 'sources' given")
    return [_pin(str(name), None if version is None else str(version))]


def _pin(name: str, ver: str | None) -> str:
    if not ver:
        return name
    ver = ver.strip()
    if ver.startswith("="):
        ver = ver.lstrip("=")
    elif ver[:1] in "<>!":
        return name  # a range: apt installs its candidate; the state checks the result
    return f"{name}={ver}"


def install(
    name: str | None = None,
    refresh: bool = False,
    fromrepo: str | None = None,
    skip_verify: bool = False,
    debconf: Any = None,
    pkgs: Any = None,
    sources: Any = None,
    reinstall: bool = False,
    downloadonly: bool = False,
    version: str | None = None,
    saltenv: str = "base",
    **kwargs: Any,
) -> dict[str, Any]:
    """Install packages from the repositories (``name`` / ``pkgs``, with
    versions) or local ``.deb`` files (``sources``); returns the changes."""
    targets = _targets(name, pkgs, sources, version, saltenv)
    if refresh:
        refresh_db()
    cmd = ["apt-get", "-q", "-y", *_CONF_OPTS]
    if skip_verify:
        cmd.append("--allow-unauthenticated")
    if fromrepo:
        cmd += ["-t", str(fromrepo)]
    if downloadonly:
        cmd.append("--download-only")
    if reinstall:
        cmd.append("--reinstall")
    cmd += ["install", *targets]
    old = _installed_map()
    out = _run(cmd, timeout=_timeout("pkg_timeout", 1800), apt_env=True)
    _clear_cache()
    changes = _diff(old, _installed_map())
    if out["retcode"] != 0:
        raise CommandExecutionError(
            "Problem encountered installing package(s)", info={"changes": changes, "errors": [_apt_error(out)]}
        )
    return changes


def _remove(action: str, name: str | None, pkgs: Any) -> dict[str, Any]:
    names = _names(name, pkgs)
    installed = _installed_map()
    config_only = _config_only_map() if action == "purge" else {}
    targets = [n for n in names if n in installed or n in config_only]
    if not targets:
        return {"removed": {}, "installed": {}} if action == "purge" else {}
    out = _run(["apt-get", "-q", "-y", action, *targets], timeout=_timeout("pkg_timeout", 1800), apt_env=True)
    _clear_cache()
    new_installed = _installed_map()
    changes: dict[str, Any] = _diff(installed, new_installed)
    if action == "purge":
        left = _config_only_map()
        gone = {n: {"new": "", "old": ""} for n in config_only if n not in left and n not in new_installed}
        changes = {"removed": gone, "installed": changes}
    if out["retcode"] != 0:
        raise CommandExecutionError(
            "Problem encountered removing package(s)", info={"changes": changes, "errors": [_apt_error(out)]}
        )
    return changes


def remove(name: str | None = None, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """``apt-get remove`` the named packages that are installed; returns the changes."""
    return _remove("remove", name, pkgs)


def purge(name: str | None = None, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """``apt-get purge``: ``{"removed": config-only packages purged, "installed": changes}``."""
    return _remove("purge", name, pkgs)


def _set_hold(names: list[str], hold: bool) -> dict[str, Any]:
    ret: dict[str, Any] = {}
    pkgs = _query()
    for pname in names:
        state = {"name": pname, "changes": {}, "result": False, "comment": ""}
        ret[pname] = state
        entry = pkgs.get(pname)
        if entry is None:
            state["comment"] = (
                f"Package {pname} not currently held." if not hold else f"Package {pname} is not installed."
            )
            continue
        held = entry["want"] == "hold"
        if held == hold:
            state["result"] = True
            state["comment"] = (
                f"Package {pname} is already set to be held."
                if hold
                else f"Package {pname} is already set not to be held."
            )
            continue
        if __opts__.get("test"):
            state["result"] = None
            state["comment"] = (
                f"Package {pname} is set to be held." if hold else f"Package {pname} is set not to be held."
            )
            continue
        out = _run(["apt-mark", "hold" if hold else "unhold", pname])
        _clear_cache()
        if out["retcode"] != 0:
            state["comment"] = f"Failed to {'hold' if hold else 'unhold'} {pname}: {_apt_error(out)}"
            continue
        state["result"] = True
        state["changes"] = {"old": "install", "new": "hold"} if hold else {"old": "hold", "new": "install"}
        state["comment"] = (
            f"Package {pname} is now being held." if hold else f"Package {pname} is no longer being held."
        )
    return ret


def hold(name: str | None = None, pkgs: Any = None, sources: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Keep packages at their version (``apt-mark hold``)."""
    names = _names(name, pkgs) or [str(k) for s in (sources or []) if isinstance(s, dict) for k in s]
    if not names:
        raise SaltInvocationError("One of name, pkgs, or sources must be specified.")
    return _set_hold(names, True)


def unhold(name: str | None = None, pkgs: Any = None, sources: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Let held packages be upgraded again (``apt-mark unhold``)."""
    names = _names(name, pkgs) or [str(k) for s in (sources or []) if isinstance(s, dict) for k in s]
    if not names:
        raise SaltInvocationError("One of name, pkgs, or sources must be specified.")
    return _set_hold(names, False)


def list_holds(**kwargs: Any) -> list[str]:
    """Names of the held packages."""
    return sorted(n for n, p in _query().items() if p["want"] == "hold")
