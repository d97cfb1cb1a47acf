"""The ``archive`` state module: ``archive.extracted`` for tar and zip archives.

Runs wherever states run; the archive work goes through the ``archive``
execution module (Python's tarfile/zipfile, every member checked before
anything is written), sources through ``cp.cache_file``, ownership through
``archive.set_owner``.

Results follow Salt 3007 (checked against the reference, live, test and
second runs): ``name`` is the destination folder (reported with a trailing
``/``); extraction is needed when a member is missing on disk (or always
with ``overwrite``), and then the comment is ``<source> extracted to
<name>/, due to absence of one or more files/dirs`` with changes
``directories_created`` (when the folder was made) and ``extracted_files``
(cut to ``trim_output`` entries); otherwise ``All files in archive are
already present``. ``if_missing`` short-cuts with ``Path x exists``;
``enforce_toplevel`` (on by default) refuses archives without a single
top-level folder with Salt's "tar-bomb" comment; a path of the wrong type
fails unless ``force``; ``clean`` removes the archive's top-level paths
before extracting (changes ``removed``); ``user`` / ``group`` are enforced
on the top-level paths (changes ``updated ownership``).

Differences from Salt, on purpose: an archive with a member that would land
outside the destination (absolute path, ``..``, a link out, a path through
a link) fails the state and nothing is extracted (Salt writes such members
or crashes); in test mode a ``salt://`` source is checked precisely when the
file server is local (masterless), as Salt does once its cache holds the
archive; ``options`` honours only ``--strip-components``; rar,
``source_hash_update``, ``password`` and signatures are not supported.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, FileServerError, SaltInvocationError
from ._access import _env, _salt, _testing

log = logging.getLogger(__name__)

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__


def _masterless() -> bool:
    opts = __opts__
    return opts.get("file_client") == "local" or __job__.master is None


def _expected_hash(source_hash: Any, source: str) -> tuple[str, str]:
    """(kind, hex digest) from ``type=hex``, a bare hex digest, or a hash file."""
    text = str(source_hash).strip()
    if text.startswith(("salt://", "/", "file://")):
        local = _salt("cp.cache_file")(text, saltenv=_env())
        if not local:
            raise CommandExecutionError(f"Unable to cache source_hash file {text}")
        with open(str(local), encoding="utf-8", errors="replace") as fh:
            lines = [line.split() for line in fh if line.strip()]
        base = os.path.basename(source)
        pick = next((w for w in lines if len(w) > 1 and os.path.basename(w[-1].lstrip("*")) == base), None)
        pick = pick or (lines[0] if lines else [""])
        text = pick[0]
    kind, _, digest = text.rpartition("=")
    digest = digest.strip().lower()
    kind = kind.strip().lower() or {32: "md5", 40: "sha1", 56: "sha224", 64: "sha256", 96: "sha384", 128: "sha512"}.get(
        len(digest), ""
    )
    if not kind or not all(c in "0123456789abcdef" for c in digest):
        raise SaltInvocationError(f"Invalid source_hash {source_hash}")
    return kind, digest


def _fetch(source: Any) -> tuple[str, str | None, str | None]:
    """(source as named, local path or None, failure comment or None)."""
    sources = source if isinstance(source, list) else [source]
    first = str(sources[0]) if sources else ""
    for item in sources:
        src = str(next(iter(item)) if isinstance(item, dict) else item)
        if src.startswith("file://"):
            src = src[len("file://") :]
        if src.startswith("/"):
            if os.path.isfile(src):
                return src, src, None
            if len(sources) == 1:
                return src, None, f"Source file '{src}' does not exist"
            continue
        try:
            local = _salt("cp.cache_file")(src, saltenv=_env())
        except FileServerError as exc:  # a URL that cannot be downloaded: Salt's comment is the error
            log.error("Unable to cache %s: %s", src, exc)
            if len(sources) == 1:
                return src, None, str(exc)
            local = None
        if local:
            return src, str(local), None
    return first, None, f"Failed to cache {first}, check minion log for more information"


def _present_check(name: str, contents: dict[str, list[str]]) -> tuple[bool, list[str]]:
    """(something missing, paths of the wrong type) for the archive's members under ``name``."""
    missing, wrong = False, []
    for paths, want in ((contents["dirs"], "dir"), (contents["files"], "file"), (contents["links"], "link")):
        for rel in paths:
            full = os.path.join(name, rel).rstrip(os.sep)
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                missing = True
                continue
            except NotADirectoryError:
                continue
            is_link, is_dir = os.path.islink(full), os.path.isdir(full) and not os.path.islink(full)
            ok = is_dir if want == "dir" else is_link if want == "link" else not (is_link or is_dir)
            if not ok and st is not None:
                wrong.append(rel)
    return missing, wrong


def extracted(
    name: str,
    source: Any = None,
    source_hash: Any = None,
    source_hash_name: Any = None,
    source_hash_update: bool = False,
    skip_files_list_verify: bool = False,
    skip_verify: bool = False,
    password: Any = None,
    options: Any = None,
    list_options: Any = None,
    force: bool = False,
    overwrite: bool = False,
    clean: bool = False,
    clean_parent: bool = False,
    user: Any = None,
    group: Any = None,
    if_missing: Any = None,
    trim_output: Any = False,
    use_cmd_unzip: Any = None,
    extract_perms: bool = True,
    enforce_toplevel: bool = True,
    enforce_ownership_on: Any = None,
    archive_format: Any = None,
    keep_source: bool = True,
    **kwargs: Any,
) -> dict[str, Any]:
    """Ensure the archive ``source`` is extracted into the folder ``name``."""
    ret: dict[str, Any] = {"name": name, "result": False, "changes": {}, "comment": ""}
    if not name or not os.path.isabs(str(name)):
        ret["comment"] = f"{name} is not an absolute path"
        return ret
    name = str(name).rstrip(os.sep) + os.sep
    if os.path.lexists(name.rstrip(os.sep)) and not os.path.isdir(name):
        ret["comment"] = f"{name} exists and is not a directory"
        return ret
    if if_missing is not None and not os.path.isabs(str(if_missing)):
        ret["comment"] = "Value for 'if_missing' is not an absolute path"
        return ret
    if if_missing and os.path.exists(str(if_missing)):
        ret.update(result=True, comment=f"Path {if_missing} exists")
        return ret
    if user and not _salt("user.info")(user):
        ret["comment"] = f"User {user} does not exist"
        return ret
    if group and not _salt("group.info")(group):
        ret["comment"] = f"Group {group} does not exist"
        return ret
    if clean and clean_parent:
        ret["comment"] = "Only one of 'clean' and 'clean_parent' can be set to True"
        return ret
    if password:
        ret["comment"] = "Password-protected archives are not supported by briny"
        return ret
    if trim_output not in (False, None):
        try:
            trim_output = 100 if trim_output is True else int(trim_output)
        except (TypeError, ValueError):
            ret["comment"] = "Invalid value for trim_output, must be True/False or an integer"
            return ret
    if not source:
        ret["comment"] = "'source' is required"
        return ret

    src_str = str(source[0] if isinstance(source, list) and source else source)
    remote_src = src_str.startswith(("http://", "https://", "ftp://"))
    if _testing() and (
        (remote_src and not _salt("cp.is_cached")(src_str, _env()))
        or (src_str.startswith("salt://") and not _masterless())
    ):
        ret.update(
            result=None,
            comment=f"Archive {src_str} would be cached (if necessary) and checked to discover if extraction is needed",
        )
        return ret
    shown, cached, problem = _fetch(source)
    if problem:
        ret["comment"] = problem
        return ret
    assert cached is not None
    if source_hash and not skip_verify:
        try:
            kind, digest = _expected_hash(source_hash, shown)
            actual = _salt("file.get_hash")(cached, kind)
        except (CommandExecutionError, SaltInvocationError, ValueError, OSError) as exc:
            ret["comment"] = str(exc)
            return ret
        if actual != digest:
            ret["comment"] = (
                f"File is cached to {cached}, but the hash ({actual}) does not match the specified hash ({digest})"
            )
            return ret

    fmt = str(archive_format).lower() if archive_format else _salt("archive.guess_format")(cached)
    if fmt not in ("tar", "zip"):
        ret["comment"] = (
            f"Invalid archive_format '{archive_format}'. Supported formats: tar, zip"
            if archive_format
            else "Could not guess archive_format from the value of the 'source' "
            "argument. Please set this archive_format to one of the following: tar, zip"
        )
        return ret
    try:
        contents = _salt("archive.list")(cached, archive_format=fmt, options=options, verbose=True)
    except (CommandExecutionError, SaltInvocationError) as exc:
        problems = getattr(exc, "info", None)
        if problems:
            ret["comment"] = (
                f"Refusing to extract {shown}: these members would be written outside {name} "
                "or are unsafe:\n" + "\n".join(f"- {p}" for p in problems)
            )
        else:
            ret["comment"] = str(exc)
        return ret

    if enforce_toplevel and (len(contents["top_level_dirs"]) > 1 or contents["top_level_files"]):
        ret["comment"] = (
            "Archive does not have a single top-level directory. To allow this archive to be "
            "extracted, set 'enforce_toplevel' to False. To avoid a '{0}-bomb' it may also be "
            "advisable to set a top-level directory by adding it to the 'name' value (for "
            "example, setting 'name' to {1} instead of {2})."
        ).format(fmt, os.path.join(name, "some_dir"), name)
        return ret

    missing, wrong = _present_check(name, contents)
    needed = bool(overwrite) or missing
    if wrong:
        listing = "\n\n" + "\n".join(f"- {p}" for p in wrong)
        base = (
            f"The below paths (relative to {name}) exist, but are the incorrect type (file instead of "
            "directory, symlink instead of file, etc.)."
        )
        if _testing() and clean:
            ret.update(
                result=None,
                comment=base + " Since the 'clean' option is enabled, the destination paths "
                "would be cleared and the archive would be extracted." + listing,
            )
            return ret
        if not clean:
            if not force:
                ret["comment"] = (
                    base + " To proceed with extraction, set 'force' to True. Note that this "
                    "will remove these paths before extracting." + listing
                )
                return ret
            if not _testing():
                for rel in wrong:
                    full = os.path.join(name, rel).rstrip(os.sep)
                    _salt("file.remove")(full)
                    ret["changes"].setdefault("removed", []).append(full)
            needed = True

    explanation = ", due to absence of one or more files/dirs" if missing else ""
    if needed and _testing():
        ret.update(
            result=None,
            comment=f"Archive {shown} would be extracted to {name}"
            + (", after cleaning destination path(s)" if clean else "")
            + explanation,
        )
        return ret

    files: list[str] = []
    created = False
    if needed:
        if clean_parent:
            _salt("file.remove")(name.rstrip(os.sep))
            ret["changes"]["removed"] = f"Directory {name} was removed prior to the extraction"
        if clean:
            for rel in contents["top_level_dirs"] + contents["top_level_files"] + contents["top_level_links"]:
                full = os.path.join(name, rel).rstrip(os.sep)
                if os.path.lexists(full):
                    _salt("file.remove")(full)
                ret["changes"].setdefault("removed", []).append(full)
        if not os.path.isdir(name):
            _salt("file.makedirs_perms")(name.rstrip(os.sep), user, None, "0755")
            created = True
        try:
            files = _salt("archive.extract")(cached, name, archive_format=fmt, options=options)
        except (CommandExecutionError, SaltInvocationError) as exc:
            ret["comment"] = str(exc)
            return ret

    if user or group:
        if enforce_ownership_on:
            targets = [str(enforce_ownership_on)]
        else:
            targets = [
                os.path.join(name, p).rstrip(os.sep)
                for p in contents["top_level_dirs"] + contents["top_level_files"] + contents["top_level_links"]
            ]
        try:
            for target in targets:
                if _salt("archive.set_owner")(target, user=user, group=group, test=_testing()):
                    ret["changes"]["updated ownership"] = True
        except (CommandExecutionError, OSError) as exc:
            ret["comment"] = f"Unable to set ownership: {exc}"
            return ret

    if needed:
        if not files:
            ret["comment"] = f"No files were extracted from {shown}"
            return ret
        if created:
            ret["changes"]["directories_created"] = [name]
        ret["changes"]["extracted_files"] = files[:trim_output] if trim_output else files
        ret["comment"] = f"{shown} extracted to {name}{explanation}"
        if trim_output:
            ret["comment"] += f". Output was trimmed to {trim_output} number of lines"
        ret["result"] = True
    else:
        ret.update(result=True, comment="All files in archive are already present")
        if _testing() and ret["changes"].get("updated ownership"):
            ret["result"] = None
            ret["comment"] += ". Ownership would be updated on one or more files/directories."
    if not keep_source and cached and src_str.startswith(("http://", "https://", "ftp://")):
        try:
            os.unlink(cached)
        except OSError:
            pass
    return ret
