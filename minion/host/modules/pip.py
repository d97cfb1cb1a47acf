"""Execution module ``pip``: Python packages through pip, as Salt 3007's ``pip`` module.

Every call runs pip through ``__salt__["cmd.run_all"]`` (no shell; ``user``
becomes ``runas``; ``env_vars`` are added to the environment; a virtualenv
``bin_env`` also sets ``VIRTUAL_ENV``). Which pip runs:

- ``bin_env`` a folder: that virtualenv's ``python -m pip`` (``python``,
  ``bin/python`` or ``Scripts/python`` in it; none there is Salt's
  ``Could not find a pip binary in virtualenv <dir>``);
- ``bin_env`` an executable: it is pip itself, or a Python (its name holds
  ``python``) run as ``python -m pip``;
- no ``bin_env``: the host's ``python3 -m pip``. (Salt runs its own
  interpreter's pip, which in Salt's packages is Salt's private Python;
  briny's own virtualenv is no place for a host's packages.)

A pip that does not answer ``--version`` raises ``Could not find a `pip`
binary``. ``requirements`` are files (a list or a comma-separated string),
local or ``salt://`` (fetched with ``cp.cache_file``; a missing one returns
Salt's ``{"result": False, "comment": "pip requirements file '...' not
found"}``). ``install`` / ``uninstall`` return ``cmd.run_all``'s dict.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)

__func_alias__ = {"list_": "list"}


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _pip_bin(bin_env: Any) -> list[str]:
    if not bin_env:
        return [shutil.which("python3") or "python3", "-m", "pip"]
    bin_env = str(bin_env)
    if os.path.isdir(bin_env):
        for sub in ("", "bin", "Scripts"):
            path = os.path.join(bin_env, sub, "python")
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return [os.path.normpath(path), "-m", "pip"]
        raise CommandExecutionError(f"Could not find a pip binary in virtualenv {bin_env}")
    if os.access(bin_env, os.X_OK):
        if os.path.isfile(bin_env):
            if "python" in os.path.basename(bin_env):
                return [os.path.normpath(bin_env), "-m", "pip"]
            return [os.path.normpath(bin_env)]
        raise CommandExecutionError(f"Could not find a pip binary within {bin_env}")
    raise CommandExecutionError(f"Access denied to {bin_env}, could not find a pip binary")


def _env(bin_env: Any, env_vars: Any) -> dict[str, str]:
    env: dict[str, str] = {}
    if bin_env and os.path.isdir(str(bin_env)):
        env["VIRTUAL_ENV"] = str(bin_env)
    if env_vars:
        if not isinstance(env_vars, dict):
            raise CommandExecutionError(f"env_vars {env_vars} is not a dictionary")
        env.update({str(k): str(v) for k, v in env_vars.items()})
    return env


def _run(cmd: list[str], bin_env: Any, user: Any, cwd: Any, env_vars: Any = None, **kwargs: Any) -> dict[str, Any]:
    return dict(
        _salt("cmd.run_all")(
            cmd, cwd=cwd, runas=user, env=_env(bin_env, env_vars), python_shell=False, output_loglevel="quiet", **kwargs
        )
    )


def normalize(name: str) -> str:
    """The PEP 503 form of a project name (``Foo_bar`` -> ``foo-bar``)."""
    return re.sub(r"[-_.]+", "-", str(name)).lower()


def version(bin_env: Any = None, cwd: Any = None, user: Any = None) -> str:
    """pip's version (``23.2.1``)."""
    key = f"pip.version.{bin_env}"
    ctx = __context__
    if key not in ctx:
        ret = _run(_pip_bin(bin_env) + ["--version"], bin_env, user, cwd, ignore_retcode=True)
        if ret["retcode"]:
            raise CommandExecutionError("Could not find a `pip` binary")
        match = re.match(r"^pip (\S+)", str(ret["stdout"]))
        ctx[key] = match.group(1) if match else None
    return ctx[key]


def list_(
    prefix: Any = None, bin_env: Any = None, user: Any = None, cwd: Any = None, env_vars: Any = None, **kwargs: Any
) -> dict[str, str]:
    """``{name: version}`` of the installed packages (those starting with ``prefix``)."""
    version(bin_env, cwd, user=user)
    cmd = _pip_bin(bin_env) + ["list", "--format=json", "--disable-pip-version-check"]
    ret = _run(cmd, bin_env, user, cwd, env_vars)
    if ret["retcode"]:
        raise CommandExecutionError(str(ret["stderr"]), info=ret)
    try:
        pkgs = json.loads(ret["stdout"], strict=False)
    except ValueError:
        raise CommandExecutionError("Invalid JSON", info=ret) from None
    return {p["name"]: p["version"] for p in pkgs if not prefix or p["name"].lower().startswith(str(prefix).lower())}


def freeze(
    bin_env: Any = None, user: Any = None, cwd: Any = None, use_vt: bool = False, env_vars: Any = None, **kwargs: Any
) -> list[str]:
    """``pip freeze --all`` lines (``name==version``)."""
    ret = _run(_pip_bin(bin_env) + ["freeze", "--all"], bin_env, user, cwd, env_vars)
    if ret["retcode"]:
        raise CommandExecutionError(str(ret["stderr"]), info=ret)
    return str(ret["stdout"]).splitlines()


def list_upgrades(bin_env: Any = None, user: Any = None, cwd: Any = None, **kwargs: Any) -> dict[str, str]:
    """``{name: newer version}`` for the packages with an upgrade on the index."""
    cmd = _pip_bin(bin_env) + ["list", "--outdated", "--format=json", "--disable-pip-version-check"]
    ret = _run(cmd, bin_env, user, cwd)
    if ret["retcode"]:
        raise CommandExecutionError(str(ret["stderr"]), info=ret)
    try:
        return {p["name"]: p["latest_version"] for p in json.loads(ret["stdout"] or "[]")}
    except ValueError:
        raise CommandExecutionError("Invalid JSON", info=ret) from None


def list_all_versions(
    pkg: str,
    bin_env: Any = None,
    include_alpha: bool = False,
    include_beta: bool = False,
    include_rc: bool = False,
    user: Any = None,
    cwd: Any = None,
    index_url: Any = None,
    extra_index_url: Any = None,
) -> list[str] | None:
    """The versions of ``pkg`` the index offers, oldest first (None when pip finds none)."""
    cmd = _pip_bin(bin_env) + ["index", "versions", str(pkg), "--disable-pip-version-check"]
    cmd += ["--index-url", str(index_url)] if index_url else []
    cmd += ["--extra-index-url", str(extra_index_url)] if extra_index_url else []
    if include_alpha or include_beta or include_rc:
        cmd.append("--pre")
    ret = _run(cmd, bin_env, user, cwd, ignore_retcode=True)
    match = re.search(r"Available versions: (.+)", str(ret["stdout"]))
    if not match:
        return None
    versions = [v.strip() for v in match.group(1).split(",")]
    skip = [m for m, keep in (("a", include_alpha), ("b", include_beta), ("rc", include_rc)) if not keep]
    return list(reversed([v for v in versions if not any(s in v for s in skip)]))


def _requirements(requirements: Any, saltenv: str) -> tuple[list[str], dict[str, Any] | None]:
    if requirements is None:
        return [], None
    if isinstance(requirements, str):
        requirements = [r.strip() for r in requirements.split(",")]
    elif not isinstance(requirements, list):
        raise TypeError("requirements must be a string or list")
    out: list[str] = []
    for req in requirements:
        if str(req).startswith("salt://"):
            cached = _salt("cp.cache_file")(req, saltenv)
            if not cached:
                return [], {"result": False, "comment": f"pip requirements file '{req}' not found"}
            req = cached
        out += ["--requirement", str(req)]
    return out, None


def install(
    pkgs: Any = None,
    requirements: Any = None,
    bin_env: Any = None,
    use_wheel: bool = False,
    no_use_wheel: bool = False,
    log: Any = None,
    proxy: Any = None,
    timeout: Any = None,
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
    global_options: Any = None,
    install_options: Any = None,
    user: Any = None,
    cwd: Any = None,
    pre_releases: bool = False,
    cert: Any = None,
    allow_all_external: bool = False,
    allow_external: Any = None,
    allow_unverified: Any = None,
    process_dependency_links: bool = False,
    saltenv: str = "base",
    env_vars: Any = None,
    use_vt: bool = False,
    trusted_host: Any = None,
    no_cache_dir: bool = False,
    extra_args: Any = None,
    cache_dir: Any = None,
    no_binary: Any = None,
    disable_version_check: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """``pip install`` of ``pkgs`` (a list or comma-separated), ``requirements`` files or ``editable`` sources."""
    cmd = _pip_bin(bin_env) + ["install"]
    reqs, error = _requirements(requirements, saltenv)
    if error:
        return error
    cmd += reqs
    for flag, value in (("--log", log), ("--proxy", proxy), ("--build", build), ("--target", target)):
        if value:
            cmd += [flag, str(value)]
    if timeout is not None:
        if isinstance(timeout, float) or not str(timeout).isdigit():
            raise ValueError(f"'{timeout}' is not a valid timeout, must be an integer")
        cmd += ["--timeout", str(timeout)]
    if find_links:
        for link in find_links if isinstance(find_links, list) else str(find_links).split(","):
            cmd += ["--find-links", str(link)]
    if no_index and (index_url or extra_index_url):
        raise CommandExecutionError("'no_index' and ('index_url' or 'extra_index_url') are mutually exclusive.")
    for flag, url in (("--index-url", index_url), ("--extra-index-url", extra_index_url)):
        if url:
            cmd += [flag, str(url)]
    flags = (
        (no_index, "--no-index"),
        (disable_version_check, "--disable-pip-version-check"),
        (upgrade, "--upgrade"),
        (force_reinstall, "--force-reinstall"),
        (ignore_installed, "--ignore-installed"),
        (no_deps, "--no-deps"),
        (no_cache_dir, "--no-cache-dir"),
        (pre_releases, "--pre"),
    )
    cmd += [flag for on, flag in flags if on]
    if exists_action is not None:
        if str(exists_action).lower() not in ("s", "i", "w", "b"):
            raise CommandExecutionError(
                f"The exists_action pip option only supports the values s, i, w, and b. '{exists_action}' is not valid."
            )
        cmd += ["--exists-action", str(exists_action)]
    for flag, value in (
        ("--cert", cert),
        ("--cache-dir", cache_dir),
        ("--no-binary", no_binary),
        ("--trusted-host", trusted_host),
    ):
        if value:
            cmd += [flag, str(value)]
    for flag, opts in (("--global-option", global_options), ("--install-option", install_options)):
        for opt in opts if isinstance(opts, list) else str(opts).split(",") if opts else []:
            cmd += [flag, str(opt)]
    unsupported = [
        n
        for n, v in (
            ("use_wheel", use_wheel),
            ("no_use_wheel", no_use_wheel),
            ("mirrors", mirrors),
            ("download", download),
            ("download_cache", download_cache),
            ("source", source),
            ("no_install", no_install),
            ("no_download", no_download),
            ("allow_all_external", allow_all_external),
            ("allow_external", allow_external),
            ("allow_unverified", allow_unverified),
            ("process_dependency_links", process_dependency_links),
        )
        if v
    ]
    if unsupported:
        raise SaltInvocationError(f"pip options no longer supported by pip were given: {', '.join(unsupported)}")
    if pkgs:
        items = pkgs if isinstance(pkgs, list) else [p.strip() for p in str(pkgs).split(",")]
        cmd += [str(p).replace(";", ",") for p in items]
    if editable:
        for entry in editable if isinstance(editable, list) else str(editable).split(","):
            cmd += ["--editable", str(entry)]
    if extra_args:
        for arg in extra_args:
            if isinstance(arg, dict):
                for key, val in arg.items():
                    cmd += [str(key)] + ([str(val)] if val is not None else [])
            else:
                cmd.append(str(arg))
    if not (pkgs or reqs or editable):
        return {"retcode": 0, "stdout": "No packages to install."}
    return _run(cmd, bin_env, user, cwd, env_vars)


def uninstall(
    pkgs: Any = None,
    requirements: Any = None,
    bin_env: Any = None,
    log: Any = None,
    proxy: Any = None,
    timeout: Any = None,
    user: Any = None,
    cwd: Any = None,
    saltenv: str = "base",
    use_vt: bool = False,
) -> bool:
    """``pip uninstall -y`` of ``pkgs`` (a list or comma-separated) or ``requirements``; True when pip succeeded."""
    cmd = _pip_bin(bin_env) + ["uninstall", "-y"]
    reqs, error = _requirements(requirements, saltenv)
    if error:
        return False
    cmd += reqs
    for flag, value in (("--log", log), ("--proxy", proxy), ("--timeout", timeout)):
        if value:
            cmd += [flag, str(value)]
    if pkgs:
        cmd += [str(p) for p in (pkgs if isinstance(pkgs, list) else str(pkgs).split(","))]
    return _run(cmd, bin_env, user, cwd)["retcode"] == 0


def upgrade(bin_env: Any = None, user: Any = None, cwd: Any = None, use_vt: bool = False) -> dict[str, Any]:
    """Upgrade every outdated package; ``{name: {"old", "new"}}`` of what changed."""
    old = list_(bin_env=bin_env, user=user, cwd=cwd)
    for name in list_upgrades(bin_env=bin_env, user=user, cwd=cwd):
        ret = _run(
            _pip_bin(bin_env) + ["install", "-U", "--upgrade-strategy", "only-if-needed", name], bin_env, user, cwd
        )
        if ret["retcode"]:
            raise CommandExecutionError(f"Upgrade of {name} failed: {ret['stderr']}", info=ret)
    _context_drop(bin_env)
    new = list_(bin_env=bin_env, user=user, cwd=cwd)
    return {k: {"old": old.get(k, ""), "new": new.get(k, "")} for k in set(old) | set(new) if old.get(k) != new.get(k)}


def _context_drop(bin_env: Any) -> None:
    __context__.pop(f"pip.version.{bin_env}", None)
