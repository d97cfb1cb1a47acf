"""State module ``pkg``: packages installed, at their latest version, removed or purged.

Runs on the managed host (minion / ``briny-call``). It does no package work
itself: it asks the ``pkg`` execution module (apt/dpkg on Debian) what is
installed and what is available, and has it install, remove, purge and hold.

Results follow Salt 3007 (comments, ``changes`` shaped
``{"pkg": {"old": "", "new": "1.0"}}``, test mode, idempotence). The package
database is refreshed at most once per run: ``mod_init`` marks the run when
the first ``installed`` / ``latest`` state is seen, and the first state that
really has to install something refreshes before it does (``refresh: True``
forces a refresh, ``refresh: False`` skips it). Test mode never runs apt-get
(Salt refreshes the database in test mode; briny does not).

``version: latest`` (or ``- name: latest`` in ``pkgs``) means the newest
version the repositories offer, and test mode shows, as Salt 3007, the
version each package would get (``installed`` when the repositories do not
say). A ``pkgs`` list naming a package twice fails the state with Salt's
words ("You are passing a list of packages that contains duplicated packages
names: ..."); Salt raises there, so its comment is that text after a
traceback.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from ._pkg_uptodate import uptodate  # noqa: F401 - the state pkg.uptodate, defined beside


if TYPE_CHECKING:
    from briny.common.dunders import __context__, __opts__, __salt__


log = logging.getLogger(__name__)

_REFRESH_FLAG = "pkg._refresh_pending"


def mod_init(low: dict[str, Any]) -> bool:
    """Mark the run so that the first install refreshes the package database."""
    if low.get("fun") in ("installed", "latest"):
        __context__[_REFRESH_FLAG] = True
        return True
    return False


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def _ret(name: str) -> dict[str, Any]:
    return {"name": name, "result": True, "changes": {}, "comment": ""}


def _test() -> bool:
    return bool(__opts__.get("test"))


def _want_refresh(refresh: Any) -> bool:
    """Whether this state should refresh (and, if so, consume the run's flag)."""
    if refresh is None:
        return bool(__context__.get(_REFRESH_FLAG))
    return bool(refresh)


def _refreshed() -> None:
    __context__[_REFRESH_FLAG] = False


def _refresh_db(ret: dict[str, Any]) -> bool:
    """Refresh the package database (and note that it is fresh); False, with the failure in
    ``ret``, when it could not be refreshed."""
    try:
        __salt__["pkg.refresh_db"]()
    except CommandExecutionError as exc:
        ret.update(result=False, comment=f"Unable to refresh the package database: {exc}")
        return False
    _refreshed()
    return True


def _nested(data: Any, indent: int = 0) -> list[str]:
    """Salt's nested outputter, as used in its error comments."""
    pad = " " * indent
    if isinstance(data, dict):
        if not data:
            return [pad + "----------"]
        lines: list[str] = []
        for key, val in data.items():
            if isinstance(val, (dict, list)):
                lines.append(f"{pad}{key}:")
                lines += _nested(val, indent + 4)
            else:
                lines.append(f"{pad}{key}:")
                lines.append(f"{pad}    {val}")
        return lines
    if isinstance(data, list):
        lines = []
        for item in data:
            first, *rest = str(item).splitlines() or [""]
            lines.append(f"{pad}- {first}")
            lines += [f"{pad}  {r}" for r in rest]
        return lines
    return [f"{pad}{data}"]


def _any_change(changes: Any) -> bool:
    if isinstance(changes, dict):
        return any(
            _any_change(v) if isinstance(v, dict) and set(v) - {"old", "new"} else bool(v) for v in changes.values()
        )
    return bool(changes)


def _error_comment(exc: CommandExecutionError, keep_empty_changes: bool = False) -> str:
    info = exc.info if isinstance(exc.info, dict) else None
    if not info:
        return str(exc)
    if not keep_empty_changes:
        info = {k: v for k, v in info.items() if not (k == "changes" and not _any_change(v))}
    return f"{exc}. Additional info follows:\n\n" + "\n".join(_nested(info))


def _salt_list_repr(items: list[Any]) -> str:
    """A ``pkgs`` list as Salt's messages show it (its YAML loader makes OrderedDicts)."""

    def one(item: Any) -> str:
        if isinstance(item, dict):
            return "OrderedDict([" + ", ".join(f"({k!r}, {one(v)})" for k, v in item.items()) + "])"
        return repr(item)

    return "[" + ", ".join(one(i) for i in items) + "]"


def _no_duplicates(pkgs: Any) -> None:
    """Salt refuses a ``pkgs`` list naming a package twice (SaltInvocationError in its words)."""
    if not isinstance(pkgs, list):
        return
    names = [str(next(iter(p))) if isinstance(p, dict) and p else str(p) for p in pkgs]
    if len(names) != len(set(names)):
        raise SaltInvocationError(
            "You are passing a list of packages that contains duplicated packages names: "
            f"{_salt_list_repr(pkgs)}. This cannot be processed. In case you are targeting different "
            "versions of the same package, please target them individually"
        )


def _desired(name: str, version: Any, pkgs: Any, sources: Any) -> tuple[dict[str, str | None], dict[str, str]]:
    """(name -> version spec or None, name -> source) from the state's arguments."""
    wanted: dict[str, str | None] = {}
    srcs: dict[str, str] = {}
    if sources:
        if not isinstance(sources, list):
            raise SaltInvocationError(
                "Invalidly formatted 'sources' parameter: it must be a list of {name: path} mappings"
            )
        for item in sources:
            if not isinstance(item, dict) or len(item) != 1:
                raise SaltInvocationError(
                    "Invalidly formatted 'sources' parameter: each entry must be a single {name: path} mapping"
                )
            ((pname, src),) = item.items()
            srcs[str(pname)] = str(src)
            wanted[str(pname)] = None
        return wanted, srcs
    if pkgs:
        if not isinstance(pkgs, list):
            raise SaltInvocationError("Invalidly formatted 'pkgs' parameter: it must be a list")
        _no_duplicates(pkgs)
        for item in pkgs:
            if isinstance(item, dict):
                for pname, pver in item.items():
                    wanted[str(pname)] = None if pver is None else str(pver)
            else:
                wanted[str(item)] = None
        return wanted, srcs
    wanted[str(name)] = None if version is None else str(version)
    return wanted, srcs


def _resolve_latest(wanted: dict[str, str | None], srcs: dict[str, str], current: dict[str, str]) -> None:
    """A version of ``latest`` becomes the newest the repositories offer (the installed one when
    that is the newest; no version at all when apt knows none), as Salt resolves it."""
    names = [p for p, spec in wanted.items() if spec == "latest" and p not in srcs]
    if not names:
        return
    try:
        found = __salt__["pkg.latest_version"](*names, refresh=False)
    except CommandExecutionError:
        found = {}
    if not isinstance(found, dict):
        found = {names[0]: found}
    for pname in names:
        wanted[pname] = found.get(pname) or current.get(pname) or None


def _desired_pkg(pname: str, spec: str | None) -> str:
    """``name``, ``name=version`` or ``name>=version``: how Salt names a wanted package."""
    if not spec:
        return pname
    return f"{pname}{'' if spec.startswith(('<', '>', '=')) else '='}{spec}"


def _installable_versions(
    targets: dict[str, str | None], current: dict[str, str] | None = None
) -> dict[str, dict[str, str]]:
    """Test mode's changes, as Salt 3007 shows them: each package's ``new`` is the version it would
    get (the newest offered, or the one asked for when the repositories have it), else
    ``installed``; ``old`` is always empty."""
    versions: dict[str, str] = {}
    plain = [p for p, spec in targets.items() if not spec]
    explicit = [_desired_pkg(p, spec) for p, spec in targets.items() if spec]
    try:
        if plain:
            found = __salt__["pkg.latest_version"](*plain, refresh=False)
            versions.update(found if isinstance(found, dict) else {plain[0]: found})
        if explicit and "pkg.list_repo_pkgs" in __salt__:
            for pname, offered in __salt__["pkg.list_repo_pkgs"](*explicit).items():
                if offered:
                    versions[pname] = offered[0]
    except CommandExecutionError as exc:
        log.warning("Unable to look up the versions to install: %s", exc)
    return {p: {"new": versions.get(p) or "installed", "old": (current or {}).get(p, "")} for p in targets}


def _satisfied(pname: str, spec: str | None, installed: dict[str, str]) -> bool:
    cur = installed.get(pname, "")
    if not cur:
        return False
    if spec is None:
        return True
    return bool(__salt__["pkg.version_matches"](cur, spec))


def _holds(names: list[str], hold: Any) -> tuple[list[str], dict[str, Any], bool | None]:
    """Apply ``hold`` to ``names``: (comment lines, changes, result: True,
    False, or None when test mode would change something)."""
    if hold is None or not names:
        return [], {}, True
    fun = "pkg.hold" if hold else "pkg.unhold"
    try:
        res = __salt__[fun](pkgs=names)
    except (CommandExecutionError, SaltInvocationError) as exc:
        return [str(exc)], {}, False
    lines: list[str] = []
    changes: dict[str, Any] = {}
    result: bool | None = True
    for pname in names:
        item = res.get(pname, {})
        lines.append(str(item.get("comment", "")))
        if item.get("changes"):
            changes[pname] = item["changes"]
        if item.get("result") is False:
            result = False
        elif item.get("result") is None and result is True:
            result = None
    return lines, changes, result


# ---------------------------------------------------------------------------
# states
# ---------------------------------------------------------------------------


def installed(
    name: str,
    version: Any = None,
    refresh: Any = None,
    fromrepo: str | None = None,
    skip_verify: bool = False,
    skip_suggestions: bool = False,
    pkgs: Any = None,
    sources: Any = None,
    reinstall: bool = False,
    hold: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make sure packages are installed (from the repositories, or ``sources``: local or ``salt://`` .debs)."""
    ret = _ret(name)
    try:
        wanted, srcs = _desired(name, version, pkgs, sources)
    except SaltInvocationError as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    saltenv = str(kwargs.get("saltenv") or globals().get("__env__") or "base")
    if refresh is True and not _test():
        if not _refresh_db(ret):
            return ret
        refresh = False
    current = __salt__["pkg.list_pkgs"]()
    _resolve_latest(wanted, srcs, current)

    # what the sources hold (read in test mode too: no apt involved)
    for pname, src in srcs.items():
        try:
            info = __salt__["pkg.bin_pkg_info"](src, saltenv=saltenv)
        except CommandExecutionError as exc:
            if pname in current:  # nothing to install would hide the broken source
                ret.update(result=False, comment=f"An error was encountered while installing package(s): {exc}")
                return ret
            continue  # reported when the install is tried, as Salt does
        if version is not None and len(srcs) == 1:
            wanted[pname] = str(version)
        else:
            wanted[pname] = info.get("version") or None

    targets = [p for p, spec in wanted.items() if reinstall or not _satisfied(p, spec, current)]
    already = [p for p in wanted if p not in targets]

    if not targets:
        if hold is None:
            ret["comment"] = "All specified packages are already installed"
            if any(spec is not None for spec in wanted.values()) and not srcs:
                ret["comment"] += " and are at the desired version"
            return ret
        lines, held, result = _holds(sorted(wanted), hold)
        ret["comment"] = "\n".join(["All specified packages are already installed.", *lines])
        ret["changes"] = held
        ret["result"] = result
        return ret

    if _test():
        if srcs:
            changes: dict[str, Any] = {p: {"new": "installed", "old": ""} for p in targets}
        else:
            changes = _installable_versions({p: wanted[p] for p in targets})
        ret.update(
            result=None,
            changes=changes,
            comment="The following packages would be installed/updated: " + ", ".join(targets),
        )
        return ret

    do_refresh = _want_refresh(refresh)
    install_args: dict[str, Any] = {
        "refresh": do_refresh,
        "fromrepo": fromrepo,
        "skip_verify": skip_verify,
        "reinstall": reinstall,
        "saltenv": saltenv,
    }
    if srcs:
        install_args["sources"] = [{p: srcs[p]} for p in targets]
    else:
        install_args["pkgs"] = [{p: wanted[p]} if wanted[p] is not None else p for p in targets]
    try:
        changes = __salt__["pkg.install"](**install_args)
    except CommandExecutionError as exc:
        if do_refresh:
            _refreshed()
        if exc.info:
            ret.update(result=False, comment=_error_comment(exc))
            info_changes = exc.info.get("changes") if isinstance(exc.info, dict) else None
            ret["changes"] = info_changes or {}
        else:
            ret.update(result=False, comment=f"An error was encountered while installing package(s): {exc}")
        return ret
    except SaltInvocationError as exc:
        ret.update(result=False, comment=f"An error was encountered while installing package(s): {exc}")
        return ret
    if do_refresh:
        _refreshed()
    ret["changes"] = changes
    now = __salt__["pkg.list_pkgs"]()
    if srcs:
        failed = [p for p in targets if not now.get(p)]
    else:
        failed = [p for p in targets if not _satisfied(p, wanted[p], now)]
    done = [p for p in targets if p not in failed]
    lines = []
    if done:
        # as Salt: name=version when a version was asked for, a count when the list is long
        summary = ", ".join(done if srcs else [_desired_pkg(p, wanted[p]) for p in done])
        if len(summary) < 20:
            lines.append(f"The following packages were installed/updated: {summary}")
        else:
            lines.append(
                f"{len(done)} targeted package{'s' if len(done) > 1 else ''} {'were' if len(done) > 1 else 'was'} installed/updated."
            )
    if already:
        lines.append("The following packages were already installed: " + ", ".join(already))
    if failed:
        lines.append("The following packages failed to install/update: " + ", ".join(failed))
        ret["result"] = False
    hold_lines, hold_changes, hold_result = _holds([p for p in wanted if p not in failed], hold)
    lines += hold_lines
    for pname, chg in hold_changes.items():
        ret["changes"].setdefault(pname, chg)
    if hold_result is False:
        ret["result"] = False
    ret["comment"] = "\n".join(lines)
    return ret


def latest(
    name: str,
    refresh: Any = None,
    fromrepo: str | None = None,
    skip_verify: bool = False,
    pkgs: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make sure packages are installed at the newest version the repositories offer."""
    ret = _ret(name)
    if kwargs.get("version"):
        ret.update(result=False, comment='The "version" argument to pkg.latest is not supported')
        return ret
    if pkgs is not None and not isinstance(pkgs, list):
        ret.update(result=False, comment='Invalidly formatted "pkgs" parameter: it must be a list')
        return ret
    try:
        _no_duplicates(pkgs)
    except SaltInvocationError as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    names = [str(next(iter(p))) if isinstance(p, dict) else str(p) for p in pkgs] if pkgs else [name]
    if not _test() and _want_refresh(refresh) and not _refresh_db(ret):
        return ret
    cur = __salt__["pkg.version"](*names)
    avail = __salt__["pkg.latest_version"](*names, refresh=False, fromrepo=fromrepo)
    if len(names) == 1:
        cur, avail = {names[0]: cur}, {names[0]: avail}
    missing = [n for n in names if not cur.get(n) and not avail.get(n)]
    if missing:
        ret["result"] = False
        if len(missing) == 1:
            ret["comment"] = f"No information found for '{missing[0]}'."
        else:
            ret["comment"] = "No information found for the following packages: " + ", ".join(missing)
        return ret
    targets = {n: avail[n] for n in names if avail.get(n)}
    up_to_date = [n for n in names if n not in targets]
    if not targets:
        if len(names) == 1:
            ret["comment"] = f"Package {names[0]} is already up-to-date"
        else:
            ret["comment"] = f"All packages are up-to-date ({', '.join(sorted(names))})."
        return ret
    if _test():
        ret["result"] = None
        # as Salt: what the provider's list_repo_pkgs says of "name=version" (dnf: nothing, so
        # "installed"; apt: that version)
        ret["changes"] = _installable_versions(dict(targets), cur)
        lines = ["The following packages would be installed/upgraded: " + ", ".join(targets)]
        if up_to_date:
            lines.append("The following packages are already up-to-date: " + ", ".join(up_to_date))
        ret["comment"] = "\n".join(lines)
        return ret
    try:
        changes = __salt__["pkg.install"](
            pkgs=[{n: v} for n, v in targets.items()], refresh=False, fromrepo=fromrepo, skip_verify=skip_verify
        )
    except CommandExecutionError as exc:
        ret.update(
            result=False,
            comment="An error was encountered while installing package(s): "
            + _error_comment(exc, keep_empty_changes=True),
        )
        return ret
    ret["changes"] = changes
    now = __salt__["pkg.version"](*targets)
    if len(targets) == 1:
        now = {next(iter(targets)): now}
    failed = [n for n, v in targets.items() if now.get(n) != v]
    done = [n for n in targets if n not in failed]
    lines = []
    if done:
        lines.append("The following packages were successfully installed/upgraded: " + ", ".join(done))
    if up_to_date:
        lines.append("The following packages were already up-to-date: " + ", ".join(up_to_date))
    if failed:
        ret["result"] = False
        lines.append("The following packages failed to update: " + ", ".join(failed))
    ret["comment"] = "\n".join(lines)
    return ret


def _uninstall(action: str, name: str, version: Any, pkgs: Any) -> dict[str, Any]:
    ret = _ret(name)
    if pkgs is not None and not isinstance(pkgs, list):
        ret.update(result=False, comment='Invalidly formatted "pkgs" parameter: it must be a list')
        return ret
    try:
        _no_duplicates(pkgs)
    except SaltInvocationError as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    names = [str(next(iter(p))) if isinstance(p, dict) else str(p) for p in pkgs] if pkgs else [name]
    current = __salt__["pkg.list_pkgs"]()
    leftovers = __salt__["pkg.list_pkgs"](removed=True) if action == "purge" else {}
    targets = []
    for pname in names:
        if pname in current:
            if version is None or _satisfied(pname, str(version), current):
                targets.append(pname)
        elif pname in leftovers:
            targets.append(pname)
    past = "removed" if action == "remove" else "purged"
    if not targets:
        ret["comment"] = (
            "All specified packages are already absent"
            if action == "remove"
            else "None of the targeted packages are installed or partially installed"
        )
        return ret
    if _test():
        ret.update(
            result=None,
            changes={p: {"new": past, "old": ""} for p in targets},
            comment=f"The following packages will be {past}: {', '.join(targets)}.",
        )
        return ret
    try:
        changes = __salt__[f"pkg.{action}"](pkgs=targets)
    except CommandExecutionError as exc:
        ret["result"] = False
        ret["comment"] = _error_comment(exc)
        info = exc.info if isinstance(exc.info, dict) else {}
        ret["changes"] = info.get("changes") or {}
        return ret
    ret["changes"] = changes
    now = __salt__["pkg.list_pkgs"]()
    left = __salt__["pkg.list_pkgs"](removed=True) if action == "purge" else {}
    failed = [p for p in targets if p in now or p in left]
    if failed:
        ret["result"] = False
        ret["comment"] = f"The following packages failed to {action}: {', '.join(failed)}."
        return ret
    not_installed = [p for p in names if p not in targets]
    if not_installed:
        ret["comment"] = (
            f"The following packages were not installed: {', '.join(not_installed)} "
            f"The following packages were {past}: {', '.join(targets)}."
        )
    else:
        ret["comment"] = f"All targeted packages were {past}."
    return ret


def removed(name: str, version: Any = None, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Make sure packages are not installed (their config files may stay)."""
    return _uninstall("remove", name, version, pkgs)


def purged(name: str, version: Any = None, pkgs: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Make sure packages are not installed and their config files are gone too."""
    return _uninstall("purge", name, version, pkgs)
