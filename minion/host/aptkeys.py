"""Repository signing keys for APT: keyring files for ``signed-by``, or ``apt-key``.

Behind the ``pkg`` key functions (``get_repo_keys``, ``add_repo_key``,
``del_repo_key``) and the key arguments of ``pkg.mod_repo`` (``key_url``,
``key_text``, ``keyid`` with ``keyserver``), as Salt 3007 does them:

- with ``aptkey=False`` (or no ``apt-key`` on the host) keys are files in a
  folder (``/etc/apt/keyrings`` by default, or the folder of the repo's
  ``signed-by`` path), written ``0644``; an ASCII-armored key is dearmored
  unless the file name ends in ``.asc``;
- with ``apt-key`` the key goes into its keyring (``apt-key add``), as Salt
  does while the deprecated tool exists.

Every ``gpg`` run here uses a private, temporary home folder that is removed
afterwards with the agents gpg started in it: nothing touches root's
``~/.gnupg`` and no ``dirmngr`` is left running. Unlike Salt, a file that
is not an OpenPGP key is refused before it reaches a keyring.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError
from briny.minion.host.fileops import managed as _managed

log = logging.getLogger(__name__)

KEYRINGS = "/etc/apt/keyrings"
Run = Callable[..., dict[str, Any]]


def has_apt_key() -> bool:
    return shutil.which("apt-key") is not None


def gpg(run: Run, args: list[str], timeout: int = 120, **kwargs: Any) -> dict[str, Any]:
    """``gpg --batch ARGS`` in a fresh home folder, cleaned up with its agents afterwards."""
    home = tempfile.mkdtemp(prefix="briny-gpg-")
    try:
        return run(
            ["gpg", "--batch", "--homedir", home, *args],
            python_shell=False,
            timeout=timeout,
            ignore_retcode=True,
            output_loglevel="debug",
            **kwargs,
        )
    finally:
        if shutil.which("gpgconf"):
            run(["gpgconf", "--homedir", home, "--kill", "all"], python_shell=False, ignore_retcode=True, timeout=30)
        shutil.rmtree(home, ignore_errors=True)


def _int(value: str) -> Any:
    try:
        return int(value)
    except ValueError:
        return value


def parse_colons(text: str) -> dict[str, dict[str, Any]]:
    """``gpg --with-colons`` key listings -> ``{keyid: {...}}`` (Salt's record)."""
    keys: list[dict[str, Any]] = []
    for line in text.splitlines():
        items = [_int(i.strip()) if i.strip() else None for i in line.split(":")]
        if len(items) < 10:
            continue
        kind = items[0]
        if kind in ("pub", "sub"):
            props = {
                "algorithm": items[3],
                "bits": items[2],
                "capability": items[11] if len(items) > 11 else None,
                "date_creation": items[5],
                "date_expiration": items[6],
                "keyid": str(items[4]),
                "validity": items[1],
            }
            if kind == "pub":
                keys.append(props)
            elif keys:
                keys[-1]["subkey"] = props
        elif kind == "fpr" and keys:
            target = keys[-1].get("subkey") or keys[-1]
            target["fingerprint"] = items[9]
        elif kind == "uid" and keys:
            keys[-1].update({"uid": items[9], "uid_hash": items[7]})
    return {k["keyid"]: k for k in keys}


def show_keys(run: Run, path: str) -> dict[str, dict[str, Any]]:
    """The keys in a key file (armored or not); ``{}`` when it holds none."""
    out = gpg(run, ["--with-colons", "--with-fingerprint", "--show-keys", path])
    return parse_colons(str(out.get("stdout", ""))) if out["retcode"] == 0 else {}


def get_repo_keys(run: Run, aptkey: bool = True, keydir: Any = None) -> Any:
    """Every key APT trusts: ``{keyid: {fingerprint, uid, ...}}``; False when ``keydir`` is missing."""
    if not has_apt_key():
        aptkey = False
    if aptkey:
        out = run(
            ["apt-key", "adv", "--batch", "--list-public-keys", "--with-fingerprint", "--with-fingerprint",
             "--with-colons", "--fixed-list-mode"],
            python_shell=False,
            ignore_retcode=True,
        )  # fmt: skip
        if out["retcode"] != 0:
            log.error("%s", out.get("stderr", ""))
            return {}
        return parse_colons(str(out.get("stdout", "")))
    folder = str(keydir or KEYRINGS)
    if not os.path.isdir(folder):
        log.error("The directory %s does not exist. Please create this directory only writable by root", folder)
        return False
    found: dict[str, dict[str, Any]] = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            found.update(show_keys(run, path))
    return found


def _armored(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(64).lstrip().lstrip(b"-").startswith(b"BEGIN PGP")
    except OSError:
        return False


def install_key_file(run: Run, source: str, dest: str) -> None:
    """Copy the key in ``source`` to ``dest`` (0644, atomically), dearmored unless ``dest`` ends in ``.asc``."""
    if shutil.which("gpg") and not show_keys(run, source):
        raise CommandExecutionError(f"{source} is not an OpenPGP key")
    folder = os.path.dirname(dest) or "."
    if not os.path.isdir(folder):
        raise CommandExecutionError(
            f"The directory {folder} does not exist. Please create this directory only writable by root"
        )
    data_path = source
    tmpdir = None
    try:
        if _armored(source) and not dest.endswith(".asc"):
            tmpdir = tempfile.mkdtemp(prefix="briny-key-")
            data_path = os.path.join(tmpdir, "key.gpg")
            out = gpg(run, ["--yes", "--output", data_path, "--dearmor", source])
            if out["retcode"] != 0:
                raise CommandExecutionError(f"Failed to decrypt the key {source}: {out.get('stderr', '').strip()}")
        with open(data_path, "rb") as fh:
            data = fh.read()
        _managed.write(dest, data, exact_mode="0644")
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)


def add_repo_key(
    run: Run,
    cache_file: Callable[..., Any],
    path: str | None = None,
    text: str | None = None,
    keyserver: str | None = None,
    keyid: str | None = None,
    saltenv: str = "base",
    aptkey: bool = True,
    keydir: Any = None,
    keyfile: Any = None,
) -> bool:
    """Salt's ``pkg.add_repo_key``: from a file (local or ``salt://``), text, or a keyserver."""
    folder = str(keydir or KEYRINGS)
    if not aptkey and not os.path.isdir(folder):
        log.error("The directory %s does not exist. Please create this directory only writable by root", folder)
        return False
    if not has_apt_key():
        aptkey = False
    if keyid:
        current = get_repo_keys(run, aptkey=aptkey, keydir=folder) or {}
        if any(str(k).endswith(str(keyid)) for k in current):
            log.debug("The keyid '%s' already present", keyid)
            return True
    if path:
        local = cache_file(path, saltenv)
        if not local:
            log.error("Unable to get cached copy of file: %s", path)
            return False
        if not aptkey:
            name = str(keyfile) if keyfile else os.path.basename(str(local))
            dest = name if os.path.isabs(name) else os.path.join(folder, name)
            try:
                install_key_file(run, str(local), dest)
            except CommandExecutionError as exc:
                log.error("Unable to add repo key: %s", exc)
                return False
            return True
        out = run(["apt-key", "add", str(local)], python_shell=False, ignore_retcode=True)
    elif text:
        if not aptkey:
            with tempfile.NamedTemporaryFile("w", suffix=".asc", delete=False) as fh:
                fh.write(text)
            try:
                dest = str(keyfile) if keyfile else os.path.join(folder, "repo-key.gpg")
                install_key_file(run, fh.name, dest if os.path.isabs(dest) else os.path.join(folder, dest))
            except CommandExecutionError as exc:
                log.error("Unable to add repo key: %s", exc)
                return False
            finally:
                os.unlink(fh.name)
            return True
        out = run(["apt-key", "add", "-"], python_shell=False, ignore_retcode=True, stdin=text)
    elif keyserver:
        if not keyid:
            raise SaltInvocationError(f"No keyid or keyid too short for keyserver: {keyserver}")
        if aptkey:
            out = run(
                ["apt-key", "adv", "--batch", "--keyserver", keyserver, "--recv", str(keyid)],
                python_shell=False,
                ignore_retcode=True,
            )
        else:
            if not keyfile:
                log.error("You must define the name of the key file to save the key. See keyfile argument")
                return False
            return recv_key(
                run,
                str(keyid),
                keyserver,
                str(keyfile) if os.path.isabs(str(keyfile)) else os.path.join(folder, str(keyfile)),
            )
    elif keyid:
        raise SaltInvocationError(f"No keyserver specified for keyid: {keyid}")
    else:
        raise TypeError("add_repo_key() takes at least 1 argument (0 given)")
    if out["retcode"] == 0:
        return True
    log.error("Unable to add repo key: %s", out.get("stderr", ""))
    return False


def recv_key(run: Run, keyid: str, keyserver: str, dest: str) -> bool:
    """Fetch ``keyid`` from ``keyserver`` into the keyring file ``dest`` (added to what it holds)."""
    home = tempfile.mkdtemp(prefix="briny-key-")
    try:
        ring = os.path.join(home, "ring.gpg")
        if os.path.isfile(dest):
            shutil.copyfile(dest, ring)
        out = gpg(run, ["--no-default-keyring", "--keyring", ring, "--keyserver", keyserver, "--recv-keys", keyid])
        if out["retcode"] != 0:
            log.error("Unable to add repo key %s from %s: %s", keyid, keyserver, out.get("stderr", "").strip())
            return False
        exported = os.path.join(home, "export.gpg")
        out = gpg(run, ["--no-default-keyring", "--keyring", ring, "--output", exported, "--export"])
        if out["retcode"] != 0 or not os.path.isfile(exported):
            return False
        with open(exported, "rb") as fh:
            _managed.write(dest, fh.read(), exact_mode="0644")
        return True
    finally:
        shutil.rmtree(home, ignore_errors=True)


def del_repo_key(run: Run, keyid: str, aptkey: bool = True, keydir: Any = None, prefer: str = "") -> Any:
    """Remove the key ``keyid``: its file in ``keydir`` (``aptkey=False``; ``prefer``, the repo's
    ``signed-by`` file, first) or ``apt-key del``."""
    if not has_apt_key():
        aptkey = False
    if aptkey:
        out = run(["apt-key", "del", str(keyid)], python_shell=False, ignore_retcode=True)
        if out["retcode"] != 0:
            msg = f"Failed to remove keyid {keyid}"
            if out.get("stderr"):
                msg += f": {out['stderr']}"
            raise CommandExecutionError(msg)
        return keyid
    folder = str(keydir or KEYRINGS)
    if not os.path.isdir(folder):
        log.error("The directory %s does not exist. Please create this directory only writable by root", folder)
        return False
    if len(str(keyid)) not in (8, 16):
        log.error("The keyid needs to be either 8 or 16 characters")
        return False
    names = sorted(os.listdir(folder))
    if prefer and os.path.dirname(prefer) == folder.rstrip("/") and os.path.basename(prefer) in names:
        names.insert(0, os.path.basename(prefer))
    for name in names:
        path = os.path.join(folder, name)
        if os.path.isfile(path) and any(k.endswith(str(keyid)) for k in show_keys(run, path)):
            os.unlink(path)
            return keyid
    log.error("Could not find the key file for keyid: %s", keyid)
    return False
