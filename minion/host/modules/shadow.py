"""Execution module ``shadow``: password hashes and ageing in ``/etc/shadow``.

Runs on the managed host. Reads parse ``/etc/shadow`` (root only); writes go
through ``chpasswd -e`` (the hash travels on stdin, never on a command
line), ``passwd -d``, ``usermod -L/-U`` and ``chage``, run by
``__salt__["cmd.run_all"]`` with a time limit and without logging their
input. Return values are Salt 3007's: ``shadow.info`` ->
``{name, passwd, lstchg, min, max, warn, inact, expire}`` (empty numeric
fields read as -1, as Python's ``spwd`` did); setters return True/False.
``shadow.gen_password`` makes a crypt(3) hash (sha512 by default).
"""

from __future__ import annotations

import logging
import os
import secrets
import string
from typing import TYPE_CHECKING, Any

from briny.common.exceptions import CommandExecutionError, SaltInvocationError

from briny.minion.host.shadowtools import TIMEOUT, run_tool

if TYPE_CHECKING:
    from briny.common.dunders import __salt__


log = logging.getLogger(__name__)

__virtualname__ = "shadow"
_SHADOW = "/etc/shadow"
_FIELDS = ("name", "passwd", "lstchg", "min", "max", "warn", "inact", "expire")
_ALGOS = {"md5": "1", "blowfish": "2a", "sha256": "5", "sha512": "6"}


def __virtual__() -> Any:
    if os.name != "posix" or not os.path.exists(_SHADOW):
        return False, "the shadow module needs /etc/shadow"
    return __virtualname__


def _run(cmd: list[str], stdin: str | None = None) -> bool:
    """Run a shadow-utils command; True when it exited 0."""
    return run_tool(__salt__, cmd, stdin)


def _num(text: str) -> int | str:
    if text == "":
        return -1
    try:
        return int(text)
    except ValueError:
        return text


def info(name: str, root: str | None = None, **kwargs: Any) -> dict[str, Any]:
    """The shadow entry of ``name``; every value empty when there is none."""
    path = os.path.join(root, _SHADOW.lstrip("/")) if root else _SHADOW
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                parts = line.rstrip("\n").split(":")
                if parts and parts[0] == str(name):
                    parts += [""] * (9 - len(parts))
                    entry: dict[str, Any] = {"name": parts[0], "passwd": parts[1]}
                    for key, raw in zip(_FIELDS[2:], parts[2:8]):
                        entry[key] = _num(raw)
                    return entry
    except OSError as exc:
        raise CommandExecutionError(f"Unable to read {path}: {exc.strerror}") from None
    return {key: "" for key in _FIELDS}


def default_hash(**kwargs: Any) -> str:
    """The hash ``useradd`` gives a new account (a locked one)."""
    return "!"


def _check(name: str, value: str) -> None:
    for text in (str(name), value):
        if ":" in text or "\n" in text:
            raise SaltInvocationError("a user name or password hash may not hold ':' or a newline")


def set_password(name: str, password: str, use_usermod: bool = False, root: str | None = None, **kwargs: Any) -> bool:
    """Set the password hash of ``name``; True when the entry holds it after."""
    password = "" if password is None else str(password)
    _check(name, password)
    if not info(name).get("name"):
        return False
    _run(["chpasswd", "-e"], stdin=f"{name}:{password}\n")
    return info(name).get("passwd") == password


def del_password(name: str, root: str | None = None, **kwargs: Any) -> bool:
    """Empty the password of ``name`` (a login without password)."""
    _run(["passwd", "-d", str(name)])
    return info(name).get("passwd") == ""


def lock_password(name: str, root: str | None = None, **kwargs: Any) -> bool:
    _run(["usermod", "-L", str(name)])
    return str(info(name).get("passwd", "")).startswith("!")


def unlock_password(name: str, root: str | None = None, **kwargs: Any) -> bool:
    _run(["usermod", "-U", str(name)])
    return not str(info(name).get("passwd", "")).startswith("!")


def _chage(name: str, flag: str, key: str, value: Any) -> bool:
    _run(["chage", flag, str(value), str(name)])
    return str(info(name).get(key)) == str(value)


def set_date(name: str, date: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _run(["chage", "-d", str(date), str(name)])


def set_mindays(name: str, mindays: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chage(name, "-m", "min", mindays)


def set_maxdays(name: str, maxdays: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chage(name, "-M", "max", maxdays)


def set_inactdays(name: str, inactdays: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chage(name, "-I", "inact", inactdays)


def set_warndays(name: str, warndays: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _chage(name, "-W", "warn", warndays)


def set_expire(name: str, expire: Any, root: str | None = None, **kwargs: Any) -> bool:
    return _run(["chage", "-E", str(expire), str(name)])


def gen_password(password: str, crypt_salt: str | None = None, algorithm: str = "sha512", **kwargs: Any) -> str:
    """A crypt(3) hash of ``password`` (salt random unless given)."""
    algo = _ALGOS.get(str(algorithm).lower())
    if algo is None:
        raise SaltInvocationError(f"Algorithm '{algorithm}' is not supported")
    if not crypt_salt:
        alphabet = string.ascii_letters + string.digits + "./"
        crypt_salt = "".join(secrets.choice(alphabet) for _ in range(16))
    setting = f"${algo}${crypt_salt}"
    try:
        import crypt  # deprecated in 3.11, gone in 3.13
    except ImportError:
        crypt = None  # type: ignore[assignment]  # no module: the fallback below
    if crypt is not None:
        hashed = crypt.crypt(str(password), setting)
        if hashed:
            return hashed
    if algo not in ("1", "5", "6"):
        raise CommandExecutionError("no crypt implementation for this algorithm on this host")
    res = __salt__["cmd.run_all"](
        ["openssl", "passwd", f"-{algo}", "-salt", crypt_salt, "-stdin"],
        stdin=str(password),
        python_shell=False,
        timeout=TIMEOUT,
        ignore_retcode=True,
        output_loglevel="quiet",
    )
    if res.get("retcode") != 0:
        raise CommandExecutionError("could not hash the password: openssl passwd failed")
    return str(res["stdout"]).strip()
