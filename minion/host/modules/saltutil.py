"""The ``saltutil`` execution module: jobs on this host, syncing custom modules, refreshes, runners.

Runs in a job of the minion daemon (a process of its own with
``multiprocessing: True``, a worker thread without), or in ``briny-call``.
Jobs are read from ``cachedir/proc/<jid>`` (JSON records the executor keeps
while a job runs, with the job's own pid). A job of the daemon is
signalled by the daemon, through ``__job__.jobs``: a job process and every
process it started get the signal; a thread job is stopped in its thread
instead of signalling the minion itself. A job in another process
(``briny-call``) is signalled by pid, with its descendants, as Salt does.

Syncing (masterless, as ``salt-call --local`` does): ``_modules``,
``_states``, ``_grains``, ... from the file roots are copied into
``extension_modules/<kind>/``; files no longer in the roots are removed.
The return lists what changed, Salt's way (``["modules.mymod"]``). briny loads the synced
``modules``, ``states`` and ``grains``; the other kinds (``_renderers``, ``_returners``,
``_utils``, ...) are copied as Salt copies them and named in a warning: nothing loads them yet.

``saltutil.runner`` runs a runner on the master's host, in a ``briny-run``
process of its own with the master's config from beside the minion's (never
by asking the master: README.md, "Runners from a minion").
"""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from briny.common import modfolders
from briny.common.atomicfile import write_atomic
from briny.common.exceptions import BrinyError, CommandExecutionError, SaltInvocationError

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__


log = logging.getLogger(__name__)

# sync_all's keys, in Salt's order; value: the folder in the file roots
SYNC_KINDS: dict[str, str] = {
    "tops": "_tops",
    "clouds": "_clouds",
    "beacons": "_beacons",
    "modules": "_modules",
    "states": "_states",
    "sdb": "_sdb",
    "grains": "_grains",
    "renderers": "_renderers",
    "returners": "_returners",
    "output": "_output",
    "utils": "_utils",
    "log_handlers": "_log_handlers",
    "executors": "_executors",
    "proxymodules": "_proxy",
    "engines": "_engines",
    "thorium": "_thorium",
    "serializers": "_serializers",
    "matchers": "_matchers",
    "pillar": "_pillar",
    "wrapper": "_wrapper",
}
SYNC_SUFFIXES = (".py", ".pyx", ".so")
# the custom kinds briny loads after a sync; the others are copied as Salt copies them, and a
# warning says they have no effect yet (docs/not-yet.md)
LOADED_KINDS = ("modules", "states", "grains")


# -- running jobs -----------------------------------------------------------------------------


def _proc_dir() -> Path:
    return Path(str(__opts__.get("cachedir") or "")) / "proc"


def _pid_alive(pid: Any) -> bool:
    try:
        pid = int(pid)
    except (TypeError, ValueError):
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_proc(path: Path) -> dict[str, Any] | None:
    """A proc record, or None (and the file removed) when its job is gone."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        log.debug("unreadable proc file %s", path)
        return None
    if not isinstance(data, dict) or "jid" not in data:
        return None
    stale = not _pid_alive(data.get("pid"))
    registry = __job__.jobs
    if not stale and registry is not None and data.get("pid") == os.getpid():
        stale = str(data["jid"]) not in registry.snapshot()
    if stale:
        try:
            path.unlink()
        except OSError:
            pass
        return None
    return data


def _current_jid() -> str | None:
    return __job__.jid or None


def running() -> list[dict[str, Any]]:
    """The jobs running on this host, except the one asking: ``[{jid, fun, arg, pid, ...}]``.

    The proc folder's records, and the minion daemon's own jobs from its job registry (a job
    that has not run ``proc_file_delay`` seconds yet has no proc file: :mod:`briny.minion.procfiles`)."""
    proc = _proc_dir()
    me = _current_jid()
    jobs = []
    for path in sorted(proc.iterdir()) if proc.is_dir() else []:
        if path.name.startswith("."):
            continue
        data = _read_proc(path)
        if data is None or str(data.get("jid")) == me:
            continue
        data.pop("tid", None)
        jobs.append(data)
    registry = __job__.jobs
    if registry is not None:
        seen = {str(data.get("jid")) for data in jobs}
        for jid, job in sorted(registry.snapshot().items()):
            if jid in seen or jid == me:
                continue
            data = {**job.record, "jid": jid, "fun": job.fun, "pid": job.pid}
            data.pop("tid", None)
            jobs.append(data)
        jobs.sort(key=lambda data: str(data.get("jid")))
    return jobs


def find_job(jid: Any) -> dict[str, Any]:
    """The running job ``jid`` (its proc record), or ``{}`` when it is not running."""
    for data in running():
        if str(data.get("jid")) == str(jid):
            return data
    return {}


def is_running(fun: str) -> list[dict[str, Any]]:
    """The running jobs whose function matches the glob ``fun`` (``state.*``)."""
    return [data for data in running() if fnmatch.fnmatch(str(data.get("fun", "")), str(fun))]


def signal_job(jid: Any, sig: Any) -> str:
    """Send signal ``sig`` to job ``jid`` and to every process it started; ``""`` when no such job
    runs.

    A job of the minion daemon is signalled by the daemon (``__job__.jobs``): a job process gets
    ``sig``; a job in a thread of the minion (``multiprocessing: False``) stops on SIGKILL,
    SIGTERM or SIGINT, and the minion itself is never signalled. A job in another process
    (``briny-call --local``) gets ``sig`` by its pid, as Salt does.
    """
    from briny.minion.host.procs import signal_tree

    try:
        signum = int(sig)
    except (TypeError, ValueError):
        raise SaltInvocationError(f"signal must be a number, not {sig!r}") from None
    jid = str(jid)
    for data in running():
        if str(data.get("jid")) != jid:
            continue
        registry = __job__.jobs
        msg = registry.signal(jid, signum) if registry is not None else None
        if msg is not None:
            return msg
        pid = int(data.get("pid", 0))
        if pid == os.getpid():
            return f"Job {jid} runs in this process and cannot be signalled from here"
        try:
            signal_tree(pid, signum)
        except ProcessLookupError:
            try:
                (_proc_dir() / jid).unlink()
            except OSError:
                pass
            return f"Job {jid} was not running and job data has been cleaned up"
        except PermissionError as exc:
            raise CommandExecutionError(f"cannot signal job {jid} at pid {pid}: {exc.strerror}") from None
        return f"Signal {signum} sent to job {jid} at pid {pid}"
    return ""


def kill_job(jid: Any) -> str:
    """Stop job ``jid`` (SIGKILL)."""
    return signal_job(jid, signal.SIGKILL)


def term_job(jid: Any) -> str:
    """Stop job ``jid`` (SIGTERM)."""
    return signal_job(jid, signal.SIGTERM)


def kill_all_jobs() -> list[str]:
    """Stop every running job but this one (SIGKILL)."""
    return [signal_job(data["jid"], signal.SIGKILL) for data in running()]


def term_all_jobs() -> list[str]:
    """Stop every running job but this one (SIGTERM)."""
    return [signal_job(data["jid"], signal.SIGTERM) for data in running()]


# -- refreshes ----------------------------------------------------------------------------------


def refresh_pillar(wait: bool = False, timeout: Any = 30, clean_cache: bool = True, **kwargs: Any) -> bool:
    """Render this host's pillar afresh for the next jobs. False without a minion daemon
    (as ``salt-call --local``: nothing keeps pillar between calls)."""
    hook = __job__.refresh_pillar
    if not callable(hook):
        return False
    return bool(hook())


def refresh_grains(**kwargs: Any) -> bool:
    """Detect grains afresh (and send them to the master)."""
    hook = __job__.refresh_grains
    if callable(hook):
        return bool(hook())
    return True


def refresh_modules(**kwargs: Any) -> bool:
    """The next job reads the custom module folders again (:mod:`briny.common.modfolders`; each
    job loads its modules afresh), in this process and in the minion daemon's."""
    _modules_changed()
    return True


def _modules_changed() -> None:
    """The custom module folders changed: forget their listings here, and tell the daemon when
    this job runs in a process of its own (its thread jobs, beacons and reactor would otherwise
    keep listing a removed module, and find a new one only on a miss)."""
    modfolders.forget()
    hook = __job__.modules_changed
    if callable(hook):
        try:
            hook()
        except BrinyError as exc:  # the daemon went away: what the sync wrote stays written
            log.warning("could not tell the minion daemon its modules changed: %s", exc)


# -- sync -----------------------------------------------------------------------------------------


def _saltenvs(saltenv: Any, client: Any) -> list[str]:
    if saltenv is None:
        saltenv = __opts__.get("saltenv")
    if not saltenv:
        envs = list(client.envs())
        return envs or ["base"]
    if isinstance(saltenv, (list, tuple)):
        return [str(e) for e in saltenv]
    return [e.strip() for e in str(saltenv).split(",") if e.strip()]


def _listed(value: Any, kind: str) -> list[str] | None:
    """The names given for ``kind`` in an extmod white/blacklist (``{"modules": [...]}`` or a
    comma list), or None when the list does not restrict it."""
    if not value:
        return None
    if isinstance(value, str):
        value = {kind: value.split(",")}
    if isinstance(value, dict):
        names = value.get(kind)
        if names is None:
            return None
        return [str(n).strip() for n in (names.split(",") if isinstance(names, str) else names)]
    raise SaltInvocationError("extmod_whitelist and extmod_blacklist must be maps of kind to names")


def _sync(kind: str, saltenv: Any = None, extmod_whitelist: Any = None, extmod_blacklist: Any = None) -> list[str]:
    from briny.common.fileclient import get_client

    if kind not in SYNC_KINDS:
        raise SaltInvocationError(f"cannot sync {kind!r}: one of {', '.join(SYNC_KINDS)}")
    base = __opts__.get("extension_modules")
    if not base:
        raise CommandExecutionError("extension_modules is not set in the minion config")
    dest = Path(str(base)) / kind
    client = get_client(__opts__, __job__)
    source_dir = SYNC_KINDS[kind] + "/"
    white, black = _listed(extmod_whitelist, kind), _listed(extmod_blacklist, kind)
    wanted: dict[str, tuple[str, str]] = {}  # file name -> (saltenv, rel path); first env wins
    for env in _saltenvs(saltenv, client):
        for rel in client.list_files(env):
            if not rel.startswith(source_dir) or not rel.endswith(SYNC_SUFFIXES):
                continue
            name = rel[len(source_dir) :]
            if "/" in name or name.startswith("."):
                continue
            stem = name.rsplit(".", 1)[0]
            if (white is not None and stem not in white) or (black is not None and stem in black):
                continue
            wanted.setdefault(name, (env, rel))
    changed: list[str] = []
    for name, (env, rel) in sorted(wanted.items()):
        local = client.cache_file(f"salt://{rel}", env)
        if local is None:
            log.warning("could not fetch salt://%s from saltenv %s", rel, env)
            continue
        data = Path(local).read_bytes()
        target = dest / name
        try:
            if target.is_file() and target.read_bytes() == data:
                continue
            dest.mkdir(parents=True, exist_ok=True, mode=0o700)
            write_atomic(target, data, 0o600)
        except OSError as exc:
            raise CommandExecutionError(f"cannot write {target}: {exc.strerror}") from None
        changed.append(f"{kind}.{name.rsplit('.', 1)[0]}")
    if dest.is_dir() and __opts__.get("clean_dynamic_modules", True):
        for path in sorted(dest.iterdir()):
            if path.is_file() and path.name.endswith(SYNC_SUFFIXES) and path.name not in wanted:
                if white is not None and path.name.rsplit(".", 1)[0] not in white:
                    continue
                try:
                    path.unlink()
                except OSError as exc:
                    log.warning("could not remove %s: %s", path, exc.strerror)
                    continue
                changed.append(f"{kind}.{path.name.rsplit('.', 1)[0]}")
    if changed:
        _modules_changed()  # the next loader reads extension_modules again
    if changed and kind not in LOADED_KINDS:
        log.warning(
            "saltutil.sync_%s copied %s, but briny does not load custom %s yet: they have no effect (docs/not-yet.md)",
            kind,
            ", ".join(sorted(set(changed))),
            kind,
        )
    return sorted(set(changed))


def _after_sync(kind: str, changed: list[str], refresh: bool) -> list[str]:
    if changed and refresh and kind == "grains":
        refresh_grains()
    return changed


def sync_modules(
    saltenv: Any = None, refresh: bool = True, extmod_whitelist: Any = None, extmod_blacklist: Any = None
) -> list[str]:
    """Copy ``_modules`` from the file roots into ``extension_modules/modules``."""
    return _after_sync("modules", _sync("modules", saltenv, extmod_whitelist, extmod_blacklist), refresh)


def sync_states(
    saltenv: Any = None, refresh: bool = True, extmod_whitelist: Any = None, extmod_blacklist: Any = None
) -> list[str]:
    """Copy ``_states`` from the file roots into ``extension_modules/states``."""
    return _after_sync("states", _sync("states", saltenv, extmod_whitelist, extmod_blacklist), refresh)


def sync_grains(
    saltenv: Any = None, refresh: bool = True, extmod_whitelist: Any = None, extmod_blacklist: Any = None
) -> list[str]:
    """Copy ``_grains`` from the file roots into ``extension_modules/grains`` (then refresh grains)."""
    return _after_sync("grains", _sync("grains", saltenv, extmod_whitelist, extmod_blacklist), refresh)


def sync_utils(
    saltenv: Any = None, refresh: bool = True, extmod_whitelist: Any = None, extmod_blacklist: Any = None
) -> list[str]:
    """Copy ``_utils`` from the file roots into ``extension_modules/utils``."""
    return _sync("utils", saltenv, extmod_whitelist, extmod_blacklist)


def sync_renderers(
    saltenv: Any = None, refresh: bool = True, extmod_whitelist: Any = None, extmod_blacklist: Any = None
) -> list[str]:
    """Copy ``_renderers`` from the file roots into ``extension_modules/renderers``."""
    return _sync("renderers", saltenv, extmod_whitelist, extmod_blacklist)


def sync_returners(
    saltenv: Any = None, refresh: bool = True, extmod_whitelist: Any = None, extmod_blacklist: Any = None
) -> list[str]:
    """Copy ``_returners`` from the file roots into ``extension_modules/returners``."""
    return _sync("returners", saltenv, extmod_whitelist, extmod_blacklist)


def sync_all(
    saltenv: Any = None,
    refresh: bool = True,
    clean_pillar_cache: bool = False,
    extmod_whitelist: Any = None,
    extmod_blacklist: Any = None,
) -> dict[str, list[str]]:
    """Sync every kind of custom module; ``{kind: [changed ...]}`` in Salt's order."""
    ret = {kind: _sync(kind, saltenv, extmod_whitelist, extmod_blacklist) for kind in SYNC_KINDS}
    _after_sync("grains", ret["grains"], refresh)
    if refresh:
        refresh_pillar()
    return ret


# -- runners on the master's host -------------------------------------------------------------


def runner(
    name: str,
    arg: Any = None,
    kwarg: Any = None,
    full_return: bool = False,
    saltenv: str = "base",
    jid: Any = None,
    **kwargs: Any,
) -> Any:
    """Run the runner ``name`` (``jobs.list_jobs``) here, with the master's configuration, as Salt's
    ``saltutil.runner`` does on the master's host (``salt-call saltutil.runner``, or a job sent to
    the minion that runs beside the master).

    ``arg`` (a list) and ``kwarg`` (a dict) are the runner's arguments; other keyword arguments
    join ``kwarg``. ``saltenv`` goes to a runner that takes one. ``full_return`` wraps the answer
    as Salt does: ``{"fun": "runner.NAME", "jid", "user", "fun_args", "return", "success"}``.

    The runner runs in a ``briny-run`` process of its own (``python -m briny.master.runcli``),
    reading ``master`` beside this minion's config file: this host must be the master's, and the
    caller must be able to read what ``briny-run`` reads. A minion never asks its master to run a
    runner, so a minion elsewhere gains nothing (README.md, "Runners from a minion").
    """
    if not isinstance(name, str) or not name:
        raise SaltInvocationError("saltutil.runner needs the name of a runner, as module.function")
    args = _runner_list(arg)
    kw = _runner_dict(kwarg)
    user = kwargs.get("__pub_user", "UNKNOWN")
    saltenv = kwargs.get("__env__", saltenv)
    if kwargs.get("__orchestration_jid__", jid) is not None:
        log.warning("saltutil.runner: 'jid' is not supported: no salt/run/<jid>/args event is fired")
    kw.update({k: v for k, v in kwargs.items() if not k.startswith("__")})
    conf_dir = _master_conf_dir()
    ok, value = _run_runner(conf_dir, name, args, kw, saltenv)
    if not full_return:
        return value
    from briny.common.jid import gen_jid

    return {
        "fun": f"runner.{name}",
        "jid": gen_jid(),
        "user": user,
        "fun_args": [*args, {**kw, "__pub_user": user}],
        "return": value,
        "success": ok,
    }


def _runner_list(arg: Any) -> list[Any]:
    if arg is None:
        return []
    if isinstance(arg, (list, tuple)):
        return list(arg)
    raise SaltInvocationError(f"saltutil.runner: arg must be a list of positional arguments, not {arg!r}")


def _runner_dict(kwarg: Any) -> dict[str, Any]:
    if kwarg is None:
        return {}
    if isinstance(kwarg, dict):
        return dict(kwarg)
    raise SaltInvocationError(f"saltutil.runner: kwarg must be a dict of keyword arguments, not {kwarg!r}")


def _master_conf_dir() -> Path:
    """The folder of this minion's config, when it holds the master's config too."""
    conf_dir = __opts__.get("conf_dir") or os.path.dirname(str(__opts__.get("conf_file") or ""))
    folder = Path(conf_dir) if conf_dir else None
    if folder is None or not ((folder / "master").is_file() or (folder / "master.d").is_dir()):
        where = folder / "master" if folder is not None else "beside the minion's config"
        raise CommandExecutionError(
            f"saltutil.runner runs runners on the master's host, with the master's config, and there is "
            f"none at {where}: a minion does not ask its master to run runners"
        )
    return folder


def _run_runner(conf_dir: Path, name: str, args: list[Any], kwargs: dict[str, Any], saltenv: Any) -> tuple[bool, Any]:
    """(succeeded, the runner's return) from ``briny-run --arg-json`` in a process of its own;
    CommandExecutionError when it gave no return (an unknown runner, a bad argument, a failure)."""
    import subprocess
    import sys

    request = json.dumps({"arg": args, "kwarg": kwargs, "saltenv": saltenv}, default=str)
    cmd = [sys.executable, "-m", "briny.master.runcli", "-c", str(conf_dir), "--out", "json", "--arg-json", name]
    log.debug("saltutil.runner: %s", " ".join(cmd))
    proc = subprocess.run(cmd, input=request, capture_output=True, text=True, check=False)
    out = proc.stdout.strip()
    try:
        data = json.loads(out)
    except ValueError:
        pass
    else:
        if proc.returncode != 0 and data == f"'{name}' is not available.":  # printed as salt-run prints it
            raise CommandExecutionError(data)
        return proc.returncode == 0, data
    lines = (out or proc.stderr.strip()).splitlines()
    message = lines[-1] if lines else f"briny-run ended with exit status {proc.returncode}"
    raise CommandExecutionError(message.removeprefix("briny-run: "))
