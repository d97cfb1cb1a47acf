"""gitfs configuration: ``gitfs_remotes`` and the ``gitfs_*`` defaults, read as Salt 3007 reads them.

A remote is a URL (a local path, ``file://``, ``git://``, ``http(s)://``, ``ssh://`` or
``user@host:path``), alone or with per-remote parameters::

    gitfs_remotes:
      - https://git.example/states.git
      - file:///srv/git/formulas.git:
        - name: formulas
        - root: salt
        - mountpoint: salt://formulas
        - base: main
        - saltenv:
          - dev:
            - ref: develop

Each parameter falls back to its ``gitfs_<param>`` master setting. A parameter Salt does not
have, or a value of the wrong type, is named with its remote in an error and that remote is
left out (the others are served); so is a remote whose ``name`` (or URL, without a name)
repeats another's. Pure: data in, data out.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from briny.common.exceptions import FileServerError
from briny.common.fileclient import clean_path
from briny.common.urlauth import redact_http_basic_auth as redact

PARAMS = frozenset(
    "name root mountpoint base saltenv ref_types user password insecure_auth pubkey privkey passphrase "
    "ssl_verify update_interval disable_saltenv_mapping fallback".split()
)
# parameters with a gitfs_<param> master default
GLOBAL = (
    "root mountpoint base ref_types user password insecure_auth pubkey privkey passphrase ssl_verify "
    "update_interval disable_saltenv_mapping fallback".split()
)
REF_TYPES = ("branch", "tag", "sha")
# a name is its cache folder: never "." or "..", never starting with a dot or a dash
_NAME_RE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_.-]{0,63}\Z")


@dataclass(frozen=True)
class EnvMap:
    """One ``saltenv`` mapping: the ref serving an env, with its own root and mountpoint."""

    ref: str
    root: str | None = None
    mountpoint: str | None = None


@dataclass
class Remote:
    url: str
    id: str  # the folder name of its cache
    label: str  # how reports name it: its name, else its URL without credentials
    root: str = ""
    mountpoint: str = ""
    base: str = "master"
    saltenv: dict[str, EnvMap] = field(default_factory=dict)
    ref_types: tuple[str, ...] = REF_TYPES
    auth: dict[str, Any] = field(default_factory=dict)  # user, password, privkey, passphrase, ...
    insecure_auth: bool = False
    ssl_verify: bool = True
    update_interval: float = 60.0
    disable_saltenv_mapping: bool = False
    fallback: str = ""

    def https_auth(self) -> bool:
        return bool(self.auth.get("user") or self.auth.get("password"))


def clean_dir(value: Any, what: str) -> str:
    """A root or mountpoint as a relative path ('' for the top); ValueError when it leaves the repo."""
    if value is None:
        return ""
    text = str(value).strip()
    if text.startswith("salt://"):
        text = text[len("salt://") :]
    text = text.strip("/")
    if not text:
        return ""
    try:
        rel = clean_path(text)
    except FileServerError:
        rel = ""
    if not rel or ".." in rel.split("/"):
        raise ValueError(f"{what} {value!r} leaves the repository")
    return rel


def _flatten(params: Any, label: str) -> dict[str, Any]:
    """Salt's list of one-key dicts (or a dict) as one dict."""
    if params is None:
        return {}
    if isinstance(params, dict):
        return dict(params)
    if not isinstance(params, list):
        raise ValueError(f"gitfs remote {label}: its parameters must be a list of 'key: value' items")
    out: dict[str, Any] = {}
    for item in params:
        if not isinstance(item, dict):
            raise ValueError(f"gitfs remote {label}: parameter {item!r} is not a 'key: value' item")
        out.update(item)
    return out


def _env_maps(value: Any, label: str) -> dict[str, EnvMap]:
    if value in (None, "", []):
        return {}
    found: dict[str, EnvMap] = {}
    items = value if isinstance(value, list) else [value]
    for item in items:
        if not isinstance(item, dict):
            raise ValueError(f"gitfs remote {label}: 'saltenv' must be a list of 'env: [params]' items")
        for env, params in item.items():
            conf = _flatten(params, label)
            extra = set(conf) - {"ref", "root", "mountpoint"}
            if extra:
                raise ValueError(
                    f"gitfs remote {label}: saltenv {env}: unknown parameter(s) {', '.join(sorted(extra))}"
                )
            ref = conf.get("ref")
            found[str(env)] = EnvMap(
                ref=str(ref) if ref else str(env),
                root=clean_dir(conf["root"], "root") if "root" in conf else None,
                mountpoint=clean_dir(conf["mountpoint"], "mountpoint") if "mountpoint" in conf else None,
            )
    return found


def _bool(value: Any, key: str, label: str) -> bool:
    if isinstance(value, bool):
        return value
    raise ValueError(f"gitfs remote {label}: '{key}' must be True or False, not {value!r}")


def parse(opts: dict[str, Any]) -> tuple[list[Remote], list[str]]:
    """(the remotes of ``gitfs_remotes``, an error per remote left out)."""
    raw = opts.get("gitfs_remotes") or []
    if not isinstance(raw, list):
        return [], ["gitfs_remotes must be a list of remotes"]
    remotes: list[Remote] = []
    errors: list[str] = []
    seen: dict[str, str] = {}
    global_maps: dict[str, EnvMap] = {}
    try:
        global_maps = _env_maps(opts.get("gitfs_saltenv"), "(gitfs_saltenv)")
    except ValueError as exc:
        errors.append(str(exc))
    for number, entry in enumerate(raw, 1):
        if isinstance(entry, dict) and len(entry) == 1:
            url, params = next(iter(entry.items()))
        elif isinstance(entry, str):
            url, params = entry, None
        else:
            # named by its place and type, never its text: its parameters may hold a password
            what = f"a mapping of {len(entry)} URLs" if isinstance(entry, dict) else f"a {type(entry).__name__}"
            errors.append(f"gitfs remote #{number} ({what}) is neither a URL nor 'URL: [params]'")
            continue
        url = str(url).strip()
        label = redact(url)
        try:
            conf = _flatten(params, label)
            unknown = set(conf) - PARAMS
            if unknown:
                raise ValueError(f"gitfs remote {label}: unknown parameter(s) {', '.join(sorted(unknown))}")
            remote = _remote(url, conf, opts, global_maps)
        except ValueError as exc:
            errors.append(str(exc))
            continue
        if remote.id in seen:
            errors.append(f"gitfs remote {remote.label} has the same name (or URL) as {seen[remote.id]}: left out")
            continue
        seen[remote.id] = remote.label
        remotes.append(remote)
    return remotes, errors


def _remote(url: str, conf: dict[str, Any], opts: dict[str, Any], global_maps: dict[str, EnvMap]) -> Remote:
    def get(key: str) -> Any:
        return conf[key] if key in conf else opts.get(f"gitfs_{key}")

    label = redact(url)
    name = conf.get("name")
    if name is not None:
        if not isinstance(name, str) or not _NAME_RE.match(name):
            raise ValueError(
                f"gitfs remote {label}: 'name' must be 1 to 64 letters, digits, '_', '.', '-', starting with a letter or digit"
            )
        label = name
        rid = name
    else:
        rid = hashlib.sha256(url.encode()).hexdigest()[:20]
    ref_types = get("ref_types")
    if ref_types in (None, ""):
        ref_types = list(REF_TYPES)
    if not isinstance(ref_types, list) or any(t not in REF_TYPES for t in ref_types):
        raise ValueError(f"gitfs remote {label}: 'ref_types' must list some of {', '.join(REF_TYPES)}")
    interval = get("update_interval")
    interval = 60 if interval in (None, "") else interval
    if isinstance(interval, bool) or not isinstance(interval, (int, float)) or interval <= 0:
        raise ValueError(f"gitfs remote {label}: 'update_interval' must be a positive number of seconds")
    maps = dict(global_maps)
    maps.update(_env_maps(conf.get("saltenv"), label))
    auth = {k: get(k) for k in ("user", "password", "pubkey", "privkey", "passphrase") if get(k)}
    ssl_verify = get("ssl_verify")
    remote = Remote(
        url=url,
        id=rid,
        label=label,
        root=clean_dir(get("root"), "root"),
        mountpoint=clean_dir(get("mountpoint"), "mountpoint"),
        base=str(get("base") or "master"),
        saltenv=maps,
        ref_types=tuple(ref_types),
        auth=auth,
        insecure_auth=_bool(get("insecure_auth") or False, "insecure_auth", label),
        ssl_verify=True if ssl_verify is None else _bool(ssl_verify, "ssl_verify", label),
        update_interval=float(interval),
        disable_saltenv_mapping=_bool(get("disable_saltenv_mapping") or False, "disable_saltenv_mapping", label),
        fallback=str(get("fallback") or ""),
    )
    if remote.https_auth() and not url.startswith("https://") and not remote.insecure_auth:
        if url.startswith("http://"):
            raise ValueError(
                f"gitfs remote {label}: user/password over plain http:// is refused unless insecure_auth is True"
            )
        raise ValueError(f"gitfs remote {label}: user/password are for http(s):// remotes only")
    return remote


def exposed(env: str, opts: dict[str, Any]) -> bool:
    """Whether ``gitfs_saltenv_whitelist`` / ``gitfs_saltenv_blacklist`` let ``env`` be served
    (each item a glob or a regular expression, as Salt's)."""
    white = opts.get("gitfs_saltenv_whitelist") or []
    black = opts.get("gitfs_saltenv_blacklist") or []
    white = white if isinstance(white, list) else [white]
    black = black if isinstance(black, list) else [black]
    if white and not any(_match(env, str(p)) for p in white):
        return False
    return not any(_match(env, str(p)) for p in black)


def _match(env: str, pattern: str) -> bool:
    import fnmatch

    if fnmatch.fnmatchcase(env, pattern):
        return True
    try:
        return re.fullmatch(pattern, env) is not None
    except re.error:
        return False


def envs_of(remote: Remote, refs: dict[str, dict[str, str]]) -> dict[str, tuple[str, str, str]]:
    """``{saltenv: (commit, root, mountpoint)}`` a remote serves, from its fetched refs
    (``{"branch": {name: commit}, "tag": {name: commit}}``), as Salt maps them: the ``base``
    ref is ``base``, every other branch and tag its own env (unless
    ``disable_saltenv_mapping``), and ``saltenv`` mappings on top."""
    found: dict[str, tuple[str, str, str]] = {}

    def lookup(ref: str) -> str | None:
        for kind in ("branch", "tag"):
            if kind in remote.ref_types and ref in refs.get(kind, {}):
                return refs[kind][ref]
        if "sha" in remote.ref_types and re.fullmatch(r"[0-9a-f]{40}", ref):
            return ref
        return None

    base = lookup(remote.base)
    if base:
        found["base"] = (base, remote.root, remote.mountpoint)
    if not remote.disable_saltenv_mapping:
        for kind in ("branch", "tag"):
            if kind not in remote.ref_types:
                continue
            for name, commit in sorted(refs.get(kind, {}).items()):
                if name == remote.base:
                    continue
                found.setdefault(name, (commit, remote.root, remote.mountpoint))
    for env, mapping in remote.saltenv.items():
        mapped = lookup(mapping.ref)
        if mapped is None:
            continue
        root = remote.root if mapping.root is None else mapping.root
        mount = remote.mountpoint if mapping.mountpoint is None else mapping.mountpoint
        found[env] = (mapped, root, mount)
    return found
