"""Execution module ``ssh``: users' ``authorized_keys`` files.

Runs on the managed host. The file is ``config`` (default
``.ssh/authorized_keys``, with OpenSSH's ``%h`` / ``%u`` / ``%%`` tokens)
under the user's home. A key line is ``[options ]enc key[ comment]``, as
Salt writes it. Functions and return values are Salt 3007's:
``set_auth_key`` -> ``"new"`` / ``"replace"`` / ``"no change"`` /
``"fail"`` / ``"invalid"`` / ``"Invalid public key"``; ``rm_auth_key`` ->
``"Key removed"`` / ``"Key not present"`` / ``"Key not removed"``;
``check_key`` -> ``"add"`` / ``"update"`` / ``"exists"``; ``auth_keys`` ->
``{key: {enc, comment, options, fingerprint}}``.

Safety: a missing ``.ssh`` is created 0700 and a new file 0600, both owned
by the user; the file is rewritten through a temporary file and a rename,
so a symlink planted at its place is replaced, never followed, and a ``.ssh``
that is a symlink is refused. Lines this module does not understand are kept.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import os
import re
import tempfile
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)

_LINE = re.compile(r"^(.*?)\s?((?:sk-)?(?:ssh-|ecds)[\w@.-]+\s.+)$")
_ENC_ALIASES = {
    "r": "ssh-rsa",
    "rsa": "ssh-rsa",
    "ssh-rsa": "ssh-rsa",
    "d": "ssh-dss",
    "dsa": "ssh-dss",
    "dss": "ssh-dss",
    "ssh-dss": "ssh-dss",
    "e": "ecdsa-sha2-nistp256",
    "ecdsa": "ecdsa-sha2-nistp256",
    "ed25519": "ssh-ed25519",
    "ssh-ed25519": "ssh-ed25519",
}
_ENC_OTHERS = {
    "ecdsa-sha2-nistp256",
    "ecdsa-sha2-nistp384",
    "ecdsa-sha2-nistp521",
    "rsa-sha2-512",
    "rsa-sha2-256",
    "rsa-sha2-512-cert-v01@openssh.com",
    "rsa-sha2-256-cert-v01@openssh.com",
    "ssh-rsa-cert-v01@openssh.com",
    "ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ecdsa-sha2-nistp384-cert-v01@openssh.com",
    "ecdsa-sha2-nistp521-cert-v01@openssh.com",
    "sk-ecdsa-sha2-nistp256@openssh.com",
    "sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
    "ssh-ed25519-cert-v01@openssh.com",
    "sk-ssh-ed25519@openssh.com",
    "sk-ssh-ed25519-cert-v01@openssh.com",
}


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _note(err: str) -> None:
    __context__["ssh_auth.error"] = err
    log.error("%s", err)


def refine_enc(enc: str) -> str:
    """The canonical key type for ``enc`` (``rsa`` -> ``ssh-rsa``, ...)."""
    enc = str(enc)
    if enc in _ENC_ALIASES:
        return _ENC_ALIASES[enc]
    if enc in _ENC_OTHERS:
        return enc
    raise CommandExecutionError(f"Incorrect encryption key type '{enc}'.")


def _fingerprint(key: str, hash_type: str | None = None) -> str | None:
    try:
        raw = base64.b64decode(key, validate=True)
    except (ValueError, TypeError):
        return None
    digest = hashlib.new(hash_type or "sha256", raw).hexdigest()
    return ":".join(digest[i : i + 2] for i in range(0, len(digest), 2))


def parse_line(line: str) -> dict[str, Any] | None:
    """``{options, enc, key, comment}`` of one authorized_keys line, or None."""
    line = line.strip()
    if not line or line.startswith("#"):
        return None
    found = _LINE.search(line)
    if not found:
        return None
    parts = found.group(2).split()
    if len(parts) < 2:
        return None
    return {
        "options": found.group(1).split(",") if found.group(1) else [],
        "enc": parts[0],
        "key": parts[1],
        "comment": " ".join(parts[2:]),
    }


def _format(key: str, enc: str, comment: str, options: list[str] | None) -> str:
    prefix = ",".join(options) + " " if options else ""
    return f"{prefix}{enc} {key} {comment}\n"


def _expand(path: str, user: str, home: str) -> str:
    out, escape = [], False
    for char in path:
        if escape:
            escape = False
            if char not in "%uh":
                raise CommandExecutionError(f'AuthorizedKeysFile path: unknown token character "%{char}"')
            out.append({"%": "%", "u": user, "h": home}[char])
        elif char == "%":
            escape = True
        else:
            out.append(char)
    if escape:
        raise CommandExecutionError("AuthorizedKeysFile path: Last character can't be escape character")
    return "".join(out)


def _config_file(user: str, config: str) -> tuple[str, dict[str, Any]]:
    info = _salt("user.info")(user)
    if not info:
        raise CommandExecutionError(f"User '{user}' does not exist")
    path = _expand(str(config), str(user), info["home"])
    if not os.path.isabs(path):
        path = os.path.join(info["home"], path)
    return path, info


def _read_keys(path: str, hash_type: str | None) -> dict[str, dict[str, Any]]:
    keys: dict[str, dict[str, Any]] = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                entry = parse_line(line)
                if entry is None:
                    continue
                fingerprint = _fingerprint(entry["key"], hash_type)
                if fingerprint is None:
                    continue
                keys[entry["key"]] = {
                    "enc": entry["enc"],
                    "comment": entry["comment"],
                    "options": entry["options"],
                    "fingerprint": fingerprint,
                }
    except OSError as exc:
        raise CommandExecutionError(f"Problem reading ssh key file {path}: {exc.strerror}") from None
    return keys


def auth_keys(
    user: Any = None, config: str = ".ssh/authorized_keys", fingerprint_hash_type: str | None = None, **kwargs: Any
) -> dict[str, Any]:
    """The keys of ``user`` (every user's, keyed by user, when ``user`` is a list or not given)."""
    users = user if isinstance(user, list) else ([user] if user else _salt("user.list_users")())
    found: dict[str, Any] = {}
    for name in users:
        try:
            path, _ = _config_file(name, config)
        except CommandExecutionError:
            continue
        if os.path.isfile(path):
            found[name] = _read_keys(path, fingerprint_hash_type)
    if user and not isinstance(user, list):
        return found.get(user, {})
    return found


def check_key(
    user: str,
    key: str,
    enc: str,
    comment: str,
    options: list[str] | None,
    config: str = ".ssh/authorized_keys",
    cache_keys: Any = None,
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> str:
    """``add``, ``update`` or ``exists`` for this key line in ``user``'s file."""
    enc = refine_enc(enc)
    current = auth_keys(user, config=config, fingerprint_hash_type=fingerprint_hash_type)
    if key not in current:
        return "add"
    have = current[key]
    same = _format(key, have["enc"], have["comment"], have["options"]) == _format(key, enc, comment, options or [])
    return "exists" if same else "update"


def _source_keys(source: str, saltenv: str, hash_type: str | None) -> dict[str, dict[str, Any]] | None:
    local = _salt("cp.cache_file")(source, saltenv)
    if not local or not os.path.isfile(str(local)):
        return None
    return _read_keys(str(local), hash_type)


def check_key_file(
    user: str,
    source: str,
    config: str = ".ssh/authorized_keys",
    saltenv: str = "base",
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> dict[str, str]:
    """``{key: add|update|exists}`` for every key of the file ``source``."""
    keys = _source_keys(source, saltenv, fingerprint_hash_type)
    if not keys:
        if keys is not None:
            _note(f"No keys detected in {source}. Is file properly formatted?")
        return {}
    return {
        k: check_key(
            user, k, v["enc"], v["comment"], v["options"], config=config, fingerprint_hash_type=fingerprint_hash_type
        )
        for k, v in keys.items()
    }


def _write(path: str, text: str, info: dict[str, Any]) -> None:
    """Replace ``path`` with ``text`` atomically, keeping (or setting) owner and mode."""
    folder = os.path.dirname(path)
    try:
        st = os.lstat(path)
        mode, uid, gid = st.st_mode & 0o7777, st.st_uid, st.st_gid
        if os.path.islink(path):
            mode, uid, gid = 0o600, info["uid"], info["gid"]
    except FileNotFoundError:
        mode, uid, gid = 0o600, info["uid"], info["gid"]
    fd, tmp = tempfile.mkstemp(prefix=".authorized_keys.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        if os.geteuid() == 0:
            os.chown(tmp, uid, gid)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _ensure_folder(path: str, info: dict[str, Any]) -> None:
    folder = os.path.dirname(path)
    if os.path.islink(folder):
        raise CommandExecutionError(f"{folder} is a symlink; refusing to write keys through it")
    if not os.path.isdir(folder):
        os.makedirs(folder)
        if os.geteuid() == 0:
            os.chown(folder, info["uid"], info["gid"])
        os.chmod(folder, 0o700)


def _lines(path: str) -> list[str]:
    if not os.path.isfile(path):
        return []
    with open(path, encoding="utf-8", errors="replace") as fh:
        return fh.read().splitlines(keepends=True)


def set_auth_key(
    user: str,
    key: str,
    enc: str = "ssh-rsa",
    comment: str = "",
    options: list[str] | None = None,
    config: str = ".ssh/authorized_keys",
    cache_keys: Any = None,
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> str:
    """Make sure this key line is in ``user``'s authorized_keys."""
    if len(str(key).split()) > 1:
        return "invalid"
    enc = refine_enc(enc)
    info = _salt("user.info")(user)
    if not info:
        _note(f"Failed to add the ssh key. User {user} does not exist")
        return "fail"
    if _fingerprint(key, fingerprint_hash_type) is None:
        return "Invalid public key"
    status = check_key(user, key, enc, comment, options, config=config, fingerprint_hash_type=fingerprint_hash_type)
    if status == "exists":
        return "no change"
    path, _ = _config_file(user, config)
    home = info.get("home", "")
    if path.startswith(home) and not os.path.isdir(home):
        _note(f"Failed to add the ssh key. The home directory {home} of user {user} does not exist")
        return "fail"
    line = _format(key, enc, comment, options or [])
    try:
        _ensure_folder(path, info)
        lines = _lines(path)
        if status == "update":
            out = []
            for old in lines:
                if not old.strip():
                    continue
                entry = parse_line(old)
                out.append(line if entry is not None and entry["key"] == key else old.rstrip("\n") + "\n")
            _write(path, "".join(out), info)
            return "replace"
        text = "".join(lines)
        if text and not text.endswith("\n"):
            text += "\n"
        _write(path, text + line, info)
    except OSError as exc:
        raise CommandExecutionError(f"Could not write to key file: {exc}") from None
    return "new"


def _keys_in_file(source: str, saltenv: str, hash_type: str | None) -> dict[str, dict[str, Any]]:
    """The keys of the key file ``source`` (``{}``, noted for the state, when it holds none);
    CommandExecutionError when it cannot be fetched."""
    keys = _source_keys(source, saltenv, hash_type)
    if keys is None:
        raise CommandExecutionError("Failed to pull key file from salt file server")
    if not keys:
        _note(f"No keys detected in {source}. Is file properly formatted?")
    return keys


def set_auth_key_from_file(
    user: str,
    source: str,
    config: str = ".ssh/authorized_keys",
    saltenv: str = "base",
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> str:
    """Add every key of the file ``source``; the strongest outcome of them."""
    keys = _keys_in_file(source, saltenv, fingerprint_hash_type)
    if not keys:
        return "fail"
    outcomes = [
        set_auth_key(
            user,
            k,
            enc=v["enc"],
            comment=v["comment"],
            options=kwargs.get("options") or v["options"],
            config=config,
            fingerprint_hash_type=fingerprint_hash_type,
        )
        for k, v in keys.items()
    ]
    for outcome in ("fail", "replace", "new"):
        if outcome in outcomes:
            return outcome
    return "no change"


def rm_auth_key(
    user: str, key: str, config: str = ".ssh/authorized_keys", fingerprint_hash_type: str | None = None, **kwargs: Any
) -> str:
    """Remove the key ``key`` from ``user``'s authorized_keys."""
    current = auth_keys(user, config=config, fingerprint_hash_type=fingerprint_hash_type)
    if key not in current:
        return "Key not present"
    path, info = _config_file(user, config)
    kept = []
    for line in _lines(path):
        if not line.strip():
            continue
        entry = parse_line(line)
        if entry is not None and entry["key"] == key:
            continue
        kept.append(line.rstrip("\n") + "\n")
    try:
        _write(path, "".join(kept), info)
    except OSError as exc:
        log.warning("Could not read/write key file: %s", exc)
        return "Key not removed"
    return "Key removed"


def rm_auth_key_from_file(
    user: str,
    source: str,
    config: str = ".ssh/authorized_keys",
    saltenv: str = "base",
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> str:
    """Remove every key of the file ``source``."""
    keys = _keys_in_file(source, saltenv, fingerprint_hash_type)
    if not keys:
        return "fail"
    outcomes = [rm_auth_key(user, k, config=config, fingerprint_hash_type=fingerprint_hash_type) for k in keys]
    for outcome in ("Key not removed", "Key removed"):
        if outcome in outcomes:
            return outcome
    return "Key not present"
