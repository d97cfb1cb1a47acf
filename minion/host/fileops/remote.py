"""Files from ``http://``, ``https://`` and ``ftp://`` URLs, cached on the host as Salt caches them.

Runs on the managed host, called by ``cp.cache_file`` (and so by
``file.managed`` sources and ``source_hash`` files). A download lands in
``<cachedir>/extrn_files/<saltenv>/<host>/<path>`` (Salt's place), written
to ``<dest>.part`` and renamed, so a failed download never leaves a partial
file under the final name. Failures raise :class:`FileServerError` worded
as Salt 3007's (``Error: <reason> reading <path>`` for HTTP, ``Could not
retrieve <url> from FTP server. Exception: ...`` for FTP); the callers add
Salt's ``Failed to cache <url>: `` in front. User and password in the URL
are sent as HTTP basic auth (or the FTP login) and never appear in messages.
``s3://`` and ``swift://`` are not supported (named as such).
"""

from __future__ import annotations

import base64
import ftplib  # nosec - plain FTP sources are what the user asked for
import hashlib
import os
import ssl
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from briny.common.exceptions import FileServerError

SCHEMES = ("http", "https", "ftp")
UNSUPPORTED = ("s3", "swift")
MAX_NAME = 255
CHUNK = 1 << 16


def is_remote(url: str) -> bool:
    """Whether ``url`` is one this module fetches (or one briny names as unsupported)."""
    return urllib.parse.urlparse(str(url)).scheme in SCHEMES + UNSUPPORTED


def redact(url: str) -> str:
    """``url`` with the password of ``user:password@`` replaced, as Salt shows URLs."""
    parts = urllib.parse.urlparse(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":XXXXXXXXXX@", 1)
    return urllib.parse.urlunparse(parts._replace(netloc=netloc))


def cache_path(cachedir: str, saltenv: str, url: str) -> str:
    """Where Salt keeps a download of ``url``: ``extrn_files/<saltenv>/<host>/<path>`` (a query
    string joined with ``-``; a name too long for the file system replaced by its sha256)."""
    parts = urllib.parse.urlparse(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    name = parts.path or "/index.html"
    if name.endswith("/"):
        name += "index.html"
    if parts.query:
        name = f"{name}-{parts.query}"
    if len(os.path.basename(name)) > MAX_NAME:
        name = os.path.join(os.path.dirname(name), hashlib.sha256(name.encode()).hexdigest())
    clean = os.path.normpath("/" + name).lstrip("/")  # never above the host's folder
    return os.path.join(cachedir, "extrn_files", saltenv, host, clean)


def _http(url: str, dest: str, verify_ssl: bool, timeout: float) -> None:
    parts = urllib.parse.urlparse(url)
    headers = {"User-Agent": "Salt/3007 (briny)"}
    if parts.username is not None:
        token = f"{urllib.parse.unquote(parts.username)}:{urllib.parse.unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(token.encode()).decode()
        host = parts.hostname or ""
        url = urllib.parse.urlunparse(parts._replace(netloc=f"{host}:{parts.port}" if parts.port else host))
    context = None
    if parts.scheme == "https" and not verify_ssl:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    req = urllib.request.Request(url, headers=headers)  # noqa: S310 - http(s) only: fetch checked the scheme
    try:
        # the scheme is http(s): fetch checked it
        with urllib.request.urlopen(req, timeout=timeout, context=context) as resp, open(dest, "wb") as fh:  # noqa: S310
            fh.writelines(iter(lambda: resp.read(CHUNK), b""))
    except urllib.error.HTTPError as exc:
        raise FileServerError(f"Error: HTTP {exc.code}: {exc.reason} reading {parts.path}") from None
    except urllib.error.URLError as exc:
        raise FileServerError(f"Error: {exc.reason} reading {parts.path}") from None
    except OSError as exc:  # a timeout or a reset while reading
        raise FileServerError(f"Error: {exc} reading {parts.path}") from None


def _ftp_session(parts: urllib.parse.ParseResult, timeout: float) -> ftplib.FTP:
    """An FTP session with the URL's server, logged in (anonymous unless the URL names a user);
    closed again when the login fails. Use it as a context manager (QUIT, then close)."""
    ftp = ftplib.FTP(timeout=timeout)  # noqa: S321 - an ftp:// source, as Salt takes them
    try:
        ftp.connect(parts.hostname or "", parts.port or 21)
        ftp.login(parts.username or "anonymous", parts.password or "")
    except BaseException:
        ftp.close()
        raise
    return ftp


def _ftp(url: str, dest: str, timeout: float) -> None:
    parts = urllib.parse.urlparse(url)
    try:
        with _ftp_session(parts, timeout) as ftp, open(dest, "wb") as fh:
            ftp.retrbinary(f"RETR {parts.path.lstrip('/')}", fh.write)
    except (OSError, ftplib.Error, EOFError) as exc:
        raise FileServerError(f"Could not retrieve {redact(url)} from FTP server. Exception: {exc}") from None


def fetch(url: str, dest: str, verify_ssl: bool = True, timeout: float = 20.0) -> str:
    """Download ``url`` to ``dest`` (folders made, written whole or not at all); ``dest``."""
    scheme = urllib.parse.urlparse(url).scheme
    if scheme in UNSUPPORTED:
        raise FileServerError(f"Remote source {redact(url)}: {scheme}:// sources are not supported by briny")
    if scheme not in SCHEMES:
        raise FileServerError(f"Unsupported URL {redact(url)}")
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    part = f"{dest}.part"
    try:
        if scheme == "ftp":
            _ftp(url, part, timeout)
        else:
            _http(url, part, verify_ssl, timeout)
        os.replace(part, dest)
    finally:
        if os.path.exists(part):
            os.unlink(part)
    return dest


def probe(url: str, timeout: float = 20.0) -> bool:
    """Whether ``url`` answers (an HTTP ``HEAD`` without error; FTP: the file is listed), as
    Salt checks each candidate of a ``source`` list."""
    parts = urllib.parse.urlparse(url)
    if parts.scheme == "ftp":
        try:
            with _ftp_session(parts, timeout) as ftp:
                ftp.size(parts.path.lstrip("/"))
            return True
        except (OSError, ftplib.Error, EOFError):
            return False
    if parts.scheme not in ("http", "https"):
        return False
    try:
        head = urllib.request.Request(url, method="HEAD")  # noqa: S310 - http(s) only, checked above
        with urllib.request.urlopen(head, timeout=timeout):  # noqa: S310 - http(s) only, checked above
            return True
    except (OSError, ValueError):
        return False


def cached(path: str, source_hash: Any = None) -> bool:
    """Whether the download at ``path`` can be used again: present and, when ``source_hash``
    (a bare hex digest) is given, with that hash."""
    if not os.path.isfile(path):
        return False
    if not source_hash:
        return False
    hsum = str(source_hash).split("=", 1)[-1].lower()
    form = {32: "md5", 40: "sha1", 56: "sha224", 64: "sha256", 96: "sha384", 128: "sha512"}.get(len(hsum))
    if form is None:
        return False
    h = hashlib.new(form)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest() == hsum
