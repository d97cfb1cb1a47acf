"""The ``.repo`` files of dnf/yum, as Salt's yumpkg reads and writes them: ``list_repos``,
``get_repo``, ``mod_repo``, ``del_repo`` (a private part of
:mod:`briny.minion.host.modules.yumpkg`).

The files are Salt's format (``[id]`` then ``key=value`` lines, booleans as ``1``/``0``, a
file's leading comments kept, a stanza's comments after its keys). Where briny differs: a
file is replaced atomically (a crash never leaves it truncated), and a file that cannot be
parsed is never rewritten: the call fails saying which file and why.
"""

from __future__ import annotations

import configparser
import logging
import os
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host.fileops import managed

__all__ = ["del_repo", "get_repo", "list_repos", "mod_repo"]

log = logging.getLogger(__name__)

_DEFAULT_REPOSDIRS = ["/etc/yum.repos.d", "/etc/yum/repos.d"]
_CONFIGS = ("/etc/dnf/dnf.conf", "/etc/yum.conf")


def _reposdirs(basedir: Any = None) -> list[str]:
    """The folders holding .repo files: ``basedir`` (a list or comma-separated), else the
    ``reposdir`` of dnf.conf / yum.conf, else dnf's defaults."""
    if basedir:
        dirs = basedir if isinstance(basedir, list) else str(basedir).split(",")
        return [str(d).strip() for d in dirs if str(d).strip()]
    for conf in _CONFIGS:
        if not os.path.isfile(conf):
            continue
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        try:
            parser.read(conf)
        except configparser.Error as exc:
            raise CommandExecutionError(f"Could not parse {conf}: {exc}") from exc
        value = parser.get("main", "reposdir", fallback="")
        if value:
            return [d.strip() for d in value.replace(",", " ").split() if d.strip()]
        break
    return list(_DEFAULT_REPOSDIRS)


def _parse(path: str, strict: bool = True) -> tuple[str, dict[str, dict[str, Any]]]:
    """(leading comment lines, {section: {key: value, "comments": [...]}}) of a .repo file."""
    parser = configparser.ConfigParser(strict=strict, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        parser.read(path, encoding="utf-8")
    except configparser.MissingSectionHeaderError as exc:
        log.error("Failed to parse file %s, error: %s", path, exc.message)
        return "", {}
    except configparser.Error as exc:
        raise CommandExecutionError(f"The repo file {path} cannot be parsed: {exc}") from exc
    config: dict[str, dict[str, Any]] = {s: dict(parser.items(s, raw=True)) for s in parser.sections()}
    header = ""
    section: str | None = None
    with open(path, encoding="utf-8", errors="replace") as fh:
        for raw in fh:
            line = raw.strip()
            if line.startswith("#"):
                if section is None:
                    header += line + "\n"
                elif section in config:
                    config[section].setdefault("comments", []).append(line[1:].lstrip())
            elif line.startswith("[") and line.endswith("]"):
                section = line[1:-1]
    return header, config


def list_repos(basedir: Any = None, **kwargs: Any) -> dict[str, dict[str, Any]]:
    """Every repo of the .repo files in the repo folders: ``{id: {key: value, "file": path}}``."""
    strict = kwargs.get("strict_config", True) not in (False, "False", "false")
    repos: dict[str, dict[str, Any]] = {}
    for folder in _reposdirs(basedir):
        if not os.path.isdir(folder):
            continue
        for fname in sorted(os.listdir(folder)):
            if not fname.endswith(".repo"):
                continue
            path = f"{folder}/{fname}"
            for rid, repo in _parse(path, strict)[1].items():
                repo["file"] = path
                repos[rid] = repo
    return repos


def get_repo(repo: str, basedir: Any = None, **kwargs: Any) -> dict[str, Any]:
    """One repo's settings (``{}`` when no file defines it)."""
    return list_repos(basedir, **kwargs).get(repo, {})


def _comments(comments: Any) -> str:
    """A stanza's comments as Salt writes them: one ``# text`` line each."""
    items = comments if isinstance(comments, list) else [comments]
    return "".join(f"# {str(c).lstrip('#').lstrip()}\n" for c in items)


def _render(header: str, stanzas: dict[str, dict[str, Any]], lead: str = "") -> str:
    content = header
    for stanza, settings in stanzas.items():
        comments = settings.pop("comments", [])
        content += f"{lead}[{stanza}]\n"
        for key, value in settings.items():
            if isinstance(value, bool):
                value = "1" if value else "0"
            elif isinstance(value, str) and "\n" in value:
                value = "\n ".join(value.split("\n"))
            content += f"{key}={value}\n"
        content += _comments(comments) + "\n"
    return content


def _write(path: str, content: str) -> None:
    """Replace a .repo file atomically: an existing file keeps its owner and mode (a 0600
    file holding ``password=`` stays private, as with Salt), a new one is 0644."""
    managed.write(path, content.encode("utf-8"), exact_mode=None if os.path.lexists(path) else "0644")


def del_repo(repo: str, basedir: Any = None, **kwargs: Any) -> str:
    """Remove a repo: its file when it is the file's only repo, else its stanza."""
    dirs = _reposdirs(basedir)
    repos = list_repos(dirs, **kwargs)
    if repo not in repos:
        return f"Error: the {repo} repo does not exist in {dirs}"
    path = repos[repo]["file"]
    if not any(r["file"] == path for rid, r in repos.items() if rid != repo):
        os.remove(path)
        return f"File {path} containing repo {repo} has been removed"
    header, stanzas = _parse(path, kwargs.get("strict_config", True) not in (False, "False", "false"))
    stanzas.pop(repo, None)
    _write(path, _render(header, stanzas))
    return f"Repo {repo} has been removed from {path}"


def mod_repo(repo: str, basedir: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Create or change a repo: the keys given are set, a key given empty is removed;
    ``{file: {id: settings}}``."""
    settings = {k: v for k, v in kwargs.items() if not k.startswith("__") and k not in ("saltenv", "strict_config")}
    if "mirrorlist" in settings and "baseurl" in settings:
        raise SaltInvocationError("Only one of 'mirrorlist' and 'baseurl' can be specified")
    if repo.startswith("copr:"):
        raise SaltInvocationError("COPR repositories are not supported by briny yet")
    todelete = [k for k, v in settings.items() if v != 0 and not v]
    for key in todelete:
        del settings[key]
    if "mirrorlist" in settings:
        todelete.append("baseurl")
    elif "baseurl" in settings:
        todelete.append("mirrorlist")
    if "name" in todelete:
        raise SaltInvocationError("The repo name cannot be deleted")
    dirs = _reposdirs(basedir)
    strict = kwargs.get("strict_config", True) not in (False, "False", "false")
    repos = list_repos(dirs, strict_config=strict)
    header, stanzas = "", {}  # type: tuple[str, dict[str, dict[str, Any]]]
    if repo not in repos:
        newdir = next((d for d in dirs if os.path.exists(d)), None)
        if newdir is None:
            raise SaltInvocationError(
                f"The repo does not exist and needs to be created, but none of the following basedir directories exist: {dirs}"
            )
        path = f"{newdir}/{repo}.repo"
        if "name" not in settings:
            raise SaltInvocationError("The repo does not exist and needs to be created, but a name was not given")
        if "baseurl" not in settings and "mirrorlist" not in settings:
            raise SaltInvocationError(
                "The repo does not exist and needs to be created, but either a baseurl or a mirrorlist needs to be given"
            )
        stanzas[repo] = {}
    else:
        path = repos[repo]["file"]
        header, stanzas = _parse(path, strict)
    current = stanzas[repo]
    if "baseurl" in todelete and "mirrorlist" not in settings and "mirrorlist" not in current:
        raise SaltInvocationError("Cannot delete baseurl without specifying mirrorlist")
    if "mirrorlist" in todelete and "baseurl" not in settings and "baseurl" not in current:
        raise SaltInvocationError("Cannot delete mirrorlist without specifying baseurl")
    for key in todelete:
        current.pop(key, None)
    current.update(settings)
    content = _render(header, {k: dict(v) for k, v in stanzas.items()})
    _write(path, content)
    for v in stanzas.values():
        v.pop("comments", None)
    return {path: stanzas}
