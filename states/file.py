"""The ``file`` state module: files, directories, links and text edits on this host.

Runs wherever states run (``briny-call``, the minion). It decides what has
to change and reports it as Salt 3007 does (comments, ``changes`` with
Salt's unified diffs, test-mode predictions); the disk work is done by the
``file`` execution module through ``__salt__["file.*"]`` (helpers in
``briny.minion.host.fileops``) and ``salt://`` files come through ``cp``.

Functions: ``managed``, ``directory``, ``recurse``, ``absent``, ``exists``,
``missing``, ``touch``, ``append``, ``prepend``, ``replace``, ``line``,
``blockreplace``, ``comment``, ``uncomment``, ``symlink``, ``copy``,
``rename``, ``serialize``, ``keyvalue``, ``accumulated`` (``states/_file_accumulated.py``). ``managed`` lives in
``states/_file_managed.py``, the text edits in ``states/_file_edit.py``,
links/copies in ``states/_file_links.py``, ``serialize`` in ``states/_file_serialize.py``, the helpers they share
in ``states/_file_common.py``: private files this module imports (and so
exposes as its own functions), loaded with its dunders (see
:mod:`briny.common.loader`).

Writes are atomic (a temporary file in the destination's folder, then a
rename). A symlink at a managed path is followed to its target, as Salt's
``follow_symlinks`` default says; with ``follow_symlinks: False`` the link
itself is replaced and its target is never written. Bad input (a missing
source, a bad mode or hash, an unknown owner, a directory in the way) fails
the state with a comment, never a traceback.

On purpose unlike Salt (where Salt is wrong): a bad ``mode`` fails before
anything is written; "Unable to manage file: " is never doubled; a template
error in test mode is a comment, not a traceback; ``file.line`` inserts at
``start``/``end`` are idempotent and end with a newline; ``file.line`` with
``create`` predicts the new file in test mode; ``file.directory`` ``clean``
keeps the folders holding excluded files; ``file.copy`` with ``force`` on
identical files changes nothing; ``file.recurse`` manages files in sorted
order (Salt's order is random, so are the folders its changes name).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import BrinyError

from ._file_accumulated import accumulated
from ._file_common import _env, _err, _fail, _ret, _salt, _start
from ._access import _testing
from ._file_edit import append, blockreplace, comment, keyvalue, line, prepend, replace, uncomment
from ._file_links import copy, rename, symlink
from ._file_managed import managed
from ._file_serialize import serialize

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

# the state functions: those defined here and those of the private files imported above
__all__ = [
    "absent",
    "accumulated",
    "append",
    "blockreplace",
    "comment",
    "copy",
    "directory",
    "exists",
    "keyvalue",
    "line",
    "managed",
    "missing",
    "mod_run_check_cmd",
    "prepend",
    "recurse",
    "rename",
    "replace",
    "serialize",
    "symlink",
    "touch",
    "uncomment",
]


def mod_run_check_cmd(cmd: str, filename: str, **check_cmd_opts: Any) -> Any:
    """Run ``cmd FILENAME``; True when it exits 0 (the engine's hook for ``check_cmd``)."""
    cret = __salt__["cmd.run_all"](f"{cmd} {filename}", python_shell=True)
    if cret.get("retcode"):
        return {"comment": "check_cmd execution failed", "skip_watch": True, "result": False}
    return True


# -- file.directory / file.recurse -----------------------------------------------------------
def _dir_lines(changes: dict[str, dict[str, Any]]) -> str:
    return "The following files will be changed:\n" + "".join(
        f"{path}: {k} - {v}\n" for path, ch in changes.items() for k, v in ch.items()
    )


def directory(
    name: str,
    user: Any = None,
    group: Any = None,
    recurse: Any = None,
    dir_mode: Any = None,
    file_mode: Any = None,
    makedirs: bool = False,
    clean: bool = False,
    exclude_pat: str | list[str] | None = None,
    mode: Any = None,
    allow_symlink: bool = True,
    follow_symlinks: bool = False,
    force: bool = False,
    require: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make ``name`` a directory with the given owner and mode, optionally recursively and clean."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    name = name.rstrip("/") or "/"
    try:
        dmode = _salt("normalize_mode")(dir_mode if dir_mode is not None else mode)
        fmode = _salt("normalize_mode")(file_mode if file_mode is not None else mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    recurse = [recurse] if isinstance(recurse, str) else list(recurse or [])
    unknown = [r for r in recurse if r not in ("user", "group", "mode", "ignore_files", "ignore_dirs", "silent")]
    if unknown:
        return _fail(
            ret,
            f'Types for "recurse" limited to "user", "group", "mode", "ignore_files", '
            f'"ignore_dirs" and "silent"; got {", ".join(map(str, unknown))}',
        )
    is_link_dir = os.path.islink(name) and os.path.isdir(name) and allow_symlink
    if os.path.lexists(name) and not os.path.isdir(name) or (os.path.islink(name) and not is_link_dir):
        if not force:
            kind = "symlink" if os.path.islink(name) else "file"
            return _fail(ret, f"Specified location {name} exists and is a {kind}")
    missing = _salt("perms_missing")(user, group) if not _testing() else ""
    if not os.path.isdir(name):
        new = {name: {"directory": "new"}}
        if _testing():
            ret.update(result=None, changes=new, comment=_dir_lines(new))
            return ret
        if missing:
            return _fail(ret, missing)
        if not os.path.isdir(os.path.dirname(name)) and not makedirs:
            return _fail(ret, f"No directory to create {name} in")
        try:
            if os.path.lexists(name):
                _salt("remove")(name)
            _salt("makedirs_perms")(name, user, group, dmode)
        except (BrinyError, OSError) as exc:
            return _fail(ret, f"Failed to create directory {name}: {_err(exc)}")
        ret.update(result=True, changes=new, comment="")
        if recurse or clean:
            more = directory(
                name,
                user=user,
                group=group,
                recurse=recurse,
                dir_mode=dir_mode,
                file_mode=file_mode,
                clean=clean,
                exclude_pat=exclude_pat,
                mode=mode,
            )
            ret["changes"].update(more["changes"])
        return ret

    if missing:
        return _fail(ret, missing)
    top = _salt("perm_changes")(name, user, group, dmode)
    plan = _salt("directory_plan")(name, user, group, dmode, fmode, recurse, clean, exclude_pat, _keep(name, require))
    items = [] if "silent" in recurse else plan["items"]
    per_path = {path: ch for path, ch in items}
    removed = {path: {"removed": "Removed due to clean"} for path, _top in plan["removed"]}
    if not top and not plan["items"] and not removed:
        ret.update(result=True, comment=f"The directory {name} is in the correct state")
        return ret
    if _testing():
        changes = {**per_path, **removed, **({name: top} if top else {})}
        ret.update(result=None, changes=changes, comment=_dir_lines(changes))
        return ret
    try:
        _salt("apply_perm_changes")(name, top)
        for path, ch in plan["items"]:
            _salt("apply_perm_changes")(path, ch)
        for path, is_top in plan["removed"]:
            if is_top:
                _salt("remove")(path)
    except (BrinyError, OSError) as exc:
        return _fail(ret, _err(exc))
    changes = {**({name: top} if top else {}), **per_path}
    for ch in [top] + [ch for _p, ch in plan["items"]]:
        changes.update(ch)
    if removed:
        changes.update(removed)
        changes["removed"] = [path for path, is_top in plan["removed"] if is_top]
    comment = f"Directory {name} updated" if top or plan["items"] else f"Files cleaned from directory {name}"
    ret.update(result=True, changes=changes, comment=comment)
    return ret


def _keep(name: str, require: Any) -> list[str]:
    """What ``clean`` must keep for the ``require: [{file: ID or name}]`` of the state, as Salt:
    each required ``file`` state (matched by ``__id__`` or ``name`` in this run's chunks) keeps
    its path, and a required folder inside ``name`` keeps everything that is in it."""
    out: list[str] = []
    wanted = [r["file"] for r in (require if isinstance(require, list) else []) if isinstance(r, dict) and "file" in r]
    if not wanted:
        return out
    chunks = globals().get("__lowstate__") or []
    for ref in wanted:
        for low in chunks:
            if low.get("name") != ref and low.get("__id__") != ref:
                continue
            path = str(low.get("name"))
            if not os.path.isdir(path):
                out.append(path)
            elif not os.path.relpath(os.path.abspath(path), os.path.abspath(name)).startswith(os.pardir):
                out.append(path)
                for dirpath, dirnames, filenames in os.walk(path):
                    out.extend(os.path.join(dirpath, n) for n in dirnames + filenames)
    return out


def recurse(
    name: str,
    source: Any,
    keep_source: bool = True,
    clean: bool = False,
    require: Any = None,
    user: Any = None,
    group: Any = None,
    dir_mode: Any = None,
    file_mode: Any = None,
    sym_mode: Any = None,
    template: str | None = None,
    context: Any = None,
    replace: bool = True,
    defaults: Any = None,
    include_empty: bool = False,
    backup: str = "",
    include_pat: str | list[str] | None = None,
    exclude_pat: str | list[str] | None = None,
    maxdepth: int | None = None,
    keep_symlinks: bool = False,
    force_symlinks: bool = False,
    saltenv: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Copy the ``salt://`` folder ``source`` to ``name`` (files through ``file.managed``)."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    name = name.rstrip("/") or "/"
    env = _env(saltenv, kwargs)
    srcs = source if isinstance(source, list) else [source]
    for src in srcs:
        if not str(src).startswith("salt://"):
            return _fail(ret, f"Invalid source '{src}' (must be a salt:// URI)")
    keep_mode = isinstance(file_mode, str) and file_mode.lower() == "keep"  # each file keeps its source's
    try:
        _salt("normalize_mode")(dir_mode)
        _salt("normalize_mode")(None if keep_mode else file_mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    if os.path.lexists(name) and not os.path.isdir(name):
        return _fail(ret, f"The path {name} exists and is not a directory")
    found = None
    for src in srcs:
        path, _, query = str(src)[len("salt://") :].partition("?")
        senv = query.split("saltenv=")[-1] if "saltenv=" in query else env
        prefix = path.strip("/") + "/"
        files = [f for f in __salt__["cp.list_master"](senv, prefix) if f.startswith(prefix)]
        if files:
            found = (prefix, senv, files)
            break
    if found is None:
        return _fail(ret, "Recurse failed: none of the specified sources were found")
    prefix, senv, files = found
    if not _testing() and not os.path.isdir(name):
        try:  # Salt makes the top folder first and does not report it
            _salt("makedirs_perms")(name, user, group, _salt("normalize_mode")(dir_mode))
        except (BrinyError, OSError) as exc:
            return _fail(ret, f"Failed to create directory {name}: {_err(exc)}")
    comments: dict[str, str] = {}
    results: list[Any] = []
    keep: set[str] = set()

    def merge(path: str, sub: dict[str, Any]) -> None:
        results.append(sub["result"])
        if sub["changes"]:
            ret["changes"][path] = sub["changes"]
        if sub["changes"] or sub["result"] is not True:
            comments[path] = sub["comment"]

    def manage_dir(path: str) -> None:
        keep.add(path)
        merge(path, directory(path, user=user, group=group, dir_mode=dir_mode, makedirs=True))

    # As Salt: the folders first, then the files (Salt walks sets here, so its order varies
    # from run to run; briny sorts each group)
    todo: list[tuple[str, str]] = []
    dirs: set[str] = set()
    for rel_full in sorted(files):
        rel = rel_full[len(prefix) :]
        if maxdepth is not None and rel.count("/") > int(maxdepth):
            continue
        if (include_pat or exclude_pat) and not _salt("path_included")(rel, include_pat, exclude_pat):
            continue
        dest = os.path.join(name, rel)
        for d in _parents(name, os.path.dirname(dest)):
            keep.add(d)
        dirs.add(os.path.dirname(dest))
        todo.append((dest, rel_full))
    if include_empty:  # the source folder itself too (as name/.), as Salt's listing gives it
        top = prefix.rstrip("/")
        for d in __salt__["cp.list_master_dirs"](senv, top):
            if d == top or d.startswith(prefix):
                dirs.add(os.path.join(name, d[len(prefix) :] if d != top else "."))
    for d in sorted(dirs):
        manage_dir(d)
    for dest, rel_full in todo:
        keep.add(dest)
        merge(
            dest,
            managed(
                dest,
                source=f"salt://{rel_full}?saltenv={senv}",
                user=user,
                group=group,
                mode=file_mode,
                template=template,
                makedirs=True,
                context=context,
                defaults=defaults,
                replace=replace,
                backup=backup,
                saltenv=senv,
                # as Salt: the extra keyword arguments go on (to the templates), but these two
                **{k: v for k, v in kwargs.items() if k not in ("mode", "makedirs")},
            ),
        )
    if clean and os.path.isdir(name):
        plan = _salt("directory_plan")(
            name, clean=True, exclude_pat=exclude_pat, keep=sorted(keep) + _keep(name, require)
        )
        gone = [p for p, top in plan["removed"] if top]
        if gone:
            if _testing():
                comments["removed"] = "\n".join(p for p, _t in plan["removed"])
                results.append(None)
            else:
                for p in gone:
                    _salt("remove")(p)
                ret["changes"]["removed"] = gone
    if False in results:
        ret["result"] = False
    elif None in results:
        ret["result"] = None
    else:
        ret["result"] = True
    if not ret["changes"] and ret["result"] is True:
        ret["comment"] = f"The directory {name} is in the correct state"
    elif _testing() or ret["result"] is False:
        ret["comment"] = "\n".join(f"\n#### {k} ####\n{v}" for k, v in comments.items()).strip()
    else:
        ret["comment"] = f"Recursively updated {name}"
    return ret


def _parents(top: str, path: str) -> list[str]:
    out = []
    while path.startswith(top) and path != top:
        out.append(path)
        path = os.path.dirname(path)
    return out


# -- simple presence states ----------------------------------------------------------------------
def absent(name: str, **kwargs: Any) -> dict[str, Any]:
    """Make sure nothing is at ``name`` (a file, link or whole directory tree)."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    if os.path.normpath(name) == "/":
        return _fail(ret, 'Refusing to make "/" absent')
    if not os.path.lexists(name):
        ret.update(result=True, comment=f"File {name} is not present")
        return ret
    kind = "Directory" if os.path.isdir(name) and not os.path.islink(name) else "File"
    if _testing():
        ret.update(result=None, changes={"removed": name}, comment=f"{kind} {name} is set for removal")
        return ret
    try:
        _salt("remove")(name)
    except (BrinyError, OSError) as exc:
        return _fail(ret, str(exc))
    ret.update(result=True, changes={"removed": name}, comment=f"Removed {kind.lower()} {name}")
    return ret


def exists(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed when something is at ``name``; never changes anything."""
    ret = _ret(name)
    if not name:
        return _fail(ret, "Must provide name to file.exists")
    if os.path.lexists(os.path.expanduser(name)):
        ret.update(result=True, comment=f"Path {name} exists")
    else:
        ret["comment"] = f"Specified path {name} does not exist"
    return ret


def missing(name: str, **kwargs: Any) -> dict[str, Any]:
    """Succeed when nothing is at ``name``; never changes anything."""
    ret = _ret(name)
    if not name:
        return _fail(ret, "Must provide name to file.missing")
    if os.path.lexists(os.path.expanduser(name)):
        ret["comment"] = f"Specified path {name} exists"
    else:
        ret.update(result=True, comment=f"Path {name} is missing")
    return ret


def touch(name: str, atime: float | None = None, mtime: float | None = None, makedirs: bool = False) -> dict[str, Any]:
    """Create ``name`` empty if missing, and set its access and modification times."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    present = os.path.exists(name)
    if _testing():
        if present:
            ret.update(result=True, changes={"new": name}, comment=f"File {name} exists and has the correct times")
        else:
            ret.update(result=None, changes={"new": name}, comment=f"File {name} is set to be created")
        return ret
    if os.path.isdir(name):
        return _fail(ret, f"Specified target {name} is a directory")
    parent = os.path.dirname(name)
    if not os.path.isdir(parent):
        if not makedirs:
            return _fail(ret, f"Directory not present to touch file {name}")
        try:
            _salt("makedirs_perms")(parent)
        except (BrinyError, OSError) as exc:
            return _fail(ret, str(exc))
    try:
        _salt("touch")(name, atime, mtime)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f"Unable to touch {name}: {exc}")
    if present:
        ret.update(result=True, changes={"touched": name}, comment=f"Updated times on file {name}")
    else:
        ret.update(result=True, changes={"new": name}, comment=f"Created empty file {name}")
    return ret
