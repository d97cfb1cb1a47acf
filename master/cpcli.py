"""``briny-cp``: copy local files of the master host to targeted minions, like ``salt-cp``.

Runs on the master host, as the operator, in one synchronous process: it
publishes jobs through the running master (:class:`MasterClient`) and waits
for the returns as ``briny`` does (:class:`briny.master.waiter.Waiter`).

Usage: ``briny-cp [-c DIR] [-L|-G|-E|-C...] TARGET SOURCE [SOURCE ...] DEST``.
As Salt 3007's ``salt-cp``:

- by default each file goes whole in one job (``cp.recv``): folders are
  refused (``... is a directory, only files are supported in non-chunked
  mode. Use "--chunked" command line argument.``, exit 1); the minion writes
  into ``DEST`` when it is a folder, else as ``DEST`` when its folder exists,
  else answers ``Destination unavailable``;
- ``-C/--chunked``: files and folders (recursively, empty folders too), one
  ``cp.recv_chunked`` job per chunk of ``salt_cp_chunk_size`` bytes (the
  master config's, default 98304),
  gzip-compressed unless ``-n/--no-compression``, each file's mode kept;
  ``DEST`` is a folder when it ends in ``/``, or several files (or a folder)
  are sent; a file under a folder ``SRC`` lands at ``DEST/<name of SRC>/<its
  path in SRC>``;
- the output is ``{minion: {path on the minion: True or the error}}``
  through ``--out`` (``nested`` by default).

As in ``salt-cp``, ``-C`` means ``--chunked`` here, so there is no compound
targeting. A difference, on purpose: the exit status is 1 when a minion did
not return or a file failed (Salt's is always 0).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import logging
import os
import stat
import sys
from collections.abc import Iterator, Sequence
from typing import Any, TextIO

from briny.common import config, logsetup, saltonly, versions
from briny.common.cliargs import add_config_dir, config_dir
from briny.common.config import load_master_config
from briny.common.exceptions import BrinyError, MasterError, MasterNotRunning, UsageError
from briny.common.numbers import positive
from briny.master.clientapi import MasterClient
from briny.master.opcli import CliParser, add_target_flags
from briny.master.opresults import MinionResult
from briny.master.waiter import Waiter

log = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    p = CliParser(prog="briny-cp", description="Copy local files to targeted minions (salt-cp).")
    add_config_dir(p, "master")
    add_target_flags(p, skip=("-C",))  # -C is --chunked here, as in salt-cp
    p.add_argument("-t", "--timeout", type=float, help="seconds to wait for the minions (default: 'timeout', 5)")
    p.add_argument("-C", "--chunked", action="store_true", help="send in chunks: big files and folders")
    p.add_argument("-n", "--no-compression", dest="no_compression", action="store_true", help="chunks uncompressed")
    p.add_argument("--out", "--output", dest="out", help="outputter (default nested)")
    p.add_argument("--out-indent", "--output-indent", dest="out_indent", type=int)
    p.add_argument("--out-file", "--output-file", dest="out_file")
    p.add_argument("--out-file-append", "--output-file-append", dest="out_file_append", action="store_true")
    p.add_argument("--no-color", "--no-colour", dest="no_color", action="store_true")
    p.add_argument("--force-color", "--force-colour", dest="force_color", action="store_true")
    logsetup.add_arguments(p)
    versions.add_arguments(p)
    saltonly.add(p, saltonly.BRINY_CP)  # refused by name (-H, --delimiter ...), before anything is sent
    p.add_argument("tgt", help="the target")
    p.add_argument("paths", nargs="+", metavar="PATH", help="SOURCE [SOURCE ...] DEST")
    return p


def list_files(sources: Sequence[str]) -> tuple[dict[str, int], list[str]]:
    """({file: mode}, [empty folder]) of the sources, folders walked (symlinks not followed)."""
    files: dict[str, int] = {}
    empty: list[str] = []
    for src in sources:
        if os.path.isfile(src):
            files[src] = stat.S_IMODE(os.stat(src).st_mode)
        elif os.path.isdir(src):
            for root, dirs, names in os.walk(src):
                if not dirs and not names:
                    empty.append(root)
                for name in sorted(names):
                    path = os.path.join(root, name)
                    if os.path.isfile(path) and not os.path.islink(path):
                        files[path] = stat.S_IMODE(os.lstat(path).st_mode)
        else:
            raise UsageError(f"briny-cp: {src} does not exist or is not a file or folder")
    return files, empty


def remote_path(path: str, sources: Sequence[str], dest: str, dest_is_dir: bool) -> str:
    """Where ``path`` (a source, or a file under a source folder) lands on the minions."""
    if path in sources:
        return os.path.join(dest, os.path.basename(path)) if dest_is_dir else dest
    for src in sources:
        rel = os.path.relpath(path, src)
        if not rel.startswith(".." + os.sep) and rel != "..":
            return os.path.join(dest, os.path.basename(os.path.normpath(src)), rel)
    raise UsageError(f"briny-cp: {path} is not under a source")  # pragma: no cover - list_files walks sources


def chunks(path: str, size: int, compress: bool) -> Iterator[str]:
    """The file's chunks as ``cp.recv_chunked`` takes them (base64 of gzip unless not
    ``compress``); an empty file is one empty chunk."""
    with open(path, "rb") as fh:
        first = True
        while True:
            data = fh.read(size)
            if not data and not first:
                return
            first = False
            yield base64.b64encode(gzip.compress(data) if compress else data).decode("ascii")
            if not data:
                return


def _gather(
    waiter: Waiter, client: MasterClient, tgt: Any, tgt_type: str, fun: str, arg: list[Any]
) -> dict[str, MinionResult]:
    pub = client.publish(tgt, fun, arg, {}, tgt_type, waiter.timeout)
    if not pub.get("minions"):
        return {}
    waiter.add_job(pub["jid"], fun, pub["minions"])
    got: dict[str, MinionResult] = {}
    while waiter.active:
        for res in waiter.poll():
            got[res.id] = res
    return got


def _copy(ns: argparse.Namespace, waiter: Waiter, client: MasterClient) -> dict[str, Any]:
    sources, dest = list(ns.paths[:-1]), ns.paths[-1]
    tgt, tgt_type = ns.tgt, ns.tgt_type or "glob"
    if not ns.chunked:
        whole: dict[str, bytes] = {}
        for src in sources:
            if os.path.isdir(src):
                raise UsageError(
                    f'{src} is a directory, only files are supported in non-chunked mode. Use "--chunked" '
                    "command line argument."
                )
            try:
                with open(src, "rb") as fh:
                    whole[src] = fh.read()
            except OSError as exc:
                raise UsageError(f"briny-cp: cannot read {src}: {exc.strerror}") from None
        return {m: r.ret for m, r in _gather(waiter, client, tgt, tgt_type, "cp.recv", [whole, dest]).items()}
    files, empty = list_files(sources)
    dest_is_dir = bool(empty) or len(files) > 1 or dest.endswith("/")
    size = config.count(waiter.opts, "salt_cp_chunk_size")
    out: dict[str, dict[str, Any]] = {}
    for path, mode in files.items():
        where = remote_path(path, sources, dest, dest_is_dir)
        failed: dict[str, Any] = {}
        for index, chunk in enumerate(chunks(path, size, not ns.no_compression)):
            arg = [where, chunk, index > 0, not ns.no_compression, mode]
            for minion, res in _gather(waiter, client, tgt, tgt_type, "cp.recv_chunked", arg).items():
                out.setdefault(minion, {})[where] = res.ret
                if res.ret is not True and minion not in failed:
                    failed[minion] = res.ret
        for minion, why in failed.items():
            out[minion][where] = why
    for folder in empty:
        where = remote_path(folder, sources, dest, True)
        for minion, res in _gather(waiter, client, tgt, tgt_type, "cp.recv_chunked", [where, None]).items():
            out.setdefault(minion, {})[where] = res.ret
    return out


def _failed(ret: Any) -> bool:
    if isinstance(ret, dict):
        return any(v is not True for v in ret.values())
    return True


def run(argv: Sequence[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    stdout = stdout or sys.stdout
    stderr = stderr or sys.stderr
    try:
        ns = build_parser().parse_args(list(sys.argv[1:] if argv is None else argv))
        saltonly.refuse("briny-cp", ns, "nothing was sent")
        if len(ns.paths) < 2:
            raise UsageError("briny-cp: give a target, one or more sources and a destination")
        logsetup.setup_console(ns.log_level, stream=stderr)
        opts = load_master_config(config_dir(ns.config_dir, required=True))
        opts.update(logsetup.cli_overrides(ns))
        logsetup.setup_logging(opts, console_level=ns.log_level, stream=stderr)
        if ns.no_color or ns.out_file:
            opts["no_color"] = True
        if ns.force_color:
            opts["force_color"] = True
        if ns.out_indent is not None:
            opts["output_indent"] = ns.out_indent
    except BrinyError as exc:
        stderr.write(f"{exc}\n")
        return 2
    timeout = positive(ns.timeout, None) or config.number(opts, "timeout")
    client = MasterClient(opts)
    listener = None
    try:
        client.check_running()
        from briny.common.event import EventListener
        from briny.common.output import render_output

        listener = EventListener(opts, "salt/job/*/ret/*", name="master")
        listener.wait_ready()  # subscribed before anything can return (the job cache covers a miss)
        waiter = Waiter(client, listener, opts, timeout, config.number(opts, "gather_job_timeout"))
        ret = _copy(ns, waiter, client)
        if not ret:
            stdout.write("No minions matched the target. No command was sent, no jid was assigned.\n")
            return 2
        text = render_output(ret, ns.out or "nested", opts)
        if ns.out_file:
            with open(ns.out_file, "a" if ns.out_file_append else "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        else:
            stdout.write(text + "\n")
    except UsageError as exc:
        stdout.write(f"{exc}\n")
        return 1
    except (MasterNotRunning, MasterError, OSError, KeyboardInterrupt) as exc:
        stderr.write(f"briny-cp: {str(exc) or 'interrupted'}\n")
        return 2 if isinstance(exc, (MasterNotRunning, MasterError)) else 1
    finally:
        if listener is not None:
            listener.close()
        client.close()
    return 1 if any(_failed(v) for v in ret.values()) else 0
