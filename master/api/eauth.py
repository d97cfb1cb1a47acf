"""``external_auth`` back ends: who is this user (``pam``, ``file``), and their groups.

Runs in ``briny-api``'s worker threads (PAM blocks). :func:`authenticate` answers whether
``username`` / ``password`` are right for the back end ``eauth`` of the master's
``external_auth`` map; :func:`groups` names the user's groups (for ``name%`` ACL entries).
Passwords are never logged, nor kept past the call.

- ``pam``: Linux PAM through ``ctypes`` on ``libpam.so.0`` (no dependency), the service of
  ``auth.pam.service`` (``login`` as Salt); ``pam_authenticate`` then ``pam_acct_mgmt`` (an
  expired or locked account is refused). Groups: the system's (``os.getgrouplist``).
- ``file``: Salt's ``^filename`` / ``^filetype`` options in the ``file`` entry of
  ``external_auth``. ``^filetype: text`` (default): ``user<sep>password`` lines
  (``^field_separator`` ``:``, ``^username_field`` 1, ``^password_field`` 2), the password
  in ``^hashtype`` (``plaintext`` or a ``hashlib`` name: hex digest); ``^filetype: htpasswd``:
  Apache's ``{SHA}`` and crypt(3) ``$5$`` / ``$6$`` / ``$y$`` / ``$2b$`` lines (via
  ``libcrypt``), refused with a log line for MD5 ``$apr1$`` (not supported yet). Every
  comparison is constant-time. No groups.
"""

from __future__ import annotations

import base64
import ctypes
import ctypes.util
import grp
import hashlib
import hmac
import logging
import os
import pwd
import threading
from typing import Any

log = logging.getLogger(__name__)

BACKENDS = ("pam", "file")


def plain_name(username: str) -> bool:
    """True for a username without NUL or other control characters: the system's calls (PAM in
    C, ``getpwnam``) cut a name at NUL or refuse it, so such a name could log in as another."""
    return not any(ord(c) < 32 or ord(c) == 127 for c in username)


def authenticate(opts: dict[str, Any], eauth: str, username: str, password: str) -> bool:
    """True when ``password`` is ``username``'s for the back end ``eauth`` (never for a name
    with control characters: :func:`plain_name`)."""
    if not username or not isinstance(password, str) or not password or not plain_name(username):
        return False
    if eauth == "pam":
        return pam_authenticate(username, password, str(opts.get("auth.pam.service") or "login"))
    if eauth == "file":
        return file_authenticate(_file_options(opts), username, password)
    return False


def groups(eauth: str, username: str) -> list[str]:
    """The system groups of ``username`` for ``pam`` (none for ``file``)."""
    if eauth != "pam":
        return []
    try:
        entry = pwd.getpwnam(username)
        gids = os.getgrouplist(username, entry.pw_gid)
    except (KeyError, OSError, ValueError):  # ValueError: a NUL in the name
        return []
    names = []
    for gid in gids:
        try:
            names.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            continue
    return names


# -- file -------------------------------------------------------------------------------------


def _file_options(opts: dict[str, Any]) -> dict[str, Any]:
    section = (opts.get("external_auth") or {}).get("file") or {}
    return {k[1:]: v for k, v in section.items() if isinstance(k, str) and k.startswith("^")}


def _text_password(stored: str, given: str, hashtype: str) -> bool:
    if hashtype == "plaintext":
        return hmac.compare_digest(stored.encode(), given.encode())
    try:
        digest = hashlib.new(hashtype, given.encode()).hexdigest()
    except ValueError:
        log.error("external_auth file: unknown ^hashtype %r; every login is refused", hashtype)
        return False
    return hmac.compare_digest(stored.strip().lower().encode(), digest.encode())


def _htpasswd_password(stored: str, given: str) -> bool:
    if stored.startswith("{SHA}"):
        digest = base64.b64encode(hashlib.sha1(given.encode()).digest()).decode()  # noqa: S324 - Apache's format
        return hmac.compare_digest(stored[5:].encode(), digest.encode())
    if stored.startswith(("$5$", "$6$", "$y$", "$2b$", "$2y$")):
        made = crypt(given, stored)
        return made is not None and hmac.compare_digest(made.encode(), stored.encode())
    log.error("external_auth file: a password hash briny cannot check (%s...); refused", stored[:6])
    return False


def file_authenticate(options: dict[str, Any], username: str, password: str) -> bool:
    filename = options.get("filename")
    if not filename:
        log.error("external_auth file: no '^filename' given; every login is refused")
        return False
    filetype = str(options.get("filetype") or "text")
    try:
        with open(str(filename), encoding="utf-8") as fh:
            lines = fh.read().splitlines()
    except OSError as exc:
        log.error("external_auth file: cannot read %s: %s", filename, exc.strerror)
        return False
    if filetype == "htpasswd":
        sep, ufield, pfield, hashtype = ":", 1, 2, "htpasswd"
    elif filetype == "text":
        sep = str(options.get("field_separator") or ":")
        ufield, pfield = int(options.get("username_field") or 1), int(options.get("password_field") or 2)
        hashtype = str(options.get("hashtype") or "plaintext")
    else:
        log.error("external_auth file: ^filetype %r is not supported (text, htpasswd); refused", filetype)
        return False
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        fields = line.split(sep)
        if len(fields) < max(ufield, pfield) or fields[ufield - 1] != username:
            continue
        stored = fields[pfield - 1]
        if hashtype == "htpasswd":
            return _htpasswd_password(stored, password)
        return _text_password(stored, password, hashtype)
    return False


_libcrypt: Any = None
_crypt_lock = threading.Lock()


def crypt(word: str, salt: str) -> str | None:
    """crypt(3) from libcrypt (Python 3.13 drops the ``crypt`` module); None without it."""
    global _libcrypt
    with _crypt_lock:
        if _libcrypt is None:
            name = ctypes.util.find_library("crypt")
            if name is None:
                return None
            _libcrypt = ctypes.CDLL(name)
            _libcrypt.crypt.restype = ctypes.c_char_p
            _libcrypt.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        out = _libcrypt.crypt(word.encode(), salt.encode())
    return out.decode() if out else None


# -- PAM --------------------------------------------------------------------------------------

PAM_PROMPT_ECHO_OFF = 1
PAM_PROMPT_ECHO_ON = 2
PAM_SUCCESS = 0


class _PamMessage(ctypes.Structure):
    _fields_ = [("msg_style", ctypes.c_int), ("msg", ctypes.c_char_p)]


class _PamResponse(ctypes.Structure):
    _fields_ = [("resp", ctypes.c_char_p), ("resp_retcode", ctypes.c_int)]


_CONV_FUNC = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_int,
    ctypes.POINTER(ctypes.POINTER(_PamMessage)),
    ctypes.POINTER(ctypes.POINTER(_PamResponse)),
    ctypes.c_void_p,
)


class _PamConv(ctypes.Structure):
    _fields_ = [("conv", _CONV_FUNC), ("appdata_ptr", ctypes.c_void_p)]


_pam: Any = None
_libc: Any = None


def _load_pam() -> Any:
    global _pam, _libc
    if _pam is None:
        name = ctypes.util.find_library("pam") or "libpam.so.0"
        _pam = ctypes.CDLL(name)
        _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _libc.calloc.restype = ctypes.c_void_p
        _libc.calloc.argtypes = [ctypes.c_size_t, ctypes.c_size_t]
        _libc.strdup.restype = ctypes.c_void_p
        _libc.strdup.argtypes = [ctypes.c_char_p]
        _pam.pam_start.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(_PamConv), ctypes.c_void_p]
        _pam.pam_authenticate.argtypes = [ctypes.c_void_p, ctypes.c_int]
        _pam.pam_acct_mgmt.argtypes = [ctypes.c_void_p, ctypes.c_int]
        _pam.pam_end.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return _pam


def pam_authenticate(username: str, password: str, service: str = "login") -> bool:
    """True when PAM's ``service`` accepts ``username`` with ``password`` (and the account is valid)."""
    try:
        pam = _load_pam()
    except OSError as exc:
        log.error("external_auth pam: libpam cannot be loaded (%s); every login is refused", exc)
        return False
    secret = password.encode()

    def answer(n: int, messages: Any, responses: Any, _data: Any) -> int:
        # PAM frees the answers: they are allocated with calloc/strdup, not by Python
        address = _libc.calloc(n, ctypes.sizeof(_PamResponse))
        answers = ctypes.cast(address, ctypes.POINTER(_PamResponse))
        for i in range(n):
            if messages[i].contents.msg_style in (PAM_PROMPT_ECHO_OFF, PAM_PROMPT_ECHO_ON):
                answers[i].resp = ctypes.cast(_libc.strdup(secret), ctypes.c_char_p)
                answers[i].resp_retcode = 0
        responses[0] = answers
        return PAM_SUCCESS

    conv = _CONV_FUNC(answer)  # kept referenced until pam_end: PAM calls it
    handle = ctypes.c_void_p()
    conversation = _PamConv(conv, None)
    code = pam.pam_start(service.encode(), username.encode(), ctypes.byref(conversation), ctypes.byref(handle))
    if code != PAM_SUCCESS:
        log.error("external_auth pam: pam_start(%s) failed with code %d", service, code)
        return False
    try:
        code = pam.pam_authenticate(handle, 0)
        if code == PAM_SUCCESS:
            code = pam.pam_acct_mgmt(handle, 0)
        return bool(code == PAM_SUCCESS)
    finally:
        pam.pam_end(handle, code)
