"""The ``pip`` state module: Python packages (``pip.installed``, ``pip.removed``, ``pip.uptodate``).

Works through the ``pip`` execution module (which pip runs: see there;
``bin_env`` is a virtualenv folder or a pip/python binary). Results follow
Salt 3007 (checked against the reference on a virtualenv and a local wheel
folder): ``Python package x is set to be installed`` / ``Python package(s)
set to be installed:`` in test mode, ``All packages were successfully
installed`` with changes ``{"name==version": "Installed"}``, ``Python package
x was already installed`` followed by ``All specified packages are already
installed``; requirement files ``Requirements file 'f' will be processed.``
(test mode), ``Successfully processed requirements file f.`` / ``Requirements
were already installed.``; a pip that cannot be run fails the state with
``Error installing 'x': ...``; ``pip.removed``: ``Package x is set to be
removed``, ``Package was successfully removed.``, ``Package is not
installed.``

Every argument of Salt's ``pip.installed`` is passed on to ``pip.install``
(``pkgs``, ``requirements``, ``upgrade``, ``user``, ``cwd``, ``index_url``,
``extra_index_url``, ``find_links``, ``no_index``, ``env_vars``, ...);
options pip itself dropped long ago (``use_wheel``, ``mirrors``,
``download_cache``, ...) fail the state, naming them. Version specifiers are
compared by release numbers (``1.10`` > ``1.9``; pre-release tags sort
before the release).

Deliberate difference: a requirements file installed with ``find_links``
makes pip print ``Looking in links: ...``, which Salt 3007 counts as a
change, so it reports ``requirements: True`` on every run; briny does not.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from ._access import _salt, _testing

if TYPE_CHECKING:
    pass


_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*(;.*)?$")
_SPEC = re.compile(r"^(===|==|!=|<=|>=|~=|<|>)\s*(\S+)$")


def _version_key(version: str) -> tuple:
    """A sort key for PEP 440-like versions: release numbers, then pre-release (a < b < rc < final)."""
    match = re.match(r"^v?(\d+(?:\.\d+)*)(?:[-_.]?(a|b|rc|alpha|beta|c)[-_.]?(\d*))?", str(version).strip().lower())
    if not match:
        return ((), (3, 0))
    release = tuple(int(x) for x in match.group(1).split("."))
    while release and release[-1] == 0:
        release = release[:-1]
    pre = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2}.get(match.group(2) or "", 3)
    return (release, (pre, int(match.group(3) or 0)))


def _fulfills(version: str, specs: list[tuple[str, str]]) -> bool:
    have = _version_key(version)
    for op, want in specs:
        if op == "~=":
            base = want.split(".")
            upper = _version_key(".".join(base[:-1]))[0]
            if not (have >= _version_key(want) and have[0][: len(upper)] == upper):
                return False
            continue
        if op == "===":
            if version != want:
                return False
            continue
        if want.endswith(".*") and op in ("==", "!="):
            prefix = _version_key(want[:-2])[0]
            same = have[0][: len(prefix)] == prefix
            if same != (op == "=="):
                return False
            continue
        w = _version_key(want)
        ok = {"==": have == w, "!=": have != w, "<=": have <= w, ">=": have >= w, "<": have < w, ">": have > w}[op]
        if not ok:
            return False
    return True


def _parse(pkg: str) -> dict[str, Any]:
    """{"result", "comment", "prefix", "version_spec"} for one requirement, as Salt's check."""
    if pkg.startswith(("git+", "svn+", "hg+", "bzr+")) or "://" in pkg or pkg.startswith(("/", ".")):
        return {"result": True, "prefix": "", "version_spec": []}
    match = _REQ.match(pkg)
    specs: list[tuple[str, str]] = []
    if match:
        rest = match.group(3)
        for part in filter(None, (p.strip() for p in rest.split(","))) if rest else []:
            spec = _SPEC.match(part)
            if not spec:
                match = None
                break
            specs.append((spec.group(1), spec.group(2)))
    if not match:
        if "=" in pkg and "==" not in pkg:
            comment = f"Invalid version specification in package {pkg}. '=' is not supported, use '==' instead."
        else:
            comment = f"pip raised an exception while parsing '{pkg}': Invalid requirement: '{pkg}'"
        return {"result": False, "comment": comment}
    return {"result": True, "prefix": re.sub("[^A-Za-z0-9.]+", "-", match.group(1)), "version_spec": specs}


def _lookup(pip_list: dict[str, str], prefix: str) -> str | None:
    wanted = prefix.lower()
    for name, ver in pip_list.items():
        if name.lower() == wanted:
            return ver
    return None


def installed(
    name: str,
    pkgs: Any = None,
    pip_bin: Any = None,
    requirements: Any = None,
    bin_env: Any = None,
    use_wheel: bool = False,
    no_use_wheel: bool = False,
    log: Any = None,
    proxy: Any = None,
    timeout: Any = None,
    repo: Any = None,
    editable: Any = None,
    find_links: Any = None,
    index_url: Any = None,
    extra_index_url: Any = None,
    no_index: bool = False,
    mirrors: Any = None,
    build: Any = None,
    target: Any = None,
    download: Any = None,
    download_cache: Any = None,
    source: Any = None,
    upgrade: bool = False,
    force_reinstall: bool = False,
    ignore_installed: bool = False,
    exists_action: Any = None,
    no_deps: bool = False,
    no_install: bool = False,
    no_download: bool = False,
    install_options: Any = None,
    global_options: Any = None,
    user: Any = None,
    cwd: Any = None,
    pre_releases: bool = False,
    cert: Any = None,
    allow_all_external: bool = False,
    allow_external: Any = None,
    allow_unverified: Any = None,
    process_dependency_links: bool = False,
    env_vars: Any = None,
    use_vt: bool = False,
    trusted_host: Any = None,
    no_cache_dir: bool = False,
    cache_dir: Any = None,
    no_binary: Any = None,
    extra_args: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """The package ``name`` (or each of ``pkgs``, or a ``requirements`` file) installed with pip."""
    if pip_bin and not bin_env:
        bin_env = pip_bin
    if pkgs:
        if not isinstance(pkgs, list):
            return {
                "name": name,
                "result": False,
                "changes": {},
                "comment": "pkgs argument must be formatted as a list",
            }
    else:
        pkgs = [name]
    pkgs = [p if isinstance(p, str) else " ".join(map(str, next(iter(p.items())))) for p in pkgs]
    ret: dict[str, Any] = {"name": ";".join(pkgs), "result": None, "comment": "", "changes": {}}
    try:
        _salt("pip.version")(bin_env)
    except (CommandExecutionError, SaltInvocationError) as err:
        ret["result"] = False
        ret["comment"] = f"Error installing '{name}': {err}"
        return ret
    details = []
    if not (requirements or editable):
        bad = []
        for pkg in pkgs:
            out = _parse(pkg)
            if out["result"]:
                details.append((out["prefix"], pkg, out["version_spec"]))
            else:
                bad.append(out["comment"])
        if bad:
            ret["result"] = False
            ret["comment"] = "\n".join(bad)
            return ret
    if user and not _salt("user.info")(user):
        ret["result"] = False
        ret["comment"] = f"User {user} does not exist"
        return ret
    targets: list[tuple[str, str]] = []
    already: list[str] = []
    if requirements or editable:
        if _testing():
            comments = []
            if requirements:
                comments.append(f"Requirements file '{requirements}' will be processed.")
            if editable:
                comments.append(
                    f'Package will be installed in editable mode (i.e. setuptools "develop mode") from {editable}.'
                )
            ret["comment"] = " ".join(comments)
            return ret
    else:
        try:
            pip_list = _salt("pip.list")(bin_env=bin_env, user=user, cwd=cwd, env_vars=env_vars)
        except (CommandExecutionError, SaltInvocationError):
            pip_list = {}
        for prefix, pkg, specs in details:
            have = _lookup(pip_list, prefix) if prefix else None
            done = (
                have is not None
                and not ignore_installed
                and not force_reinstall
                and not upgrade
                and (not specs or _fulfills(have, specs))
            )
            if done:
                already.append(f"Python package {pkg} was already installed")
                continue
            targets.append((prefix, pkg.replace(",", ";")))
            if _testing():
                if len(details) > 1:
                    ret["comment"] = "Python package(s) set to be installed:" + "".join("\n" + d[1] for d in details)
                else:
                    ret["comment"] = f"Python package {pkg} is set to be installed"
                return ret
        if not targets:
            ret["result"] = True
            last = "All specified packages are already installed" + (" and up-to-date" if upgrade else "")
            ret["comment"] = "\n".join(already + [last])
            return ret
    try:
        call = _salt("pip.install")(
            pkgs=",".join(t[1] for t in targets),
            requirements=requirements,
            bin_env=bin_env,
            use_wheel=use_wheel,
            no_use_wheel=no_use_wheel,
            log=log,
            proxy=proxy,
            timeout=timeout,
            editable=editable,
            find_links=find_links,
            index_url=index_url,
            extra_index_url=extra_index_url,
            no_index=no_index,
            mirrors=mirrors,
            build=build,
            target=target,
            download=download,
            download_cache=download_cache,
            source=source,
            upgrade=upgrade,
            force_reinstall=force_reinstall,
            ignore_installed=ignore_installed,
            exists_action=exists_action,
            no_deps=no_deps,
            no_install=no_install,
            no_download=no_download,
            install_options=install_options,
            global_options=global_options,
            user=user,
            cwd=cwd,
            pre_releases=pre_releases,
            cert=cert,
            allow_all_external=allow_all_external,
            allow_external=allow_external,
            allow_unverified=allow_unverified,
            process_dependency_links=process_dependency_links,
            saltenv=str(globals().get("__env__") or "base"),
            env_vars=env_vars,
            trusted_host=trusted_host,
            no_cache_dir=no_cache_dir,
            cache_dir=cache_dir,
            no_binary=no_binary,
            extra_args=extra_args,
            disable_version_check=True,
        )
    except (CommandExecutionError, SaltInvocationError, ValueError, TypeError) as exc:
        call = {"result": False, "comment": str(exc)}
    if call and call.get("retcode", 1) == 0:
        ret["result"] = True
        if requirements or editable:
            comments = []
            if requirements:
                quiet = (
                    "Requirement already satisfied",
                    "Requirement already up-to-date",
                    "Requirement not upgraded",
                    "Collecting",
                    "Cloning",
                    "Cleaning up...",
                    "Looking in indexes",
                    "Looking in links",  # not in Salt's list: Salt reports a change on every run with find_links
                )
                if any(not line.strip().startswith(quiet) for line in str(call.get("stdout", "")).split("\n")):
                    ret["changes"]["requirements"] = True
                    comments.append(f"Successfully processed requirements file {requirements}.")
                else:
                    comments.append("Requirements were already installed.")
            if editable:
                comments.append(f"Package successfully installed from VCS checkout {editable}.")
                ret["changes"]["editable"] = True
            ret["comment"] = " ".join(comments)
            return ret
        satisfied = set()
        for line in str(call.get("stdout", "")).split("\n"):
            if line.startswith(("Requirement already satisfied: ", "Requirement already up-to-date: ")):
                satisfied.add(_salt("pip.normalize")(re.split(r"[=!<>~@]", line.split(":", 1)[1].split()[0])[0]))
        missing = []
        for prefix, pkg in targets:
            if not prefix:
                ret["changes"][f"{pkg}==???"] = "Installed"
                continue
            found = _salt("pip.list")(prefix, bin_env, user=user, cwd=cwd, env_vars=env_vars)
            ver = _lookup(found, prefix)
            if not found:
                missing.append(
                    f"There was no error installing package '{pkg}' although it does not show when calling 'pip.freeze'."
                )
            elif ver is not None and _salt("pip.normalize")(prefix) not in satisfied:
                ret["changes"][f"{prefix}=={ver}"] = "Installed"
        summary = "\n".join(missing) if missing else "All packages were successfully installed"
        ret["comment"] = "\n".join(already + [summary])
        return ret
    ret["result"] = False
    if not call:
        ret["comment"] = "Could not install package"
        return ret
    error = f"Error: {call['stdout']} {call['stderr']}" if "stdout" in call else f"Error: {call['comment']}"
    if requirements or editable:
        comments = [f'Unable to process requirements file "{requirements}"'] if requirements else []
        if editable:
            comments.append(f"Unable to install from VCS checkout {editable}.")
        ret["comment"] = " ".join(comments + [error])
    else:
        failed = ", ".join(t[1] for t in targets)
        ret["comment"] = "\n".join(already + [f"Failed to install packages: {failed}. {error}"])
    return ret


def removed(
    name: str,
    requirements: Any = None,
    bin_env: Any = None,
    log: Any = None,
    proxy: Any = None,
    timeout: Any = None,
    user: Any = None,
    cwd: Any = None,
    use_vt: bool = False,
) -> dict[str, Any]:
    """The package ``name`` not installed."""
    ret: dict[str, Any] = {"name": name, "result": None, "comment": "", "changes": {}}
    try:
        pip_list = _salt("pip.list")(bin_env=bin_env, user=user, cwd=cwd)
    except (CommandExecutionError, SaltInvocationError) as err:
        ret["result"] = False
        ret["comment"] = f"Error uninstalling '{name}': {err}"
        return ret
    if name not in pip_list:
        ret["result"] = True
        ret["comment"] = "Package is not installed."
        return ret
    if _testing():
        ret["comment"] = f"Package {name} is set to be removed"
        return ret
    if _salt("pip.uninstall")(
        pkgs=name, requirements=requirements, bin_env=bin_env, log=log, proxy=proxy, timeout=timeout, user=user, cwd=cwd
    ):
        ret["result"] = True
        ret["changes"][name] = "Removed"
        ret["comment"] = "Package was successfully removed."
    else:
        ret["result"] = False
        ret["comment"] = "Could not remove package."
    return ret


def uptodate(name: str, bin_env: Any = None, user: Any = None, cwd: Any = None, use_vt: bool = False) -> dict[str, Any]:
    """Every package of ``bin_env`` at the newest version the index offers."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": False, "comment": "Failed to update."}
    try:
        packages = _salt("pip.list_upgrades")(bin_env=bin_env, user=user, cwd=cwd)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret["comment"] = str(exc)
        return ret
    if not packages:
        ret["comment"] = "System is already up-to-date."
        ret["result"] = True
        return ret
    if _testing():
        ret["comment"] = "System update will be performed"
        ret["result"] = None
        return ret
    updated = _salt("pip.upgrade")(bin_env=bin_env, user=user, cwd=cwd)
    if updated.get("result") is False:
        ret["changes"] = updated
    elif updated:
        ret["changes"] = updated
        ret["comment"] = "Upgrade successful."
        ret["result"] = True
    else:
        ret["comment"] = "Upgrade failed."
    return ret
