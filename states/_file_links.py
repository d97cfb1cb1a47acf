"""Link, copy and rename functions of the ``file`` state module.

Runs on the host applying states. A private file of ``states/file.py``, which
imports these functions and so exposes them as its own; loaded with that
module's dunders (see :mod:`briny.common.loader`).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import BrinyError

from ._file_common import _err, _fail, _salt, _start
from ._access import _testing

if TYPE_CHECKING:
    pass


# -- links, copies, renames -------------------------------------------------------------------------
def symlink(
    name: str,
    target: str,
    force: bool = False,
    backupname: str | None = None,
    makedirs: bool = False,
    user: Any = None,
    group: Any = None,
    mode: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make ``name`` a symlink to ``target``."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    target = os.path.expanduser(str(target))
    if user is not None and _salt("user_to_uid")(user) == "":
        return _fail(ret, f"User {user} does not exist")
    if group is not None and _salt("group_to_gid")(group) == "":
        return _fail(ret, f"Group {group} does not exist")
    parent = os.path.dirname(name)
    is_link = os.path.islink(name)
    current = os.readlink(name) if is_link else None
    in_way = os.path.lexists(name) and not is_link
    if _testing():
        if is_link and current == target:
            ret.update(result=True, comment=f"The symlink {name} is present")
        elif is_link:
            ret.update(
                result=None, changes={"change": name}, comment=f"Link {name} target is set to be changed to {target}"
            )
        elif in_way and force:
            ret.update(
                result=None,
                comment=f"The file or directory {name} is set for removal to make way "
                f"for a new symlink targeting {target}",
            )
        elif in_way and backupname:
            ret.update(
                result=None,
                comment=f"The file or directory {name} is set to be backed up to "
                f"{backupname} to make way for a new symlink targeting {target}",
            )
        elif in_way:
            return _fail(
                ret, f"File or directory exists where the symlink {name} should be. Did you mean to use force?"
            )
        else:
            comment = f"Symlink {name} to {target} is set for creation"
            if not os.path.isdir(parent):
                comment += (
                    f"\n{parent} will be created" if makedirs else f"\nDirectory {parent} for symlink is not present"
                )
            ret.update(result=None, changes={"new": name}, comment=comment)
        return ret
    if not os.path.isdir(parent):
        if not makedirs:
            return _fail(ret, f"Directory {parent} for symlink is not present")
        try:
            _salt("makedirs_perms")(parent, user, group, _salt("normalize_mode")(mode))
        except (BrinyError, OSError) as exc:
            return _fail(ret, _err(exc))
    if is_link and current == target:
        ch = _salt("perm_changes")(name, user, group, None, follow_symlinks=False)
        if ch:
            _salt("lchown")(name, user, group)
            ret.update(changes=ch)
        owner = f"{_salt('get_user')(name, follow_symlinks=False)}:{_salt('get_group')(name, follow_symlinks=False)}"
        ret.update(result=True, comment=f"Symlink {name} is present and owned by {owner}")
        return ret
    try:
        if in_way:
            if backupname:
                dest = backupname if os.path.isabs(backupname) else os.path.join(parent, backupname)
                if os.path.lexists(dest) and not force:
                    return _fail(
                        ret, f"Symlink & backup dest exists and Force not set. {name} -> {target} - backup: {dest}"
                    )
                _salt("rename")(name, dest)
            elif not force:
                kind = "Directory" if os.path.isdir(name) else "File"
                return _fail(ret, f"{kind} exists where the symlink {name} should be")
        _salt("symlink")(target, name, force=True)
        _salt("lchown")(name, user, group)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f"Unable to create new symlink {name} -> {target}: {_err(exc)}")
    ret.update(result=True, changes={"new": name}, comment=f"Created new symlink {name} -> {target}")
    return ret


def copy(
    name: str,
    source: str,
    force: bool = False,
    makedirs: bool = False,
    preserve: bool = False,
    user: Any = None,
    group: Any = None,
    mode: Any = None,
    subdir: bool = False,
    **kwargs: Any,
) -> dict[str, Any]:
    """Copy the local file or folder ``source`` to ``name`` (only if missing, unless ``force``)."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    source = os.path.expanduser(str(source))
    if not os.path.isabs(source):
        return _fail(ret, f"Specified file {source} is not an absolute path")
    if not os.path.lexists(source):
        return _fail(ret, f'Source file "{source}" is not present')
    if subdir and os.path.isdir(name):
        name = os.path.join(name, os.path.basename(source))
    try:
        mode = _salt("normalize_mode")(mode)
    except BrinyError as exc:
        return _fail(ret, str(exc))
    if user is not None and group is None:
        group = _salt("primary_group")(user)
    missing_owner = _salt("perms_missing")(user, group)
    if missing_owner:
        return _fail(ret, missing_owner)
    if os.path.lexists(name):
        same = os.path.isfile(name) and os.path.isfile(source) and _salt("get_hash")(name) == _salt("get_hash")(source)
        if not force or same:
            ret.update(result=True, comment=f'The target file "{name}" exists and will not be overwritten')
            return ret
    if _testing():
        ret.update(result=None, comment=f'File "{source}" is set to be copied to "{name}"')
        return ret
    parent = os.path.dirname(name)
    try:
        if not os.path.isdir(parent):
            if not makedirs:
                return _fail(ret, f"The target directory {parent} is not present")
            _salt("makedirs_perms")(parent, user, group, _salt("dir_mode_for")(mode or _salt("get_mode")(source)))
        _salt("copy")(source, name, recurse=True, remove_existing=True, preserve=preserve)
        ret["changes"][name] = source
        if not preserve:
            ch = _salt("perm_changes")(name, user, group, mode)
            _salt("apply_perm_changes")(name, ch)
            ret["changes"].update(ch)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f'Failed to copy "{source}" to "{name}": {_err(exc)}')
    ret.update(result=True, comment=f'Copied "{source}" to "{name}"')
    return ret


def rename(name: str, source: str, force: bool = False, makedirs: bool = False, **kwargs: Any) -> dict[str, Any]:
    """Move ``source`` to ``name`` if ``source`` is there and ``name`` is not (or ``force``)."""
    name, ret, bad = _start(name)
    if bad:
        return _fail(ret, bad)
    source = os.path.expanduser(str(source))
    if not os.path.isabs(source):
        return _fail(ret, f"Specified file {source} is not an absolute path")
    if not os.path.lexists(source):
        ret.update(result=True, comment=f'Source file "{source}" has already been moved out of place')
        return ret
    if os.path.lexists(name) and not force:
        ret.update(result=True, comment=f'The target file "{name}" exists and will not be overwritten')
        return ret
    if _testing():
        ret.update(result=None, comment=f'File "{source}" is set to be moved to "{name}"')
        return ret
    parent = os.path.dirname(name)
    try:
        if not os.path.isdir(parent):
            if not makedirs:
                return _fail(ret, f"The target directory {parent} is not present")
            _salt("makedirs_perms")(parent)
        if os.path.lexists(name):
            _salt("remove")(name)
        _salt("rename")(source, name)
    except (BrinyError, OSError) as exc:
        return _fail(ret, f'Failed to move "{source}" to "{name}": {_err(exc)}')
    ret.update(result=True, changes={name: source}, comment=f'Moved "{source}" to "{name}"')
    return ret
