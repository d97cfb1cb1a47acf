"""The clients of a lowstate chunk (``POST /``, ``POST /run``): ``local``, ``local_async``,
``runner``, ``runner_async``, ``wheel``.

Runs in ``briny-api``'s worker threads (every call blocks on the master's IPC or the bus).
:func:`check_client` refuses a chunk before anything runs, with Salt's status and message;
:func:`run_chunk` runs one chunk for a :class:`Caller` (the user and the ACL entries of their
token or credentials) and gives Salt's answer for that client:

- ``local``: publish through the operator IPC with the caller's ACL (the master refuses the
  job, publishing nothing, unless every targeted minion is allowed), wait for the returns as
  ``briny`` does (:class:`briny.master.waiter.Waiter`): ``{minion: return}`` of those that
  returned (``{}`` when nothing matched);
- ``local_async``: the publish alone, ``{"jid", "minions"}``;
- ``runner``: the runner (:mod:`briny.master.runners`) in this process, as ``briny-run`` does,
  with ``salt/run/<jid>/new`` and ``.../ret`` fired on the master bus: its return;
  ``runner_async``: the same in the background, ``{"tag": "salt/run/<jid>", "jid"}``;
- ``wheel``: the wheel function on the master's key store: ``{"tag": "salt/wheel/<jid>",
  "data": {"fun": "wheel.<fun>", "jid", "tag", "user", "_stamp", "return", "success"}}``.
"""

from __future__ import annotations

import concurrent.futures
import logging
import re
from dataclasses import dataclass, field
from typing import Any

from briny.common import config
from briny.common.args import call_function
from briny.common.event import EventListener, EventSender, stamp
from briny.common.ratelog import short
from briny.common.exceptions import ApiError, BrinyError, FunctionNotFound, Unauthorized
from briny.common.jid import gen_jid
from briny.master import eauthacl as acl
from briny.master.clientapi import MasterClient

log = logging.getLogger(__name__)

# every client Salt's API names (GET / lists them); briny-api runs CLIENTS of them
SALT_CLIENTS = ("local", "local_async", "local_batch", "local_subset", "runner", "runner_async", "ssh", "wheel",
                "wheel_async")  # fmt: skip
CLIENTS = ("local", "local_async", "runner", "runner_async", "wheel")
# keys of a chunk that are not the function's arguments
_CONTROL = {"client", "fun", "arg", "kwarg", "tgt", "tgt_type", "expr_form", "timeout", "token", "username",
            "password", "eauth", "full_return", "print_event"}  # fmt: skip
_KWARG = re.compile(r"\A([A-Za-z_][A-Za-z0-9_]*)=(.*)\Z", re.S)


@dataclass
class Caller:
    user: str
    eauth: str
    perms: list[Any] = field(default_factory=list)
    via: str = "token"  # how the caller proved who they are: token (Salt's message names it) or eauth


def check_client(chunk: dict[str, Any], enabled: list[str]) -> str:
    """The chunk's client; ApiError (400, Salt's message) for an unknown, disabled or unsupported one."""
    client = chunk.get("client")
    if client not in SALT_CLIENTS:
        raise ApiError(400, f"Invalid client specified: '{client}'")
    if client not in enabled:
        raise ApiError(
            400, f"Client disabled: '{client}'. Add to 'netapi_enable_clients' master config option to enable."
        )
    if client not in CLIENTS:
        raise ApiError(400, f"Client not supported by briny-api yet: '{client}'")
    return str(client)


def refuse(caller: Caller, what: str, reason: str) -> None:
    log.warning("api: refused %s (eauth %s): %s: %s; nothing ran", short(caller.user), short(caller.eauth),
                short(what, 160), short(reason, 160))  # fmt: skip


def _fun(chunk: dict[str, Any]) -> str:
    fun = chunk.get("fun")
    if not isinstance(fun, str) or not fun:
        raise ApiError(400, "Missing 'fun' in the lowstate chunk")
    return fun


def _arguments(chunk: dict[str, Any], parse_kwargs: bool) -> tuple[list[Any], dict[str, Any]]:
    arg = chunk.get("arg", [])
    if not isinstance(arg, list):
        arg = [arg]
    kwarg = chunk.get("kwarg") or {}
    if not isinstance(kwarg, dict):
        raise ApiError(400, "'kwarg' must be a map")
    args: list[Any] = []
    kwargs: dict[str, Any] = dict(kwarg)
    for item in arg:
        match = _KWARG.match(item) if parse_kwargs and isinstance(item, str) else None
        if match:
            kwargs[match.group(1)] = match.group(2)
        else:
            args.append(item)
    return args, kwargs


def run_chunk(api: Any, chunk: dict[str, Any], caller: Caller) -> Any:
    """Salt's answer of ``chunk`` (its client already checked) for ``caller``; ApiError when refused."""
    client = chunk["client"]
    fun = _fun(chunk)
    if client in ("local", "local_async"):
        return _local(api, chunk, fun, caller, wait=client == "local")
    if client in ("runner", "runner_async"):
        if not acl.allows_special(caller.perms, "@runner", fun):
            refuse(caller, f"runner {fun}", "not in its external_auth entries")
            raise ApiError(401, f'Authentication failure of type "{caller.via}" occurred for user {caller.user}.')
        return _runner(api, chunk, fun, caller, wait=client == "runner")
    if not acl.allows_special(caller.perms, "@wheel", fun):
        refuse(caller, f"wheel {fun}", "not in its external_auth entries")
        raise ApiError(401, f'Authentication failure of type "{caller.via}" occurred for user {caller.user}.')
    return _wheel(api, chunk, fun, caller)


def _local(api: Any, chunk: dict[str, Any], fun: str, caller: Caller, wait: bool) -> Any:
    from briny.master.waiter import Waiter

    tgt = chunk.get("tgt")
    if tgt is None or tgt == "":
        raise ApiError(400, "Missing 'tgt' in the lowstate chunk")
    tgt_type = str(chunk.get("tgt_type") or chunk.get("expr_form") or "glob")
    args, kwargs = _arguments(chunk, parse_kwargs=False)
    if chunk.get("batch") is not None:
        raise ApiError(400, "Client not supported by briny-api yet: 'local_batch' (a chunk with 'batch')")
    full = chunk.get("full_return") is True
    extra = sorted(k for k in chunk if k not in _CONTROL and k != "batch")
    if extra:
        raise ApiError(400, f"briny-api does not support these keys of a local chunk yet: {', '.join(extra)}")
    opts = api.opts
    timeout = chunk.get("timeout")
    timeout = float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else config.number(opts, "timeout")
    listener = EventListener(opts, "salt/job/*/ret/*", name="master") if wait else None
    client = MasterClient(opts)
    try:
        if listener is not None:
            listener.wait_ready()
        try:
            pub = client.publish(tgt, fun, args, kwargs, tgt_type, timeout, user=caller.user, acl=caller.perms)
        except Unauthorized:
            refuse(caller, f"{fun} on {tgt!r} ({tgt_type})", "the master found a targeted minion outside its ACL")
            raise ApiError(401, "Authorization error occurred.") from None
        log.info("api: %s (eauth %s) ran %s on %s: jid %s", caller.user, caller.eauth, fun, tgt, pub.get("jid"))
        if not wait:
            return {"jid": pub.get("jid", ""), "minions": pub.get("minions", [])}
        if not pub.get("minions"):
            return {}
        waiter = Waiter(client, listener, opts, timeout, config.number(opts, "gather_job_timeout"))
        waiter.add_job(pub["jid"], fun, pub["minions"])
        out: dict[str, Any] = {}
        while waiter.active:
            for res in waiter.poll(1.0):
                if res.returned:
                    out[res.id] = {"ret": res.ret, "retcode": res.retcode, "jid": pub["jid"]} if full else res.ret
        return out
    except BrinyError as exc:
        if isinstance(exc, ApiError):
            raise
        raise ApiError(503, str(exc)) from None
    finally:
        client.close()
        if listener is not None:
            listener.close()


def _runner(api: Any, chunk: dict[str, Any], fun: str, caller: Caller, wait: bool) -> Any:
    from briny.master.runners import RunnerContext, get_runner

    try:
        func = get_runner(fun)
    except FunctionNotFound:
        return f"'{fun}' is not available."
    args, kwargs = _arguments(chunk, parse_kwargs=True)
    kwargs.update({k: v for k, v in chunk.items() if k not in _CONTROL and k != "batch"})
    jid = gen_jid()
    tag = f"salt/run/{jid}"

    fun_args: list[Any] = [*args, kwargs] if kwargs else list(args)

    def work() -> dict[str, Any]:
        sender = EventSender(api.opts, "master")
        sender.fire(f"{tag}/new", {"fun": f"runner.{fun}", "fun_args": fun_args, "jid": jid, "user": caller.user,
                                   "_stamp": stamp()})  # fmt: skip
        ctx = RunnerContext(api.opts)
        success = True
        try:
            result: Any = call_function(func, fun, [ctx, *args], kwargs)
        except (BrinyError, OSError) as exc:
            success, result = False, f"Exception occurred in runner {fun}: {exc}"
            log.warning("api: runner %s of %s failed: %s", fun, caller.user, exc)
        finally:
            ctx.close()
        data = {"fun": f"runner.{fun}", "fun_args": fun_args, "jid": jid, "user": caller.user, "return": result,
                "success": success, "_stamp": stamp()}  # fmt: skip
        sender.fire(f"{tag}/ret", data)
        sender.close()
        return data

    log.info("api: %s (eauth %s) runs runner %s: jid %s", caller.user, caller.eauth, fun, jid)
    if wait:
        data = work()
        return {"tag": f"{tag}/ret", "data": data} if chunk.get("full_return") is True else data["return"]
    future: concurrent.futures.Future[Any] = api.executor.submit(work)
    future.add_done_callback(_log_failure)
    return {"tag": tag, "jid": jid}


def _log_failure(future: concurrent.futures.Future[Any]) -> None:
    exc = future.exception()
    if exc is not None:
        log.error("api: an async runner failed: %s", exc, exc_info=exc)


def _wheel(api: Any, chunk: dict[str, Any], fun: str, caller: Caller) -> Any:
    from briny.master import wheel
    from briny.master.keys.store import KeyStore

    args, kwargs = _arguments(chunk, parse_kwargs=True)
    kwargs.update({k: v for k, v in chunk.items() if k not in _CONTROL})
    jid = gen_jid()
    tag = f"salt/wheel/{jid}"
    log.info("api: %s (eauth %s) runs wheel %s: jid %s", caller.user, caller.eauth, fun, jid)
    sender = EventSender(api.opts, "master")
    sender.fire(f"{tag}/new", {"fun": f"wheel.{fun}", "jid": jid, "user": caller.user, "_stamp": stamp()})
    success = True
    try:
        result: Any = wheel.run(KeyStore(api.opts), fun, args, kwargs)
    except FunctionNotFound:
        success, result = False, f"'{fun}' is not available."
    except (BrinyError, OSError) as exc:
        success, result = False, f"Exception occurred in wheel {fun}: {exc}"
    data = {"fun": f"wheel.{fun}", "jid": jid, "tag": tag, "user": caller.user, "_stamp": stamp(),
            "return": result, "success": success}  # fmt: skip
    sender.fire(f"{tag}/ret", data)
    sender.close()
    return {"tag": tag, "data": data}
