"""Execution module ``ssh``: users' ``authorized_keys`` and ``known_hosts`` files.

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

known_hosts (``get_known_host_entries``, ``check_known_host``,
``set_known_host``, ``rm_known_host``, ``recv_known_host_entries``,
``hash_known_hosts``), Salt's results and errors (``{"status": "error",
"error": ...}``): the file is ``config`` (default ``.ssh/known_hosts``
under the user's home, ``/etc/ssh/ssh_known_hosts`` without a user);
lookups, removals and hashing are ``ssh-keygen -F`` / ``-R`` / ``-H``'s
(the last two keep ``FILE.old``, as with Salt), keys offered by a host come
from ``ssh-keyscan`` (five attempts; none: ``Unable to receive remote host
keys``). New lines replace the host's old lines of the same key type in
one atomic rewrite (Salt truncates and appends); a ``key`` that is not a
public key is refused (``Invalid public key: ...``; Salt writes it and
adds it again on every run).
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError
from briny.minion.host.sysfiles import sshkeys
from briny.minion.host.sysfiles.replace import read_text, replace_text
from briny.minion.host.sysfiles.sshkeys import auth_line as _format
from briny.minion.host.sysfiles.sshkeys import parse_auth_line as parse_line
from briny.minion.host.sysfiles.sshkeys import refine_enc

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __salt__


log = logging.getLogger(__name__)


def _salt(fun: str) -> Any:
    return __salt__[fun]


def _note(err: str) -> None:
    __context__["ssh_auth.error"] = err
    log.error("%s", err)


def _fingerprint(key: str, hash_type: str | None = None) -> str | None:
    return sshkeys.fingerprint(key, hash_type)


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


# ---------------------------------------------------------------- known_hosts


def _known_hosts_file(config: str | None, user: str | None) -> Any:
    """The known_hosts path (``config`` under ``user``'s home when relative), or Salt's error dict."""
    config = config or (".ssh/known_hosts" if user else "/etc/ssh/ssh_known_hosts")
    if os.path.isabs(config):
        return config
    if not user:
        return {"status": "error", "error": "Cannot determine absolute path to file."}
    info = _salt("user.info")(user)
    if not info:
        return {"status": "error", "error": f"User {user} does not exist"}
    return os.path.join(info["home"], config)


def _ssh_tool(name: str) -> str:
    found = _salt("cmd.which")(name)
    if not found:
        raise CommandExecutionError(f"The '{name}' binary was not found in $PATH.")
    return str(found)


def _keygen_lookup(full: str, hostname: str, port: Any) -> list[str]:
    cmd = [_ssh_tool("ssh-keygen"), "-F", sshkeys.ssh_hostname(hostname, port), "-f", full]
    return str(_salt("cmd.run")(cmd, ignore_retcode=True, python_shell=False)).splitlines()


def _give_to(path: str, user: str | None) -> None:
    if user and os.geteuid() == 0:
        info = _salt("user.info")(user)
        if info:
            os.chown(path, info["uid"], info["gid"])


def get_known_host_entries(
    user: str | None,
    hostname: str,
    config: str | None = None,
    port: Any = None,
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> Any:
    """``[{hostname, key, enc, fingerprint}]`` of ``hostname`` in the known_hosts file, or None."""
    full = _known_hosts_file(config, user)
    if isinstance(full, dict):
        return full
    entries = list(sshkeys.parse_openssh_output(_keygen_lookup(full, hostname, port), fingerprint_hash_type))
    return entries or None


def recv_known_host_entries(
    hostname: str,
    enc: str | None = None,
    port: Any = None,
    hash_known_hosts: bool = True,
    timeout: Any = 5,
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> list[dict[str, str]] | None:
    """The host keys ``hostname`` offers (``ssh-keyscan``, up to five attempts), or None."""
    cmd = [_ssh_tool("ssh-keyscan")]
    if port:
        cmd += ["-p", str(port)]
    if enc:
        cmd += ["-t", str(enc)]
    if hash_known_hosts:
        cmd.append("-H")
    cmd += ["-T", str(timeout), str(hostname)]
    lines: list[str] = []
    for _ in range(5):
        lines = str(_salt("cmd.run")(cmd, python_shell=False, ignore_retcode=True)).splitlines()
        if lines:
            break
    return list(sshkeys.parse_openssh_output(lines, fingerprint_hash_type)) or None


def check_known_host(
    user: str | None = None,
    hostname: str | None = None,
    key: str | None = None,
    fingerprint: str | None = None,
    config: str | None = None,
    port: Any = None,
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> Any:
    """``add``, ``update`` or ``exists`` for ``hostname`` (and ``key`` or ``fingerprint``)."""
    if not hostname:
        return {"status": "error", "error": "hostname argument required"}
    entries = get_known_host_entries(user, hostname, config, port, fingerprint_hash_type)
    if isinstance(entries, dict):
        return entries
    if not entries:
        return "add"
    if key:
        return "exists" if key in [e["key"] for e in entries] else "update"
    if fingerprint:
        return "exists" if fingerprint in [e["fingerprint"] for e in entries] else "update"
    return "exists"


def rm_known_host(
    user: str | None = None, hostname: str | None = None, config: str | None = None, port: Any = None, **kwargs: Any
) -> dict[str, Any]:
    """Remove every key of ``hostname`` (``ssh-keygen -R``, which keeps ``FILE.old``)."""
    if not hostname:
        return {"status": "error", "error": "hostname argument required"}
    full = _known_hosts_file(config, user)
    if isinstance(full, dict):
        return full
    if not os.path.isfile(full):
        return {"status": "error", "error": f"Known hosts file {full} does not exist"}
    cmd = [_ssh_tool("ssh-keygen"), "-R", sshkeys.ssh_hostname(hostname, port), "-f", full]
    out = _salt("cmd.run")(cmd, python_shell=False)
    _give_to(full, user)
    return {"status": "removed", "comment": out}


def hash_known_hosts(user: str | None = None, config: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """Hash every host name of the file (``ssh-keygen -H``, which keeps ``FILE.old``)."""
    full = _known_hosts_file(config, user)
    if isinstance(full, dict):
        return full
    if not os.path.isfile(full):
        return {"status": "error", "error": f"Known hosts file {full} does not exist"}
    return {"status": "updated", "comment": _hash_file(full, user)}


def _hash_file(full: str, user: str | None) -> str:
    mode = os.stat(full).st_mode
    out = _salt("cmd.run")([_ssh_tool("ssh-keygen"), "-H", "-f", full], python_shell=False)
    os.chmod(full, mode)
    _give_to(full, user)
    return str(out)


def set_known_host(
    user: str | None = None,
    hostname: str | None = None,
    fingerprint: str | None = None,
    key: str | None = None,
    port: Any = None,
    enc: str | None = None,
    config: str | None = None,
    hash_known_hosts: bool = True,
    timeout: Any = 5,
    fingerprint_hash_type: str | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Make the known_hosts file know ``hostname`` by ``key``, or by the keys the host offers
    (checked against ``fingerprint``); ``{status: exists|updated|error, ...}``."""
    if not hostname:
        return {"status": "error", "error": "hostname argument required"}
    if port is not None and str(port) != str(sshkeys.DEFAULT_SSH_PORT) and hash_known_hosts:
        return {
            "status": "error",
            "error": "argument port can not be used in conjunction with argument hash_known_hosts",
        }
    if key and sshkeys.key_type(key) is None:
        return {"status": "error", "error": f"Invalid public key: {key}"}
    stored = get_known_host_entries(user, hostname, config, port, fingerprint_hash_type)
    if isinstance(stored, dict):
        return stored
    stored_keys = [e["key"] for e in stored or [] if enc is None or e["enc"] == enc]
    update = (
        not stored
        or bool(fingerprint and fingerprint not in [e["fingerprint"] for e in stored])
        or bool(key and key not in stored_keys)
    )
    check = not update and key is None and fingerprint is None
    if not update and not check:
        return {"status": "exists", "keys": stored_keys}
    remote: list[dict[str, Any]]
    if key:
        remote = [{"hostname": hostname, "enc": enc, "key": key}]
    else:
        found = recv_known_host_entries(hostname, enc, port, hash_known_hosts, timeout, fingerprint_hash_type)
        if not found:
            return {"status": "error", "error": "Unable to receive remote host keys"}
        if fingerprint and fingerprint not in [e["fingerprint"] for e in found]:
            return {
                "status": "error",
                "error": "Remote host public keys found but none of their fingerprints match the one you have provided",
            }
        if check and {e["key"] for e in found} == set(stored_keys):
            return {"status": "exists", "keys": stored_keys}
        remote = list(found)
    full = _known_hosts_file(config, user)
    if isinstance(full, dict):
        return full
    _write_known_hosts(full, user, hostname, port, enc, [sshkeys.entry_line(e, port, hash_known_hosts) for e in remote])
    if key and hash_known_hosts:
        _hash_file(full, user)
    return {"status": "updated", "old": stored, "new": remote}


def _write_known_hosts(full: str, user: str | None, hostname: str, port: Any, enc: str | None, new: list[str]) -> None:
    """Drop the old lines of ``hostname`` of type ``enc`` and add ``new``, in one atomic rewrite."""
    try:
        text = read_text(full, errors="surrogateescape")
    except OSError as exc:
        raise CommandExecutionError(f"Couldn't remove old entry(ies) from known hosts file: '{exc}'") from None
    drop = sshkeys.matched_line_numbers(_keygen_lookup(full, hostname, port), enc) if text is not None else []
    folder = os.path.dirname(full)
    try:
        if not os.path.isdir(folder):
            os.makedirs(folder)
            if user:
                _give_to(folder, user)
                os.chmod(folder, 0o700)
        replace_text(full, sshkeys.replace_lines(text or "", drop, new), errors="surrogateescape")
        if text is None:
            os.chmod(full, 0o600)
        _give_to(full, user)
    except OSError as exc:
        raise CommandExecutionError(f"Couldn't append to known hosts file: '{exc}'") from None
