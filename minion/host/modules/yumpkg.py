"""Execution module ``pkg`` on the RHEL family: packages through dnf (or dnf5, yum) and rpm.

Runs on the managed host. It answers to the name ``pkg`` where Salt 3007's yumpkg does: the
grains say ``os_family: RedHat`` (or ``os`` is Amazon, XCP, XenServer, Virtuozzo, openEuler,
VMware Photon OS...) and a dnf5, dnf, tdnf or yum is on PATH (the first found, in that order
within each PATH folder, is the one used, as Salt decides).

Behaviour follows Salt's yumpkg:

- ``list_pkgs`` is ``{name: "[E:]V-R"}`` from ``rpm -qa`` (a package of a foreign arch is
  ``name.arch``; ``gpg-pubkey`` is left out); ``attr`` gives the instances' ``version``,
  ``release``, ``epoch``, ``arch``, ``install_date_time_t``.
- ``install`` / ``remove`` / ``upgrade`` return ``{name: {"old", "new"}}``; ``purge`` is
  ``remove`` (rpm keeps no config-only packages). ``fromrepo`` restricts to one repo
  (``--disablerepo=* --enablerepo=REPO``), ``enablerepo`` / ``disablerepo`` add to the
  command, ``skip_verify`` is ``--nogpgcheck``; ``refresh`` runs ``refresh_db`` first.
- A failed dnf raises :class:`CommandExecutionError` whose ``info`` is
  ``{"changes": ..., "errors": [dnf's output]}``.
- ``refresh_db`` is True when updates are available (dnf's ``check-update`` exit 100),
  None when there are none, False on an error, as Salt.
- ``hold`` / ``unhold`` need the versionlock plugin (a clear error without it).

The repo files are in ``_yum_repos.py``, rpm's side in ``_rpm_db.py``.
"""

from __future__ import annotations

import fnmatch
import functools
import logging
import os
import re
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.truth import says_true

from . import _pkg_common as pkgcommon
from . import _rpm_db as rpmdb
from ._yum_repos import del_repo, get_repo, list_repos, mod_repo

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __grains__, __opts__, __salt__

log = logging.getLogger(__name__)

__virtualname__ = "pkg"

__all__ = [
    "available_version",
    "bin_pkg_info",
    "del_repo",
    "get_repo",
    "hold",
    "info_installed",
    "install",
    "latest_version",
    "list_holds",
    "list_pkgs",
    "list_repo_pkgs",
    "list_repos",
    "list_upgrades",
    "mod_repo",
    "purge",
    "refresh_db",
    "remove",
    "unhold",
    "upgrade",
    "upgrade_available",
    "version",
    "version_cmp",
    "version_matches",
]

_ENABLED_OS = (
    "amazon",
    "xcp",
    "xenserver",
    "virtuozzolinux",
    "virtuozzo",
    "issabel pbx",
    "openeuler",
    "vmware photon os",
)
_OPS = (">=", "<=", "!=", "==", ">", "<", "=")
_SIMPLE_KEYS = ("name", "version", "fromrepo", "enablerepo", "disablerepo", "refresh", "skip_verify", "pkgs")


def _yum() -> str | None:
    """dnf5, dnf, tdnf or yum: the first of them found along PATH (Salt's order)."""
    found = __context__.get("yum_bin")
    if found is None:
        for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
            for tool in ("dnf5", "dnf", "tdnf", "yum"):
                path = os.path.join(folder, tool)
                if os.access(path, os.X_OK) and not os.path.isdir(path):
                    found = tool
                    break
            if found:
                break
        if found:
            __context__["yum_bin"] = found
    return str(found) if found else None


def __virtual__() -> Any:
    provider = (__opts__.get("providers") or {}).get("pkg")
    if provider and provider not in ("yum", "yumpkg", "dnf"):
        return (False, f"pkg provider is set to {provider}")
    os_grain = str(__grains__.get("os") or "").lower()
    family = str(__grains__.get("os_family") or "").lower()
    if family == "redhat" or os_grain in _ENABLED_OS:
        if _yum() is None:
            return (False, "DNF nor YUM found")
        return __virtualname__
    return (False, "Module yumpkg: no yum based system detected")


def _call(args: list[str], timeout: int | None = None, merge: bool = False) -> dict[str, Any]:
    tool = _yum()
    if tool is None:
        raise CommandExecutionError("DNF nor YUM found")
    kwargs: dict[str, Any] = {"redirect_stderr": True} if merge else {}
    return rpmdb._run([tool, *args], timeout=timeout or rpmdb.timeout("pkg_timeout", 1800), **kwargs)


def _failure(out: dict[str, Any]) -> str:
    """What a failed dnf call said, else that it said nothing (it still failed)."""
    return str(out.get("stdout") or "").strip() or f"{_yum()} exited {out['retcode']} without output"


def _options(kwargs: dict[str, Any]) -> list[str]:
    fromrepo = kwargs.get("fromrepo") or kwargs.get("repo") or ""
    ret: list[str] = []
    if fromrepo:
        ret += ["--disablerepo=*", f"--enablerepo={fromrepo}"]
    else:
        for key in ("disablerepo", "enablerepo"):
            val = kwargs.get(key)
            if val:
                ret += [f"--{key}={x}" for x in (val if isinstance(val, list) else [val])]
    if kwargs.get("disableexcludes"):
        ret.append(f"--disableexcludes={kwargs['disableexcludes']}")
    setopt = kwargs.get("setopt")
    if setopt:
        for item in setopt if isinstance(setopt, list) else str(setopt).split(","):
            ret.append(f"--setopt={item}")
    return ret


# ---------------------------------------------------------------------------
# versions
# ---------------------------------------------------------------------------


def version_cmp(pkg1: str, pkg2: str, ignore_epoch: bool = False, **kwargs: Any) -> int:
    """-1, 0 or 1 as ``pkg1`` is older than, equal to or newer than ``pkg2`` (rpm's order)."""
    return rpmdb.evr_cmp(str(pkg1), str(pkg2), says_true(ignore_epoch))


def version_matches(installed: str, spec: str, **kwargs: Any) -> bool:
    """Whether the installed version satisfies ``spec``: exact (a version without a release
    matches any release), an operator (``>=1.0``) or a glob (``1.0*``)."""
    installed, spec = str(installed), str(spec).strip()
    if not installed:
        return False
    for one in installed.split(","):
        for op in _OPS:
            if spec.startswith(op):
                c = version_cmp(one, spec[len(op) :].strip())
                ok = {">=": c >= 0, "<=": c <= 0, "!=": c != 0, "==": c == 0, ">": c > 0, "<": c < 0, "=": c == 0}
                if ok[op]:
                    return True
                break
        else:
            if any(ch in spec for ch in "*?["):
                if fnmatch.fnmatchcase(one, spec):
                    return True
            elif one == spec or version_cmp(one, spec) == 0:
                return True
    return False


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------


def list_pkgs(versions_as_list: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Installed packages ``{name: version}``; ``attr`` (a list, or ``all``) gives each
    instance's details instead. ``removed=True`` (briny's states ask) is always ``{}``: rpm
    keeps no config-only packages."""
    if says_true(kwargs.get("removed", False)):
        return {}
    attr = kwargs.get("attr")
    if attr:
        wanted = ["version", "release", "epoch", "arch", "install_date", "install_date_time_t"]
        if attr != "all":
            asked = attr if isinstance(attr, list) else str(attr).split(",")
            bad = [a for a in asked if a not in wanted]
            if bad:
                raise SaltInvocationError(f"Unknown attribute(s): {', '.join(bad)}")
            wanted = [a for a in wanted if a in asked]
        out: dict[str, Any] = {}
        for name, inst in sorted(rpmdb.installed().items()):
            rows = []
            for i in inst:
                row = {k: i.get(k) for k in wanted if k != "install_date"}
                if "install_date" in wanted and i["install_date_time_t"] is not None:
                    import datetime

                    row["install_date"] = datetime.datetime.fromtimestamp(
                        i["install_date_time_t"], datetime.timezone.utc
                    ).strftime("%Y-%m-%dT%H:%M:%SZ")
                rows.append(row)
            out[name] = rows
        return out
    pkgs = rpmdb.versions_map()
    if says_true(versions_as_list):
        return {n: v.split(",") for n, v in pkgs.items()}
    return pkgs


def version(*names: str, **kwargs: Any) -> Any:
    """Installed version of one package (``""`` when absent), or a dict for several."""
    pkgs = rpmdb.versions_map()
    found = {n: pkgs.get(n, "") for n in names}
    if len(names) == 1:
        return found[names[0]]
    return found


def _available(names: list[str], kwargs: dict[str, Any], showduplicates: bool = False) -> list[tuple[str, str, str]]:
    """(name, version, repo) of what the repositories offer for ``names``."""
    cmd = ["--quiet", *_options(kwargs), "list", "available"]
    if showduplicates:
        cmd.insert(1, "--showduplicates")
    out = _call(cmd + names, timeout=rpmdb.timeout("pkg_refresh_timeout", 600))
    if out["retcode"] != 0:
        return []
    osarch = str(__grains__.get("osarch") or "x86_64")
    words = [w for line in out["stdout"].splitlines() if not _header(line) for w in line.split()]
    found = []
    for i in range(0, len(words) - 2, 3):
        pname, ver, repo = words[i], words[i + 1], words[i + 2]
        base, _, arch = pname.rpartition(".")
        if arch not in rpmdb.ARCHES:
            base, arch = pname, osarch
        name = base if arch in ("noarch", osarch) else f"{base}.{arch}"
        found.append((name, ver.rstrip("-"), repo.lstrip("@")))
    return found


def _header(line: str) -> bool:
    return (
        not line.strip()
        or line.startswith(("Available Packages", "Installed Packages", "Available Upgrades", "Last metadata"))
        or line.startswith("Upgraded Packages")
    )


def latest_version(*names: str, **kwargs: Any) -> Any:
    """The newest version the repositories offer that is newer than what is installed (``""``
    when none); a dict for several names."""
    if not names:
        return ""
    if says_true(kwargs.pop("refresh", True)):
        refresh_db(**kwargs)
    cur = list_pkgs(versions_as_list=True)

    def newer_first(a: tuple[str, str, str], b: tuple[str, str, str]) -> int:
        return rpmdb.evr_cmp(b[1], a[1])

    offers = sorted(_available(list(names), kwargs), key=functools.cmp_to_key(newer_first))
    ret: dict[str, str] = {}
    for name in names:
        ret[name] = ""
        for pname, ver, _ in offers:
            if pname == name and all(version_cmp(v, ver) < 0 for v in cur.get(name, [])):
                ret[name] = ver
                break
    return ret[names[0]] if len(names) == 1 else ret


available_version = latest_version


def upgrade_available(name: str, **kwargs: Any) -> bool:
    return bool(latest_version(name, **kwargs) != "")


def list_upgrades(refresh: bool = True, **kwargs: Any) -> dict[str, str]:
    """``{name: newest version}`` of the installed packages that can be upgraded."""
    if says_true(refresh):
        refresh_db(**kwargs)
    tool = _yum()
    out = _call(["--quiet", *_options(kwargs), "list", "--upgrades" if tool in ("dnf", "dnf5") else "updates"])
    if out["retcode"] != 0 and "Error" in out.get("stderr", ""):
        raise CommandExecutionError(out["stderr"].strip())
    osarch = str(__grains__.get("osarch") or "x86_64")
    words = [w for line in out["stdout"].splitlines() if not _header(line) for w in line.split()]
    ret: dict[str, str] = {}
    for i in range(0, len(words) - 2, 3):
        base, _, arch = words[i].rpartition(".")
        if arch not in rpmdb.ARCHES:
            base, arch = words[i], osarch
        ret[base if arch in ("noarch", osarch) else f"{base}.{arch}"] = words[i + 1]
    return ret


def list_repo_pkgs(*args: str, **kwargs: Any) -> dict[str, list[str]]:
    """``{name: [versions, newest first]}`` the enabled repositories offer for ``args``."""
    found: dict[str, list[str]] = {}
    for name, ver, _ in _available(list(args), kwargs, showduplicates=True):
        if ver not in found.setdefault(name, []):
            found[name].append(ver)
    for vers in found.values():
        vers.sort(key=functools.cmp_to_key(rpmdb.evr_cmp), reverse=True)
    return found


def info_installed(*names: str, **kwargs: Any) -> dict[str, Any]:
    """rpm's header of installed packages: ``{name: {"name", "version", "release", ...}}``."""
    return dict(__salt__["lowpkg.info"](*names, **kwargs))


def bin_pkg_info(path: str, saltenv: str = "base", **kwargs: Any) -> dict[str, str]:
    """``{"name", "version", "arch"}`` read from an ``.rpm`` (local or ``salt://``)."""
    local: Any = path
    if str(path).startswith(("salt://", "http://", "https://", "ftp://")):
        local = __salt__["cp.cache_file"](path, saltenv)
    if not local or not os.path.isfile(str(local)):
        raise CommandExecutionError(f"{path} does not exist on minion")
    out = rpmdb._run(
        [
            "rpm",
            "-qp",
            "--nodigest",
            "--nosignature",
            "--queryformat",
            "%{NAME} %{EPOCH} %{VERSION}-%{RELEASE} %{ARCH}",
            str(local),
        ]
    )
    parts = str(out["stdout"]).split()
    if out["retcode"] != 0 or len(parts) != 4:
        raise CommandExecutionError(f"{path} is not a valid .rpm: {(out.get('stderr') or out['stdout']).strip()}")
    name, epoch, ver, arch = parts
    return {"name": name, "version": (f"{epoch}:" if epoch not in ("(none)", "0") else "") + ver, "arch": arch}


# ---------------------------------------------------------------------------
# changes
# ---------------------------------------------------------------------------


def refresh_db(**kwargs: Any) -> bool | None:
    """Expire dnf's cache and check the repositories: True when updates are available, None
    when not, False when the check failed (as Salt)."""
    __context__.pop("pkg._refresh_pending", None)
    options = _options(kwargs)
    _call(["--quiet", "--assumeyes", "clean", "expire-cache", *options])
    if not says_true(kwargs.get("check_update", True)):
        return True
    out = _call(["--quiet", "--assumeyes", "check-update", *options], timeout=rpmdb.timeout("pkg_refresh_timeout", 600))
    return {100: True, 0: None}.get(int(out["retcode"]), False)


def _wanted(
    name: str | None, pkgs: Any, sources: Any, version: Any, saltenv: str
) -> tuple[list[tuple[str, str | None]], list[tuple[str, str]]]:
    """([(name, version or None)] from the repositories, [(name, local .rpm)] from sources)."""
    if sources:
        if not isinstance(sources, list):
            raise SaltInvocationError("'sources' must be a list of {name: path} mappings")
        files: list[tuple[str, str]] = []
        for item in sources:
            if not isinstance(item, dict) or len(item) != 1:
                raise SaltInvocationError("'sources' must be a list of {name: path} mappings")
            ((pname, src),) = item.items()
            local = str(src)
            if local.startswith(("salt://", "http://", "https://", "ftp://")):
                local = __salt__["cp.cache_file"](src, saltenv) or ""
            if not local or not os.path.isfile(local):
                raise CommandExecutionError(f"Unable to cache {src}: the file does not exist")
            files.append((str(pname), local))
        return [], files
    if pkgs:
        if not isinstance(pkgs, list):
            raise SaltInvocationError("'pkgs' must be a list")
        out: list[tuple[str, str | None]] = []
        for item in pkgs:
            if isinstance(item, dict):
                out += [(str(k), None if v is None else str(v)) for k, v in item.items()]
            else:
                out.append((str(item), None))
        return out, []
    if not name:
        raise SaltInvocationError("No package name, 'pkgs' or 'sources' given")
    names = [n.strip() for n in str(name).split(",") if n.strip()]
    if version is not None and len(names) == 1:
        return [(names[0], str(version))], []
    return [(n, None) for n in names], []


def _resolve(pname: str, spec: str, offered: dict[str, list[str]], errors: list[str]) -> str | None:
    """The exact version a spec names (an operator or a glob picks from what is offered)."""
    spec = spec.strip()
    for op in _OPS[:-1]:
        if spec.startswith(op):
            want = spec[len(op) :].strip()
            for cand in offered.get(pname, []):
                if version_matches(cand, f"{op}{want}"):
                    return cand
            avail = ", ".join(offered.get(pname, [])) or None
            errors.append(f"No version matching '{pname}{spec}' could be found (available: {avail})")
            return None
    spec = spec.lstrip("=")
    if "*" in spec:
        for cand in offered.get(pname, []):
            if fnmatch.fnmatchcase(cand, spec):
                return cand
        avail = ", ".join(offered.get(pname, [])) or "none"
        errors.append(f"No version matching '{spec}' found for package '{pname}' (available: {avail})")
        return None
    return spec


def install(
    name: str | None = None,
    refresh: bool = False,
    skip_verify: bool = False,
    pkgs: Any = None,
    sources: Any = None,
    version: Any = None,
    reinstall: bool = False,
    saltenv: str = "base",
    **kwargs: Any,
) -> dict[str, Any]:
    """Install packages from the repositories (``name`` / ``pkgs``, with versions) or local
    ``.rpm`` files (``sources``); newer versions are installed, older ones downgraded."""
    if says_true(refresh):
        refresh_db(**kwargs)
    repo_pkgs, files = _wanted(name, pkgs, sources, version, saltenv)
    old = list_pkgs(versions_as_list=True)
    old_map = rpmdb.versions_map()
    errors: list[str] = []
    to_install: list[str] = []
    to_downgrade: list[str] = []
    to_reinstall: list[tuple[str, str]] = []
    needs_offers = [p for p, v in repo_pkgs if v and (v.strip()[:1] in "<>!" or "*" in v or v.startswith("=="))]
    offered = list_repo_pkgs(*needs_offers, **kwargs) if needs_offers else {}
    for pname, spec in repo_pkgs:
        if spec is None:
            if says_true(reinstall) and pname in old:
                to_reinstall.append((pname, pname))
            else:
                to_install.append(pname)
            continue
        ver = _resolve(pname, spec, offered, errors)
        if ver is None:
            continue
        target = f"{pname}-{ver.split(':', 1)[-1]}"
        cur = old.get(pname, [])
        if says_true(reinstall) and any(version_cmp(ver, c) == 0 for c in cur):
            to_reinstall.append((pname, target))
        elif not cur or any(version_cmp(ver, c) >= 0 for c in cur):
            to_install.append(target)
        else:
            to_downgrade.append(target)
    to_install += [path for _, path in files]
    common = [*_options(kwargs)] + (["--nogpgcheck"] if says_true(skip_verify) else [])
    tool = _yum()
    steps = []
    if to_install:
        best = ["--best", "--allowerasing"] if tool in ("dnf", "dnf5") else []
        steps.append(
            (
                [
                    "-y",
                    *(best if tool == "dnf" else []),
                    *common,
                    "install",
                    *(best if tool == "dnf5" else []),
                    *to_install,
                ]
            )
        )
    if to_downgrade:
        steps.append(["-y", *common, "downgrade", *to_downgrade])
    if to_reinstall:
        steps.append(["-y", *common, "reinstall", *(t for _, t in to_reinstall)])
    for cmd in steps:
        out = _call(cmd, merge=True)
        if out["retcode"] != 0:
            errors.append(_failure(out))
    rpmdb.forget()
    new = rpmdb.versions_map()
    ret: dict[str, Any] = pkgcommon.version_changes(old_map, new)
    for pname, _ in to_reinstall:
        if pname not in ret:
            ret[pname] = {"old": old_map.get(pname, ""), "new": new.get(pname, "")}
    if errors:
        raise CommandExecutionError(
            f"Error occurred installing{'/reinstalling' if to_reinstall else ''} package(s)",
            info={"errors": errors, "changes": ret},
        )
    return ret


def upgrade(
    name: str | None = None, pkgs: Any = None, refresh: bool = True, skip_verify: bool = False, **kwargs: Any
) -> dict[str, Any]:
    """Upgrade every package (or the named ones); returns the changes."""
    if says_true(refresh):
        refresh_db(**kwargs)
    old = rpmdb.versions_map()
    targets = pkgcommon.package_names(name, pkgs)
    cmd = ["--quiet", "-y", *_options(kwargs)] + (["--nogpgcheck"] if says_true(skip_verify) else [])
    cmd.append("upgrade" if _yum() in ("dnf", "dnf5") else "update")
    out = _call(cmd + targets, merge=True)
    rpmdb.forget()
    ret = pkgcommon.version_changes(old, rpmdb.versions_map())
    if out["retcode"] != 0:
        raise CommandExecutionError("Problem encountered upgrading packages", info={"changes": ret, "result": out})
    return ret


def remove(name: str | None = None, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Remove the named packages that are installed (a ``pkgs`` entry may pin the version
    to remove); returns the changes."""
    wanted, _ = _wanted(name, pkgs, None, kwargs.get("version"), "base") if (name or pkgs) else ([], [])
    old = rpmdb.versions_map()
    targets = []
    for pname, ver in wanted:
        if pname not in old:
            continue
        if ver and not version_matches(old[pname], ver):
            continue
        targets.append(f"{pname}-{ver}" if ver else pname)
    if not targets:
        return {}
    out = _call(["-y", "remove", *targets], merge=True)
    rpmdb.forget()
    ret = pkgcommon.version_changes(old, rpmdb.versions_map())
    if out["retcode"] != 0:
        raise CommandExecutionError(
            "Error occurred removing package(s)", info={"errors": [_failure(out)], "changes": ret}
        )
    return ret


def purge(name: str | None = None, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """``remove``: rpm has nothing more to purge."""
    return remove(name=name, pkgs=pkgs, **kwargs)


# ---------------------------------------------------------------------------
# holds (the versionlock plugin)
# ---------------------------------------------------------------------------


def _versionlock_pkg() -> str:
    """The package that brings the versionlock plugin, as Salt names it."""
    tool = _yum()
    if tool in ("dnf", "dnf5"):
        if str(__grains__.get("os") or "").lower() == "fedora":
            rel = str(__grains__.get("osrelease") or "0")
            return (
                "python3-dnf-plugin-versionlock"
                if rel.isdigit() and int(rel) >= 26
                else "python3-dnf-plugins-extras-versionlock"
            )
        major = str(__grains__.get("osmajorrelease") or "0")
        return (
            "python3-dnf-plugin-versionlock"
            if major.isdigit() and int(major) >= 8
            else "python2-dnf-plugin-versionlock"
        )
    if tool == "tdnf":
        raise SaltInvocationError("Cannot proceed, no versionlock for tdnf")
    return "yum-plugin-versionlock"


def _versionlock() -> None:
    """As Salt: the plugin's package must be installed (rpm's database says so)."""
    plugin = _versionlock_pkg()
    if plugin not in rpmdb.versions_map():
        raise SaltInvocationError(f"Cannot proceed, {plugin} is not installed.")


_LOCK = re.compile(r"^(?:\d+:)?(?P<name>.+?)-[^-]+-[^-]+(?:\.\w+)?(?:\.\*)?$")


def list_holds(pattern: str | None = None, full: bool = True) -> list[str]:
    """The versionlock entries (``full=False``: the package names)."""
    _versionlock()
    out = _call(["versionlock", "list"], timeout=120)
    entries = [
        ln.strip() for ln in str(out["stdout"]).splitlines() if ln.strip() and not ln.startswith(("Last metadata", "#"))
    ]
    if full:
        return entries
    return [m.group("name") for m in map(_LOCK.match, entries) if m]


def hold(name: str | None = None, pkgs: Any = None, sources: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Lock packages at their installed version (versionlock); Salt's result per package."""
    names = pkgcommon.package_names(name, pkgs) or [str(k) for s in (sources or []) if isinstance(s, dict) for k in s]
    if not names:
        raise SaltInvocationError("One of name, pkgs, or sources must be specified.")
    held = list_holds(full=False)
    ret: dict[str, Any] = {}
    for target in names:
        ret[target] = {"name": target, "changes": {}, "result": False, "comment": ""}
        if target in held:
            ret[target].update(result=True, comment=f"Package {target} is already set to be held.")
        elif __opts__.get("test"):
            ret[target].update(result=None, comment=f"Package {target} is set to be held.")
        else:
            out = _call(["versionlock", "add", target], timeout=120)
            if out["retcode"] == 0:
                ret[target].update(
                    result=True,
                    comment=f"Package {target} is now being held.",
                    changes={"new": "hold", "old": ""},
                )
            else:
                ret[target]["comment"] = f"Package {target} was unable to be held."
    return ret


def unhold(name: str | None = None, pkgs: Any = None, sources: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Remove the versionlock of packages; Salt's result per package."""
    names = pkgcommon.package_names(name, pkgs) or [str(k) for s in (sources or []) if isinstance(s, dict) for k in s]
    if not names:
        raise SaltInvocationError("One of name, pkgs, or sources must be specified.")
    entries = list_holds(full=True)
    ret: dict[str, Any] = {}
    for target in names:
        ret[target] = {"name": target, "changes": {}, "result": False, "comment": ""}
        locks = [e for e in entries if (m := _LOCK.match(e)) and m.group("name") == target]
        if not locks:
            ret[target].update(result=True, comment=f"Package {target} is not being held.")
        elif __opts__.get("test"):
            ret[target].update(result=None, comment=f"Package {target} is set to be unheld.")
        else:
            out = _call(["versionlock", "delete", *locks], timeout=120)
            if out["retcode"] == 0:
                ret[target].update(
                    result=True, comment=f"Package {target} is no longer held.", changes={"new": "", "old": "hold"}
                )
            else:
                ret[target]["comment"] = f"Package {target} was unable to be unheld."
    return ret
