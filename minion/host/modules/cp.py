"""The ``cp`` execution module: reaching the ``salt://`` file tree from a host.

Runs on the managed host. Everything goes through the file client of the
job (:func:`briny.common.fileclient.get_client` with ``__job__``): in masterless mode
``salt://x`` resolves through ``file_roots`` on disk, under a minion the
daemon's remote client fetches from the master. Local paths are passed
through, as Salt does. Return values are Salt's: a path or ``False``, a
string or ``False``, lists of relative names; ``get_file`` the destination or
``""``, ``get_dir`` the list of files written.

Also the transfers between this host and the master: ``push`` sends a local
file to the master (its ``file_recv``, :mod:`briny.master.filerecv`),
``recv`` / ``recv_chunked`` write what ``briny-cp`` sends (Salt's forms).
"""

from __future__ import annotations

import base64
import gzip
import logging
import os
import posixpath
from pathlib import Path
from typing import TYPE_CHECKING, Any

from briny.common import config, fileclient
from briny.common.exceptions import FileServerError, SaltInvocationError
from briny.minion.host.fileops import remote

if TYPE_CHECKING:
    from briny.common.dunders import __context__, __job__, __opts__, __salt__


log = logging.getLogger(__name__)


def _saltenv(saltenv: str | None) -> str:
    if saltenv:
        return str(saltenv)
    return str(__opts__.get("saltenv") or "base")


def _client() -> Any:
    return fileclient.get_client(__opts__, __job__)


def cache_file(
    path: str,
    saltenv: str | None = None,
    source_hash: str | None = None,
    verify_ssl: bool = True,
    use_etag: bool = False,
    **kwargs: Any,
) -> str | bool:
    """A local path holding ``path`` (``salt://``, local, or an ``http(s)://`` / ``ftp://`` URL),
    or False. A URL is downloaded into the cache (``extrn_files``), or its earlier download used
    when ``source_hash`` (a hex digest) matches it; a failed download raises, as Salt's
    MinionError does (:class:`~briny.common.exceptions.FileServerError`)."""
    env = _saltenv(saltenv)
    if not path:
        return False
    if remote.is_remote(str(path)):
        dest = remote.cache_path(str(__opts__.get("cachedir") or "/var/cache/briny"), env, str(path))
        if remote.cached(dest, source_hash):
            return dest
        timeout = config.number(__opts__, "http_connect_timeout")
        return remote.fetch(str(path), dest, verify_ssl=bool(verify_ssl), timeout=timeout)
    if not str(path).startswith("salt://"):
        local = str(path)
        if local.startswith("file://"):
            local = local[len("file://") :]
        return local if os.path.isfile(local) else False
    try:
        found = _client().cache_file(path, env)
    except FileServerError as exc:
        log.error("Unable to cache file '%s' from saltenv '%s': %s", path, env, exc)
        return False
    if not found:
        log.error("Unable to cache file '%s' from saltenv '%s'.", path, env)
        return False
    return str(found)


def is_cached(path: str, saltenv: str | None = None, **kwargs: Any) -> str:
    """The local path of an earlier download of the URL ``path`` (``http(s)://``, ``ftp://``), or
    "" when there is none. ``salt://`` files are fetched through the file client on each use in
    briny, so for them this is always "" (Salt then fetches them too)."""
    if not path or not remote.is_remote(str(path)):
        return ""
    dest = remote.cache_path(str(__opts__.get("cachedir") or "/var/cache/briny"), _saltenv(saltenv), str(path))
    return dest if os.path.isfile(dest) else ""


def cache_files(paths: list[str] | str, saltenv: str | None = None, **kwargs: Any) -> list[str | bool]:
    if isinstance(paths, str):
        paths = paths.split(",")
    return [cache_file(p, saltenv) for p in paths]


def get_file_str(path: str, saltenv: str | None = None, **kwargs: Any) -> str | bool:
    """The text of ``path``, or False when it cannot be had."""
    local = cache_file(path, saltenv)
    if not local:
        return False
    try:
        with open(str(local), "rb") as fh:
            return fh.read().decode("utf-8", errors="replace")
    except OSError as exc:
        log.error("Unable to read %s: %s", local, exc)
        return False


def list_master(saltenv: str | None = None, prefix: str = "", **kwargs: Any) -> list[str]:
    """Every file of the environment, relative to the roots, under ``prefix``."""
    files = _client().list_files(_saltenv(saltenv))
    return sorted(f for f in files if f.startswith(prefix or ""))


def list_master_dirs(saltenv: str | None = None, prefix: str = "", **kwargs: Any) -> list[str]:
    """Every directory holding a file of the environment, under ``prefix``."""
    dirs: set[str] = set()
    for rel in _client().list_files(_saltenv(saltenv)):
        parts = rel.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    prefix = (prefix or "").strip("/")  # as Salt's file server: the folder named is listed too
    return sorted(d for d in dirs if d.startswith(prefix))


def list_states(saltenv: str | None = None, **kwargs: Any) -> list[str]:
    """The SLS names of the environment (``a/b.sls`` → ``a.b``)."""
    return sorted(_client().list_states(_saltenv(saltenv)))


def _template(text: str, template: str | None, saltenv: str) -> str:
    """``template=jinja`` renders the path strings themselves, as Salt's ``cp`` does."""
    if not template:
        return text
    return str(__salt__["file.apply_template_on_contents"](text, template, None, None, saltenv))


def _copy(source: str, target: Path) -> None:
    """Write ``source``'s bytes to ``target`` (atomically; untouched when already the same)."""
    data = Path(source).read_bytes()
    try:
        if target.is_file() and target.read_bytes() == data:
            return
    except OSError:
        pass
    tmp = target.with_name(f".{target.name}.{os.getpid()}.cp")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    finally:
        if tmp.exists():
            tmp.unlink()


def get_file(
    path: str,
    dest: str,
    saltenv: str | None = None,
    makedirs: bool = False,
    template: str | None = None,
    gzip: Any = None,
    **kwargs: Any,
) -> str:
    """Copy ``path`` (``salt://`` or local) to ``dest`` on this host; the destination, or ``""``.

    A ``dest`` that is a folder (or ends in ``/``) gets the file's own name;
    its parent must exist unless ``makedirs``.
    """
    env = _saltenv(saltenv)
    path, dest = _template(str(path), template, env), _template(str(dest), template, env)
    local = cache_file(path, env)
    if not local:
        return ""
    target = Path(os.path.expanduser(dest))
    if dest.endswith("/") or target.is_dir():
        target = target / posixpath.basename(path.split("?", 1)[0].rstrip("/"))
    try:
        if not target.parent.is_dir():
            if not makedirs:
                log.error(
                    "Unable to copy %s to %s: the folder %s does not exist (makedirs=True makes it)",
                    path,
                    target,
                    target.parent,
                )
                return ""
            target.parent.mkdir(parents=True, exist_ok=True)
        _copy(str(local), target)
    except OSError as exc:
        log.error("Unable to copy %s to %s: %s", path, target, exc.strerror or exc)
        return ""
    return str(target)


def get_dir(
    path: str, dest: str, saltenv: str | None = None, template: str | None = None, gzip: Any = None, **kwargs: Any
) -> list[str]:
    """Copy the folder ``salt://path`` to ``dest/<its name>/...``; the files written."""
    env = _saltenv(saltenv)
    path, dest = _template(str(path), template, env), _template(str(dest), template, env)
    src, env = fileclient.split_url(path, env)
    try:
        prefix = fileclient.clean_path(src)
    except FileServerError as exc:
        log.error("Unable to get %s: %s", path, exc)
        return []
    client = _client()
    parent = posixpath.dirname(prefix)
    under = prefix + "/" if prefix else ""
    root = Path(os.path.expanduser(dest))
    real_root = os.path.realpath(root)
    written: list[str] = []
    dirs = client.list_dirs(env) if hasattr(client, "list_dirs") else []
    for rel in [d for d in dirs if d.startswith(under)]:
        folder = root / rel[len(parent) + 1 if parent else 0 :]
        folder.mkdir(parents=True, exist_ok=True)
    for rel in client.list_files(env):
        if not rel.startswith(under):
            continue
        target = root / rel[len(parent) + 1 if parent else 0 :]
        if not os.path.realpath(target).startswith(real_root.rstrip(os.sep) + os.sep):
            log.error("Refused to write %s: it is outside %s", target, root)
            continue
        try:
            local = client.cache_file(f"salt://{rel}", env)
        except FileServerError as exc:
            log.error("Unable to get salt://%s: %s", rel, exc)
            continue
        if not local:
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            _copy(str(local), target)
        except OSError as exc:
            log.error("Unable to copy salt://%s to %s: %s", rel, target, exc.strerror or exc)
            continue
        written.append(str(target))
    return sorted(written)


def hash_file(path: str, saltenv: str | None = None, **kwargs: Any) -> dict[str, str] | bool:
    """``{"hash_type": "sha256", "hsum": ...}`` of a ``salt://`` (or local) file, or False."""
    from briny.minion.host.fileops.diff import hash_file as _hash

    env = _saltenv(saltenv)
    client = _client()
    if str(path).startswith("salt://") and hasattr(client, "hash_file"):
        try:
            found = client.hash_file(path, env)
        except FileServerError as exc:
            log.error("Unable to hash %s: %s", path, exc)
            return False
        return found or False
    local = cache_file(path, env)
    if not local:
        return False
    return {"hash_type": "sha256", "hsum": _hash(str(local), "sha256")}


def stat_file(path: str, saltenv: str | None = None, octal: bool = True) -> str | int | None:
    """The permissions of a ``salt://`` file on the file server (or of a local file): ``"0644"``
    (``octal``, as Salt prints them) or the number; None when the file is not there."""
    env = _saltenv(saltenv)
    text = str(path)
    if text.startswith("salt://"):
        try:
            mode = _client().stat_file(text, env)
        except FileServerError as exc:
            log.error("Unable to stat %s: %s", path, exc)
            return None
    else:
        local = text.removeprefix("file://")
        try:
            mode = os.stat(local).st_mode & 0o7777
        except OSError:
            return None
    if mode is None:
        return None
    return f"{mode:04o}" if octal else mode


def recv(files: dict[str, Any], dest: str, **kwargs: Any) -> dict[str, bool] | str:
    """Write the files ``briny-cp`` sends whole (``{source path: contents}``) to ``dest``, as Salt's
    ``cp.recv``: into ``dest`` when it is a folder, else as ``dest`` when its folder exists, else
    ``"Destination unavailable"``. ``{written path: True or False}``. Not for the command line."""
    if not isinstance(files, dict):
        raise SaltInvocationError("cp.recv takes the files as {path: contents} (briny-cp sends them)")
    ret: dict[str, bool] = {}
    for path, data in files.items():
        name = os.path.basename(str(path))
        if name == os.path.basename(dest) and not os.path.isdir(dest):
            final = dest
        elif os.path.isdir(dest):
            final = os.path.join(dest, name)
        elif os.path.isdir(os.path.dirname(dest) or "."):
            final = dest
        else:
            return "Destination unavailable"
        try:
            with open(final, "wb") as fh:
                fh.write(data if isinstance(data, bytes) else str(data).encode("utf-8"))
            ret[final] = True
        except OSError as exc:
            log.error("cp.recv cannot write %s: %s", final, exc.strerror)
            ret[final] = False
    return ret


def recv_chunked(
    dest: str, chunk: Any, append: bool = False, compressed: bool = True, mode: int | None = None, **kwargs: Any
) -> bool | str:
    """Write one chunk ``briny-cp -C`` sends (base64, gzip unless ``compressed`` is false) to
    ``dest``, making its folders; the first chunk replaces the file and sets ``mode``. A chunk
    of None makes ``dest`` an empty folder. True, or Salt's error text (the retcode is 1). Not
    for the command line."""

    def _error(msg: str) -> str:
        __context__["retcode"] = 1
        return msg

    if chunk is None:
        try:
            os.makedirs(dest)
        except FileExistsError:
            if os.path.isfile(dest):
                return "Path exists and is a file"
        except OSError as exc:
            return _error(str(exc))
        return True
    try:
        data = base64.b64decode(chunk)
        data = gzip.decompress(data) if compressed else data
    except (ValueError, TypeError, OSError, EOFError) as exc:
        return _error(f"the chunk for {dest} does not decode: {exc}")
    try:
        os.makedirs(os.path.dirname(dest) or ".", exist_ok=True)
        with open(dest, "ab" if append else "wb") as fh:
            fh.write(data)
        if not append and mode is not None:
            os.chmod(dest, int(mode))
    except (OSError, ValueError) as exc:
        return _error(str(exc))
    return True


def push(
    path: str,
    keep_symlinks: bool = False,
    upload_path: str | None = None,
    remove_source: bool = False,
    **kwargs: Any,
) -> bool:
    """Send the local file ``path`` to the master, as Salt's ``cp.push``: it lands in the master's
    ``cachedir/minions/<this minion's id>/files/<path>`` (``upload_path`` names another path
    there). True when the whole file arrived; False otherwise, logged with the master's reason
    (``file_recv`` is off on the master by default, files over ``file_recv_max_size`` MB are
    refused, and so is any path that is not a plain relative path once its leading ``/`` is
    removed). ``path`` must be absolute; a symlink is resolved unless ``keep_symlinks``;
    ``remove_source`` deletes the file after it was sent."""
    channel = __job__.master
    path = str(path)
    if "../" in path or not os.path.isabs(path):
        log.error("cp.push: the path must be absolute and must not climb (..): %s", path)
        return False
    if not keep_symlinks:
        path = os.path.realpath(path)
    if not os.path.isfile(path):
        log.error("cp.push: %s is not a file", path)
        return False
    target = str(upload_path) if upload_path else path
    parts = [p for p in posixpath.normpath(target.lstrip("/")).split("/") if p]
    if "../" in target or not parts or ".." in parts:
        log.error("cp.push: the upload path must not climb (..): %s", target)
        return False
    if channel is None:
        log.error("cp.push needs the master, and this minion has no connection to it")
        return False
    size = config.count(__opts__, "file_buffer_size")
    with open(path, "rb") as fh:
        loc = 0
        while True:
            data = fh.read(size)
            if not data and loc:
                break
            reply = channel({"cmd": "file_recv", "path": parts, "loc": loc, "data": data}, None)
            if reply is None or "error" in reply:
                why = "no answer" if reply is None else reply["error"]
                log.error("cp.push of %s failed: the master refused it: %s", path, why)
                return False
            loc += len(data)
            if not data:
                break
    if remove_source:
        try:
            os.remove(path)
        except OSError as exc:
            log.error("cp.push failed to remove file '%s': %s", path, exc.strerror)
            return False
    return True
