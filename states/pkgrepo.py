"""The ``pkgrepo`` state module: APT repositories (``managed`` / ``absent``).

``name`` is the whole source entry as APT reads it (``deb [signed-by=/etc/apt/
keyrings/x.gpg arch=amd64] https://host/debian stable main``); ``comps``,
``architectures``, ``dist``, ``disabled`` (or ``enabled``), ``file``,
``comments``, ``clean_file``, ``consolidate``, ``refresh`` (``refresh_db``),
the keys (``key_url`` from ``salt://``, https or a local path, ``key_text``,
``keyid`` with ``keyserver``, ``aptkey``, ``allow_insecure_key``) and
``humanname`` (kept for other package managers, unused by APT) are Salt's.
The work goes through the ``pkg`` execution module (``pkg.get_repo``,
``pkg.mod_repo``, ``pkg.del_repo``, ``pkg.list_repos``, ``pkg.del_repo_key``).
As Salt documents, a ``pkg`` state that must see the repo is ordered after it
with ``require_in`` on the repo (``mod_repo`` refreshes the package lists).

Results follow Salt 3007 (checked against the reference on Debian 12, live,
test mode and second runs): ``Configured package repo 'x'`` (changes
``{"repo": x}`` for a new repo, else ``{key: {"new", "old"}}`` for what
changed), ``Package repo 'x' already configured``, in test mode ``Package
repo 'x' would be configured. This may cause pkg states to behave
differently than stated if this action is repeated without test=True, due to
the differences in the configured repositories.``; ``Removed repo x``
(changes ``{"repo": x}``, with ``keyid``: ``, and keyid K``), ``Package repo x
is absent``, ``Package repo 'x' will be removed. ...``; failures ``Failed to
configure repo 'x': <why>`` (a definition that is not a whole entry: ``Name x
is not valid. This must be the complete repo entry as seen in the sources
file``; a key that cannot be fetched: ``Error: Could not add key: K`` /
``Error: key retrieval failed: ...``).

Differences from Salt, on purpose:

- options are compared as a set, so ``[signed-by=... arch=amd64]`` and other
  options Salt does not model (``trusted=yes``) give ``already configured``
  on the second run (Salt reconfigures such a repo, and refreshes the package
  lists, on every run);
- deb822 ``*.sources`` files are read and written (Salt 3007 ignores them),
  files are rewritten atomically and only where they change, ``clean_file``
  cannot leave an empty file behind (see :mod:`briny.minion.host.aptrepo`);
- a key file that is not an OpenPGP key, or a ``key_url`` that cannot be
  fetched, fails with ``Error: Could not add key: ...`` / ``Error: file not
  found: ...`` (Salt copies any file into the keyring, and crashes on the
  second);
- conflicting arguments (``key_url`` with ``keyid``) fail at once (Salt
  notes the error and goes on).
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.common.truth import says_true as _true
from ._access import _env, _salt

from ._pkgrepo_common import TEST_NOTE, configured, would_configure

from ._pkgrepo_rpm import managed_rpm

if TYPE_CHECKING:
    from briny.common.dunders import __grains__, __opts__, __salt__


log = logging.getLogger(__name__)

# what APT repositories use (humanname: documented by Salt, used by the other package managers)
_KNOWN = {
    "comps", "architectures", "dist", "disabled", "enabled", "file", "comments", "clean_file", "consolidate",
    "refresh", "refresh_db", "key_url", "key_text", "keyid", "keyserver", "allow_insecure_key", "humanname",
    "ppa_auth", "uri", "type", "keyid_ppa",
}  # fmt: skip


def _debian() -> bool:
    return (__grains__.get("os_family") or "Debian") == "Debian"


def _split(line: str) -> tuple[str, dict[str, str], list[str]]:
    """(type, options, [uri, dist, sorted comps]) of a one-line entry, for comparing."""
    head, _, _ = line.partition("#") if not line.lstrip().startswith("#") else ("", "", "")
    words = head.split()
    opts: dict[str, str] = {}
    if len(words) > 1 and words[1].startswith("["):
        inner = []
        while len(words) > 1:
            word = words.pop(1)
            inner.append(word)
            if word.endswith("]"):
                break
        for opt in " ".join(inner).strip("[]").split():
            key, _, value = opt.partition("=")
            opts[key] = value
    rest = words[1:]
    return (words[0] if words else "", opts, rest[:2] + sorted(rest[2:]))


def _differs(key: str, want: Any, have: Any, kwargs: dict[str, Any]) -> bool:
    if key in ("comps", "key_url"):
        return sorted(want or []) != sorted(have or [])
    if key == "architectures" and want:
        return set(want) != set(have or [])
    if key == "line":
        if kwargs.get("disabled"):
            return False
        if _split(want) != _split(have):
            return True
        if "comments" in kwargs:
            comment = (
                " ".join(str(c) for c in kwargs["comments"])
                if isinstance(kwargs["comments"], list)
                else str(kwargs["comments"])
            )
            return have.partition("#")[2].strip() != comment.strip()
        return False
    return str(want) != str(have)


def managed(name: str, ppa: Any = None, copr: Any = None, aptkey: Any = True, **kwargs: Any) -> dict[str, Any]:
    """Make sure the APT repository ``name`` is configured as the arguments say."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    if "pkg.get_repo" not in __salt__:
        ret.update(result=False, comment="Repo management not implemented on this platform")
        return ret
    aptkey = _true(aptkey)  # pkg.mod_repo goes without apt-key when the host has none
    for a, b, why in (
        ("key_url", ("keyid", "keyserver"), 'You may not use both "keyid"/"keyserver" and "key_url" argument.'),
        ("key_text", ("keyid", "keyserver"), 'You may not use both "keyid"/"keyserver" and "key_text" argument.'),
        ("key_text", ("key_url",), 'You may not use both "key_url" and "key_text" argument.'),
    ):
        if a in kwargs and any(k in kwargs for k in b):
            ret.update(result=False, comment=why)
            return ret
    if "repo" in kwargs:
        ret.update(
            result=False,
            comment="'repo' is not a supported argument for this state. The 'name' argument is probably what was intended.",
        )
        return ret
    enabled, disabled = kwargs.pop("enabled", None), kwargs.pop("disabled", None)
    if enabled is not None and disabled is not None:
        ret.update(result=False, comment="Only one of enabled/disabled is allowed")
        return ret
    if enabled is None and disabled is None:
        enabled = True
    allow_insecure = kwargs.pop("allow_insecure_key", True)
    if str(kwargs.get("key_url", "")).strip().startswith("http:") and not _true(allow_insecure):
        ret.update(result=False, comment="Cannot have 'key_url' using http with 'allow_insecure_key' set to True")
        return ret
    if __grains__.get("os_family") in ("RedHat", "Suse"):
        return managed_rpm(name, ret, dict(kwargs, copr=copr), enabled, disabled)
    for key in [k for k in kwargs if k.startswith("__")]:
        kwargs.pop(key)
    unknown = sorted(k for k in kwargs if k not in _KNOWN)
    if unknown:
        ret["warnings"] = [f"pkgrepo.managed ignores arguments APT repositories do not have: {', '.join(unknown)}"]
    kwargs["name"] = repo = name
    if ppa is not None:
        repo = f"ppa:{ppa}"
    kwargs["disabled"] = (not _true(enabled)) if enabled is not None else _true(disabled)

    try:
        pre = _salt("pkg.get_repo")(repo=repo, **kwargs)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret.update(result=False, comment=f"Failed to examine repo '{name}': {exc}")
        return ret
    expand = {k: v for k, v in kwargs.items() if k != "name"}
    want = _salt("pkg.expand_repo_def")(repo, **expand)

    stale = False
    target = kwargs.get("file")
    if pre and _true(kwargs.get("clean_file", False)) and target and os.path.isfile(str(target)):
        try:
            with open(str(target), encoding="utf-8") as fh:
                stale = any(
                    line.strip() and not line.strip().startswith("#") and line.strip() != name.strip() for line in fh
                )
        except OSError:
            pass
    if pre and not stale:
        pre.pop("file", None)
        want.pop("file", None)
        if not any(k not in pre or _differs(k, v, pre[k], kwargs) for k, v in want.items()):
            ret.update(result=True, comment=f"Package repo '{name}' already configured")
            return ret

    if __opts__.get("test"):
        return would_configure(ret, name, pre, want)

    try:
        _salt("pkg.mod_repo")(repo, saltenv=_env(), aptkey=aptkey, **kwargs)
    except Exception as exc:
        log.error("pkg.mod_repo failed for %s: %s", name, exc, exc_info=not isinstance(exc, CommandExecutionError))
        ret.update(result=False, comment=f"Failed to configure repo '{name}': {exc}")
        return ret
    try:
        post = _salt("pkg.get_repo")(repo=repo, **kwargs)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret.update(result=False, comment=f"Failed to confirm config of repo '{name}': {exc}")
        return ret
    return configured(ret, name, repo, pre, want, post)


def absent(name: str, **kwargs: Any) -> dict[str, Any]:
    """Make sure the APT repository ``name`` (the whole entry) is not configured; with
    ``keyid`` its key goes too."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "result": None, "comment": ""}
    grains = __grains__
    if "ppa" in kwargs and grains.get("os") in ("Ubuntu", "Mint"):
        name = str(kwargs.pop("ppa"))
        if not name.startswith("ppa:"):
            name = "ppa:" + name
    for key in [k for k in kwargs if k.startswith("__")]:
        kwargs.pop(key)
    remove_key = any(kwargs.get(k) is not None for k in ("keyid", "keyid_ppa"))
    if remove_key and "pkg.del_repo_key" not in __salt__:
        ret.update(result=False, comment="Repo key management is not implemented for this platform")
        return ret
    words = name.split()
    stripname = " ".join(w.rstrip("/") if w.startswith(("http://", "https://", "ftp://")) else w for w in words)
    try:
        repo = _salt("pkg.get_repo")(stripname, **kwargs)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret.update(result=False, comment=f"Failed to configure repo '{name}': {exc}")
        return ret
    if repo and _debian():
        archs = set(_salt("pkg.expand_repo_def")(stripname).get("architectures") or [])
        if archs != set(repo.get("architectures") or []):
            repo = {}
    if not repo:
        ret.update(result=True, comment=f"Package repo {name} is absent")
        return ret
    if __opts__.get("test"):
        ret["comment"] = f"Package repo '{name}' will be removed." + TEST_NOTE
        return ret
    try:
        _salt("pkg.del_repo")(repo=stripname, **kwargs)
    except (CommandExecutionError, SaltInvocationError) as exc:
        ret.update(result=False, comment=str(exc))
        return ret
    if _salt("pkg.get_repo")(stripname, **kwargs):
        ret.update(result=False, comment=f"Failed to remove repo {name}")
        return ret
    ret["changes"]["repo"] = name
    ret["comment"] = f"Removed repo {name}"
    ret["result"] = True
    if remove_key:
        try:
            keyid = _salt("pkg.del_repo_key")(stripname, **kwargs)
        except (CommandExecutionError, SaltInvocationError) as exc:
            ret["result"] = False
            ret["comment"] += f", but failed to remove key: {exc}"
        else:
            ret["changes"]["keyid"] = keyid
            ret["comment"] += f", and keyid {keyid}"
    return ret
