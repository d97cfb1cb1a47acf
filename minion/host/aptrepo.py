"""APT repositories: Salt 3007's ``pkg.list_repos`` / ``get_repo`` / ``mod_repo`` / ``del_repo``.

Behind the repo functions of the ``pkg`` execution module (and through them
the ``pkgrepo`` states). The files are ``/etc/apt/sources.list`` and the
``*.list`` and ``*.sources`` files of ``/etc/apt/sources.list.d`` (plus the
``file`` a call names, wherever it is); parsing and formatting are in
:mod:`briny.minion.host.aptsources`, keys in :mod:`briny.minion.host.aptkeys`.

Salt's rules are kept: which entry a definition matches (type, URI but a
trailing slash, dist, a component in common), which entry ``mod_repo``
edits, what an edit writes (the definition's options, ``comps`` /
``architectures`` / ``dist`` / ``disabled`` from the arguments), when
``del_repo`` deletes a file (a ``sources.list.d`` file left with nothing),
the ``apt-get update`` after a change. Differences, on purpose (also in
``docs/`` and the ``pkgrepo`` state's docstring):

- every file is rewritten atomically, and only the files and lines that
  change (Salt rewrites every line of every ``*.list`` file each time);
- deb822 ``*.sources`` files are read, and a ``file`` ending in ``.sources``
  gets a deb822 stanza (Salt 3007 ignores these files and would write a
  one-line entry into one);
- ``clean_file`` empties the file in the same atomic write as the new entry
  (Salt truncates it first, so a failure leaves it empty);
- a ``file`` outside ``sources.list.d`` is read too, so nothing in it is
  lost and the repo is found there on the next run.
"""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host import aptkeys
from briny.minion.host import aptsources as src
from briny.minion.host.fileops import managed as _managed
from briny.common.truth import says_true

log = logging.getLogger(__name__)

LP_SRC_FORMAT = "deb http://ppa.launchpad.net/{0}/{1}/ubuntu {2} main"


@dataclass
class Host:
    """What the repo functions need from the execution module that calls them."""

    run: Callable[..., dict[str, Any]]
    cache_file: Callable[..., Any] = lambda *a, **k: False
    refresh: Callable[[], Any] = lambda: None
    grains: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------
# reading and writing the files
# ---------------------------------------------------------------------------


def _paths(extra: Any = None) -> list[str]:
    paths = [src.SOURCES_LIST]
    if os.path.isdir(src.SOURCES_DIR):
        found = glob.glob(os.path.join(src.SOURCES_DIR, "*.list")) + glob.glob(
            os.path.join(src.SOURCES_DIR, "*.sources")
        )
        paths += sorted(found)
    if extra and str(extra) not in paths:
        paths.append(str(extra))
    return paths


def read_sources(extra: Any = None) -> dict[str, src.SourceFile]:
    """Every sources file (and ``extra``, the file a call names), parsed; missing ones empty."""
    files: dict[str, src.SourceFile] = {}
    for path in _paths(extra):
        try:
            with open(path, encoding="utf-8") as fh:
                text: str | None = fh.read()
        except FileNotFoundError:
            text = None
        except (OSError, UnicodeDecodeError) as exc:
            raise CommandExecutionError(f"Unable to read {path}: {exc}") from exc
        files[path] = src.SourceFile(path, text)
    return files


def _entries(files: dict[str, src.SourceFile]) -> list[src.Entry]:
    return [e for f in files.values() for e in f.entries()]


def save(files: dict[str, src.SourceFile]) -> list[str]:
    """Write the files that changed (atomically, 0644 when new); the paths written."""
    written = []
    for path, sf in files.items():
        if not sf.changed():
            continue
        folder = os.path.dirname(path)
        if folder and not os.path.isdir(folder):
            raise CommandExecutionError(f"Cannot write {path}: {folder} does not exist")
        _managed.write(path, sf.render().encode("utf-8"), exact_mode=None if sf.original is not None else "0644")
        sf.original = sf.render()
        written.append(path)
    return written


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------


def list_repos(extra: Any = None) -> dict[str, list[dict[str, Any]]]:
    """``{uri: [repo, ...]}`` for every repo of every sources file (disabled ones included)."""
    repos: dict[str, list[dict[str, Any]]] = {}
    for entry in _entries(read_sources(extra)):
        repos.setdefault(entry.uri, []).append(entry.record())
    return repos


def _expand_ppa(repo: str, grains: dict[str, Any], ppa_auth: Any = None) -> str:
    if not repo.startswith("ppa:") or grains.get("os") not in ("Ubuntu", "Mint", "neon"):
        return repo
    try:
        owner, name = repo[4:].split("/", 1)
    except ValueError as exc:
        raise CommandExecutionError(f"Unable to get PPA info from argument: {repo}") from exc
    dist = grains.get("oscodename", "")
    if ppa_auth:
        return f"deb https://{ppa_auth}@private-ppa.launchpad.net/{owner}/{name}/ubuntu {dist} main"
    return LP_SRC_FORMAT.format(owner, name, dist)


def get_repo(host: Host, repo: str, **kwargs: Any) -> dict[str, Any]:
    """The configured repo that ``repo`` (a whole definition) names, or ``{}``."""
    repo = _expand_ppa(str(repo), host.grains, kwargs.get("ppa_auth"))
    files = read_sources(kwargs.get("file"))
    entries = _entries(files)
    if not entries:
        return {}
    wanted = src.split_repo(repo)
    if wanted.invalid:
        return {}
    found = src.find_repo(entries, wanted)
    return found.record() if found else {}


def expand_repo_def(host: Host, repo: str, **kwargs: Any) -> dict[str, Any]:
    """What the repo would look like once configured (Salt's ``_expand_repo_def``), for comparisons."""
    repo = _expand_ppa(str(repo), host.grains, kwargs.get("ppa_auth"))
    entry = src.split_repo(repo)
    for key in ("architectures", "comps"):
        if key in kwargs and kwargs[key] is not None:
            setattr(entry, key, [v.strip() for v in str(kwargs[key]).split(",")])
    if "disabled" in kwargs:
        entry.disabled = says_true(kwargs["disabled"])
    if kwargs.get("dist"):
        entry.dist = str(kwargs["dist"])
    if kwargs.get("uri"):
        entry.uri = str(kwargs["uri"])
    if entry.invalid:
        entry.line = ""
    else:
        # Salt's layout of the line: arch, then signed-by, then the other options
        opts: dict[str, str] = {k: entry.options[k] for k in ("arch", "signed-by") if k in entry.options}
        opts.update(entry.options)
        line = src.Entry(
            type=entry.type, uri=entry.uri, dist=entry.dist, comps=entry.comps, options=opts, disabled=entry.disabled
        )
        entry.line = line.render()
    record = entry.record()
    record["file"] = src.SOURCES_LIST
    return record


# ---------------------------------------------------------------------------
# changes
# ---------------------------------------------------------------------------


def _keys(host: Host, kwargs: dict[str, Any], signedby: str, aptkey: bool, saltenv: str) -> None:
    """The key arguments of ``mod_repo``: ``keyid`` + ``keyserver``, ``key_url``, ``key_text``."""
    if "keyid" in kwargs:
        keyid, keyserver = kwargs.pop("keyid", None), kwargs.pop("keyserver", None)
        if not keyid or not keyserver:
            raise CommandExecutionError("both keyserver and keyid options required.")
        for key in keyid if isinstance(keyid, list) else [keyid]:
            key = hex(key) if isinstance(key, int) else str(key)
            if not aptkey:
                keydir = os.path.dirname(signedby)
                current = aptkeys.get_repo_keys(host.run, aptkey=False, keydir=keydir) or {}
                if any(k.endswith(key.upper()) for k in current):
                    continue
                if not aptkeys.add_repo_key(
                    host.run,
                    host.cache_file,
                    keyid=key,
                    keyserver=keyserver,
                    aptkey=False,
                    keydir=keydir,
                    keyfile=signedby,
                ):
                    raise CommandExecutionError(f"Error: Could not add key: {key}")
                continue
            out = host.run(["apt-key", "export", key], python_shell=False, ignore_retcode=True)
            if str(out.get("stdout", "")).startswith("-----BEGIN PGP"):
                continue
            out = host.run(
                ["apt-key", "adv", "--batch", "--keyserver", str(keyserver), "--logger-fd", "1", "--recv-keys", key],
                python_shell=False,
                ignore_retcode=True,
            )
            if out["retcode"] != 0:
                raise CommandExecutionError(f"Error: key retrieval failed: {out.get('stdout', '')}")
    elif "key_url" in kwargs:
        key_url = str(kwargs["key_url"])
        local = host.cache_file(key_url, saltenv)
        if not local:
            raise CommandExecutionError(f"Error: file not found: {key_url}")
        if not aptkey:
            dest = signedby or os.path.join(aptkeys.KEYRINGS, os.path.basename(str(local)))
            try:
                aptkeys.install_key_file(host.run, str(local), dest)
            except CommandExecutionError as exc:
                raise CommandExecutionError(f"Error: Could not add key: {key_url}: {exc}") from exc
        else:
            if not aptkeys.show_keys(host.run, str(local)):
                raise CommandExecutionError(f"Error: failed to add key from {key_url}: not an OpenPGP key")
            out = host.run(["apt-key", "add", str(local)], python_shell=False, ignore_retcode=True)
            if not str(out.get("stdout", "")).upper().startswith("OK"):
                raise CommandExecutionError(f"Error: failed to add key from {key_url}")
    elif "key_text" in kwargs:
        key_text = str(kwargs["key_text"])
        if not aptkey and signedby:
            if not aptkeys.add_repo_key(host.run, host.cache_file, text=key_text, aptkey=False, keyfile=signedby,
                                        keydir=os.path.dirname(signedby)):  # fmt: skip
                raise CommandExecutionError(f"Error: failed to add key:\n{key_text}")
        else:
            out = host.run(["apt-key", "add", "-"], python_shell=False, ignore_retcode=True, stdin=key_text)
            if not str(out.get("stdout", "")).upper().startswith("OK"):
                raise CommandExecutionError(f"Error: failed to add key:\n{key_text}")


def _consolidate(files: dict[str, src.SourceFile]) -> list[str]:
    """Salt's ``consolidate``: every one-line repo into ``sources.list``, components merged
    per (architectures, disabled, type, uri, dist); the other ``*.list`` files go."""
    merged: dict[tuple[Any, ...], src.Entry] = {}
    for sf in files.values():
        if sf.deb822:
            continue
        for entry in sf.entries():
            key = (tuple(entry.architectures), entry.disabled, entry.type, entry.uri, entry.dist)
            if key in merged:
                merged[key].comps += [c for c in entry.comps if c not in merged[key].comps]
            else:
                merged[key] = src.Entry(**{**entry.__dict__, "comps": list(entry.comps), "file": src.SOURCES_LIST})
    doomed = [p for p, sf in files.items() if not sf.deb822 and p != src.SOURCES_LIST and sf.original is not None]
    main = files.setdefault(src.SOURCES_LIST, src.SourceFile(src.SOURCES_LIST, None))
    main.clear()
    for entry in merged.values():
        main.add(entry)
    for path in doomed:
        del files[path]
    return doomed


def mod_repo(host: Host, repo: str, saltenv: str = "base", aptkey: bool = True, **kwargs: Any) -> dict[str, Any]:
    """Configure ``repo`` (a whole definition): add it, or edit the entry it matches."""
    refresh = says_true(kwargs["refresh_db"]) if "refresh_db" in kwargs else says_true(kwargs.get("refresh", True))
    if not aptkeys.has_apt_key():
        aptkey = False
    if repo.startswith("ppa:"):
        if host.grains.get("os") not in ("Ubuntu", "Mint", "neon"):
            raise CommandExecutionError(f'cannot parse "ppa:" style repo definitions: {repo}')
        owner, _, name = repo[4:].partition("/")
        kwargs.setdefault("file", f"/etc/apt/sources.list.d/{owner}-{name}-{host.grains.get('oscodename', '')}.list")
        repo = _expand_ppa(repo, host.grains, kwargs.get("ppa_auth"))
    wanted = src.check_repo(repo)
    target = str(kwargs["file"]) if kwargs.get("file") else None
    files = read_sources(target)
    doomed = _consolidate(files) if says_true(kwargs.get("consolidate", False)) else []
    if target and says_true(kwargs.get("clean_file", False)):
        files[target].clear()
    signedby = wanted.signedby
    if not aptkey and not signedby:
        raise SaltInvocationError("missing 'signedby' option when apt-key is missing")
    _keys(host, kwargs, signedby, aptkey, saltenv)

    comps = [c.strip() for c in str(kwargs["comps"]).split(",")] if kwargs.get("comps") else list(wanted.comps)
    wanted_comps = set(wanted.comps) | set(comps)
    archs = (
        [a.strip() for a in str(kwargs["architectures"]).split(",")]
        if kwargs.get("architectures")
        else wanted.architectures
    )
    if "disabled" in kwargs:
        disabled = says_true(kwargs["disabled"])
    elif "enabled" in kwargs:
        disabled = not says_true(kwargs["enabled"])
    else:
        disabled = False

    chosen = None
    for entry in _entries(files):
        repo_matches = (entry.type, entry.uri.rstrip("/"), entry.dist) == (
            wanted.type,
            wanted.uri.rstrip("/"),
            wanted.dist,
        )
        kw_matches = entry.dist == kwargs.get("dist") and entry.type == kwargs.get("type")
        if (repo_matches or kw_matches) and (
            any(c in entry.comps for c in wanted_comps) or not entry.comps or archs != entry.architectures
        ):
            chosen = entry
            break

    new = src.Entry(
        type=wanted.type,
        uri=wanted.uri,
        dist=str(kwargs["dist"]) if kwargs.get("dist") else (chosen.dist if chosen else wanted.dist),
        comps=comps,
        options=dict(wanted.options),
        disabled=disabled,
        comment=src.combine_comments(kwargs["comments"])
        if "comments" in kwargs
        else (chosen.comment if chosen else ""),
    )
    new.architectures = archs
    dest = target or (chosen.file if chosen else src.SOURCES_LIST)
    if dest not in files:
        files[dest] = src.SourceFile(dest, None)
    if chosen is not None and chosen.file == dest and files[dest].deb822 == files[chosen.file].deb822:
        for attr in ("type", "uri", "dist", "comps", "options", "disabled", "comment"):
            setattr(chosen, attr, getattr(new, attr))
        files[dest].update(chosen)
        new = chosen
    else:
        if chosen is not None:
            files[chosen.file].remove(chosen)
        files[dest].add(new)
    emptied = [p for p, f in files.items() if f.original and not f.items and os.path.dirname(p) == src.SOURCES_DIR]
    save(files)
    for path in doomed + emptied:  # consolidated, or left with nothing when the entry moved
        try:
            os.unlink(path)
        except OSError:
            pass
    if refresh:
        host.refresh()
    record = new.record()
    record["line"] = new.render()
    del record["file"]
    return {repo: {**record, "file": new.file}}


def del_repo(host: Host, repo: str, **kwargs: Any) -> str:
    """Remove ``repo``'s components from the entries it matches (the entry when none is left);
    a ``sources.list.d`` file left with nothing is deleted. ``apt-get update`` follows."""
    repo = _expand_ppa(str(repo), host.grains, kwargs.get("ppa_auth"))
    files = read_sources(kwargs.get("file"))
    entries = _entries(files)
    if entries:
        wanted = src.split_repo(repo)
        if wanted.invalid:
            raise SaltInvocationError(f"Error: repo '{repo}' not a well formatted definition")
        touched: list[str] = []
        for entry in entries:
            if (
                entry.type == wanted.type
                and entry.architectures == wanted.architectures
                and entry.uri.rstrip("/") == wanted.uri.rstrip("/")
                and entry.dist == wanted.dist
            ):
                have, drop = set(entry.comps), set(wanted.comps)
                if have & drop or (not have and not drop):
                    if entry.file not in touched:
                        touched.append(entry.file)
                    entry.comps = [c for c in entry.comps if c not in drop]
                    if entry.comps:
                        files[entry.file].update(entry)
                    else:
                        files[entry.file].remove(entry)
        if touched:
            save(files)
            msg = ""
            for path in touched:
                left = files[path].lines() if not files[path].deb822 else files[path].items
                if not left and "sources.list.d/" in path and os.path.isfile(path):
                    os.unlink(path)
                    msg += f"File {path} containing repo '{repo}' has been removed."
                else:
                    msg += f"Repo '{repo}' has been removed from {path}.\n"
            host.refresh()
            return msg
    raise CommandExecutionError(f"Repo {repo} doesn't exist in the sources.list(s)")
