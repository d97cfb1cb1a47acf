"""The ``salt`` state module: orchestration steps (``salt.state``, ``salt.function``, ...).

Runs on the master, inside ``briny-run state.orchestrate`` (see
:mod:`briny.master.orchestrate`), as Salt 3007's ``saltmod`` does. Like every
state module it reaches the outside only through ``__salt__``; the
orchestration gives its loader the master-side functions these states need:

- ``saltutil.cmd(tgt, fun, arg=, kwarg=, tgt_type=, timeout=, expect_minions=)``:
  publish a job through the running master and gather the returns,
  ``{minion: {"ret", "retcode", "jid", "out"}}`` (``{"failed": True}`` for
  a minion expected but silent);
- ``saltutil.runner(name, full_return=True, **kwargs)`` / ``saltutil.wheel(name, **kwargs)``:
  ``{"return", "success", ...}`` of a runner or wheel function on the master;
- ``event.listen(tag_glob, timeout)``: the master's events matching a tag
  glob, until ``timeout`` seconds have passed (``salt.wait_for_event``).

States: ``state`` (``sls``/``highstate`` on targeted minions, failing when a
minion failed unless ``fail_minions`` / ``allow_fail`` forgive it, or when
``expect_minions`` and a minion did not return), ``function`` (one execution
function on targeted minions), ``runner``, ``wheel``, ``parallel_runners`` (several runners at
once, one thread each) and ``wait_for_event``.
Results, comments and test-mode answers are Salt's. Arguments briny cannot
honour (``ssh``, returners, ``batch``, ``subset``) are named in the result's
``warnings`` (``ssh`` fails the state), never silently dropped.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from briny.common.dunders import __job__, __opts__, __salt__

log = logging.getLogger(__name__)

__virtualname__ = "salt"

_NOT_SUPPORTED = {
    "ret": "returners are not supported by briny: the returns go to the master's job cache",
    "ret_config": "returners are not supported by briny",
    "ret_kwargs": "returners are not supported by briny",
    "batch": "batch is not supported in briny's orchestration: the job ran on every targeted minion at once",
    "subset": "subset is not supported in briny's orchestration: the job ran on every targeted minion",
}


def __virtual__() -> str:
    return __virtualname__


def _unsupported(ret: dict[str, Any], given: dict[str, Any]) -> None:
    for key, why in _NOT_SUPPORTED.items():
        if given.get(key) not in (None, "", {}, []):
            ret.setdefault("warnings", []).append(f"'{key}' was ignored: {why}")


def _fail_minions(ret: dict[str, Any], fail_minions: Any) -> list[str]:
    if fail_minions is None:
        return []
    if isinstance(fail_minions, str):
        return [m.strip() for m in fail_minions.split(",")]
    if isinstance(fail_minions, list):
        return [str(m) for m in fail_minions]
    ret.setdefault("warnings", []).append("'fail_minions' needs to be a list or a comma separated string. Ignored.")
    return []


def check_result(running: Any, recurse: bool = False) -> bool:
    """Salt's verdict on a state run's return: a non-empty dict of results none of which is False
    (results without a ``result`` key are looked into)."""
    if not isinstance(running, dict) or not running:
        return False
    for key, item in running.items():
        if not recurse and not isinstance(item, list if key == "__extend__" else dict):
            return False
        if isinstance(item, dict):
            if "result" not in item:
                if not check_result(item, recurse=True):
                    return False
            elif item["result"] is False:
                return False
    return True


def _failure_detail(minion: str, value: Any, no_return: bool) -> str:
    """Why a minion's return is not a state result, in one line (Salt 3007.9's words)."""
    if no_return:
        return f"Minion {minion} did not return a state result."
    if isinstance(value, (list, tuple)):
        parts = [str(item) for item in value if item]
        if not parts:
            return f"Minion {minion} returned an empty error list."
        return f"Minion {minion} returned errors: {'; '.join(parts)}"
    if isinstance(value, dict):
        return ""
    return f"Minion {minion} returned {value!r} instead of a state result."


def _publish(
    ret: dict[str, Any], step: str, tgt: Any, fun: str, arg: list[Any], kwarg: dict[str, Any], **opts: Any
) -> dict[str, Any] | None:
    """The returns by minion of ``fun`` published through ``saltutil.cmd`` for the ``salt.<step>``
    state ``ret`` (its ``__jid__`` set from the first minion's return); None, with ``ret`` failed
    and the reason as comment, when the master refused the job."""
    try:
        cmd_ret: dict[str, Any] = __salt__["saltutil.cmd"](tgt, fun, arg=arg, kwarg=kwarg, **opts)
    except Exception as exc:
        log.debug("salt.%s %s: %s", step, ret["name"], exc, exc_info=True)
        ret.update(result=False, comment=str(exc))
        return None
    for mdata in cmd_ret.values():
        if isinstance(mdata, dict) and mdata.get("jid"):
            ret["__jid__"] = str(mdata["jid"])
        break
    return cmd_ret


def state(
    name: str,
    tgt: Any,
    ssh: bool = False,
    tgt_type: str = "glob",
    ret: str = "",
    ret_config: Any = None,
    ret_kwargs: Any = None,
    highstate: Any = None,
    sls: Any = None,
    top: Any = None,
    saltenv: Any = None,
    test: Any = None,
    pillar: Any = None,
    pillarenv: Any = None,
    expect_minions: bool = True,
    exclude: Any = None,
    fail_minions: Any = None,
    allow_fail: Any = 0,
    concurrent: Any = False,
    timeout: Any = None,
    batch: Any = None,
    queue: bool = False,
    subset: Any = None,
    orchestration_jid: Any = None,
    failhard: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run ``state.sls`` (``sls``), ``state.highstate`` (``highstate: True``) or ``state.top``
    (``top``) on the minions ``tgt`` names."""
    state_ret: dict[str, Any] = {"name": name, "changes": {}, "comment": "", "result": True}
    try:
        allow_fail = int(allow_fail)
    except (TypeError, ValueError):
        state_ret.update(result=False, comment="Passed invalid value for 'allow_fail', must be an int")
        return state_ret
    if ssh:
        state_ret.update(result=False, comment="salt-ssh is not supported by briny: 'ssh: True' cannot run")
        return state_ret
    _unsupported(state_ret, {"ret": ret, "ret_config": ret_config, "ret_kwargs": ret_kwargs, "batch": batch})
    _unsupported(state_ret, {"subset": subset})
    arg: list[Any] = []
    if highstate:
        fun = "state.highstate"
    elif top:
        fun, arg = "state.top", [top]
    elif sls:
        fun, arg = "state.sls", [",".join(str(s) for s in sls) if isinstance(sls, list) else sls]
    else:
        state_ret.update(result=False, comment="No highstate or sls specified, no execution made")
        return state_ret
    opts = __opts__
    kwarg: dict[str, Any] = {}
    if test is not None or opts.get("test"):
        kwarg["test"] = test if test is not None else opts.get("test")
    if pillar:
        kwarg["pillar"] = pillar
    for key, value in (("pillarenv", pillarenv), ("saltenv", saltenv), ("exclude", exclude)):
        if value is not None:
            kwarg[key] = value
    kwarg["queue"] = queue
    if not isinstance(concurrent, bool):
        state_ret.update(result=False, comment="Must pass in boolean for value of 'concurrent'")
        return state_ret
    kwarg["concurrent"] = concurrent
    if failhard is True or opts.get("failhard"):
        kwarg["failhard"] = True
    cmd_kw = {"arg": arg, "kwarg": kwarg, "ret": ret, "timeout": timeout, "tgt_type": tgt_type}
    _fire_args("state", tgt, name, {**cmd_kw, "ssh": ssh, "expect_minions": expect_minions})
    cmd_ret = _publish(
        state_ret, "state", tgt, fun, arg, kwarg, tgt_type=tgt_type, timeout=timeout, expect_minions=expect_minions
    )
    if cmd_ret is None:
        return state_ret
    forgiven = _fail_minions(state_ret, fail_minions)
    if not cmd_ret and expect_minions:
        state_ret.update(result=False, comment="No minions returned")
        return state_ret
    changes: dict[str, Any] = {}
    failed: list[str] = []
    details: dict[str, str] = {}
    unchanged: list[str] = []
    for minion, mdata in cmd_ret.items():
        raw = mdata.get("ret", mdata.get("return"))
        no_return = bool(mdata.get("failed")) or ("ret" not in mdata and "return" not in mdata)
        m_ret = False if no_return else raw
        ok = not no_return and check_result(m_ret, recurse=True)
        if not ok:
            if minion not in forgiven:
                failed.append(minion)
                details[minion] = _failure_detail(minion, raw if raw is not None else m_ret, no_return)
            changes[minion] = m_ret
            continue
        if isinstance(m_ret, dict) and any(isinstance(r, dict) and r.get("changes") for r in m_ret.values()):
            changes[minion] = m_ret
        else:
            unchanged.append(minion)
    if changes:
        state_ret["changes"] = {"out": "highstate", "ret": changes}
    if len(failed) > allow_fail:
        state_ret["result"] = False
        state_ret["comment"] = f"Run failed on minions: {', '.join(sorted(failed))}"
        lines = [details[m] for m in sorted(failed) if details.get(m)]
        if lines:
            state_ret["comment"] += "\n" + "\n".join(lines)
    else:
        state_ret["comment"] = "States ran successfully."
        if changes:
            state_ret["comment"] += f" Updating {', '.join(changes)}."
        if unchanged:
            state_ret["comment"] += f" No changes made to {', '.join(unchanged)}."
    if (test or opts.get("test")) and state_ret["changes"] and state_ret["result"] is True:
        state_ret["result"] = None
    return state_ret


def _fire_args(kind: str, tgt: Any, name: str, args: dict[str, Any]) -> None:
    """Salt's ``salt/run/<orchestration jid>/args`` event: what a step is about to run."""
    fire, jid = __job__.fire_event, __job__.jid
    if fire is not None and jid:
        fire(f"salt/run/{jid}/args", {"type": kind, "tgt": tgt, "name": name, "args": args})


def function(
    name: str,
    tgt: Any,
    ssh: bool = False,
    tgt_type: str = "glob",
    ret: str = "",
    ret_config: Any = None,
    ret_kwargs: Any = None,
    expect_minions: bool = False,
    fail_minions: Any = None,
    fail_function: Any = None,
    arg: Any = None,
    kwarg: Any = None,
    timeout: Any = None,
    batch: Any = None,
    subset: Any = None,
    failhard: Any = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """Run the execution function ``name`` on the minions ``tgt`` names."""
    func_ret: dict[str, Any] = {"name": name, "changes": {}, "comment": "", "result": True}
    if ssh:
        func_ret.update(result=False, comment="salt-ssh is not supported by briny: 'ssh: True' cannot run")
        return func_ret
    if kwarg is None:
        kwarg = {}
    if isinstance(arg, str):
        func_ret["warnings"] = ["Please specify 'arg' as a list of arguments."]
        arg = arg.split()
    _unsupported(func_ret, {"ret": ret, "ret_config": ret_config, "ret_kwargs": ret_kwargs, "batch": batch})
    _unsupported(func_ret, {"subset": subset})
    if __opts__.get("test") is True:
        func_ret.update(result=None, comment=f"Function {name} would be executed on target {tgt}")
        return func_ret
    cmd_kw = {"arg": list(arg or []), "kwarg": kwarg, "ret": ret, "timeout": timeout, "tgt_type": tgt_type}
    _fire_args("function", tgt, name, {**cmd_kw, "ssh": ssh, "expect_minions": expect_minions, "_cmd_meta": True})
    cmd_ret = _publish(
        func_ret,
        "function",
        tgt,
        name,
        list(arg or []),
        kwarg,
        tgt_type=tgt_type,
        timeout=timeout,
        expect_minions=expect_minions,
    )
    if cmd_ret is None:
        return func_ret
    forgiven = _fail_minions(func_ret, fail_minions)
    changes: dict[str, Any] = {}
    failed: list[str] = []
    for minion, mdata in cmd_ret.items():
        m_ret: Any = False
        if mdata.get("retcode"):
            func_ret["result"] = False
            failed.append(minion)
        if mdata.get("failed"):
            ok = False
        else:
            m_ret = mdata.get("ret", mdata.get("return"))
            ok = bool(__salt__[fail_function](m_ret)) if fail_function else True
            if m_ret is False:
                ok = False
        if not ok and minion not in forgiven and minion not in failed:
            failed.append(minion)
        changes[minion] = m_ret
    if not cmd_ret:
        func_ret.update(result=False, comment="No minions responded")
        return func_ret
    if changes:
        func_ret["changes"] = {"ret": changes}
    if failed:
        func_ret["result"] = False
        func_ret["comment"] = f"Running function {name} failed on minions: {', '.join(sorted(failed))}"
    else:
        func_ret["comment"] = "Function ran successfully."
    if changes:
        func_ret["comment"] += f" Function {name} ran on {', '.join(changes)}."
    return func_ret


def wait_for_event(
    name: str, id_list: list[Any], event_id: str = "id", timeout: Any = 300, node: str = "master"
) -> dict[str, Any]:
    """Wait until events whose tag matches the glob ``name`` carried (in ``event_id`` of their
    data, or of their ``data``) every identifier of ``id_list``, or ``timeout`` seconds passed."""
    ret: dict[str, Any] = {"name": name, "changes": {}, "comment": "", "result": False}
    if __opts__.get("test"):
        ret.update(result=None, comment=f"Orchestration would wait for event '{name}'")
        return ret
    if node != "master":
        ret["comment"] = f"briny's orchestration waits for events on the master's bus only (node: {node!r})"
        return ret
    waiting = list(id_list or [])
    start = time.time()
    if not waiting:
        ret.update(result=True, comment=f"All events seen in {time.time() - start} seconds.")
        return ret
    for _tag, data in __salt__["event.listen"](name, float(timeout)):
        value = data.get(event_id)
        if value is None and isinstance(data.get("data"), dict):
            value = data["data"].get(event_id)
        found = [v for v in waiting if v in value] if isinstance(value, list) else [value]
        for item in found:
            if item in waiting:
                waiting.remove(item)
                ret["changes"].setdefault("minions_seen", []).append(item)
        if not waiting:
            ret.update(result=True, comment=f"All events seen in {time.time() - start} seconds.")
            return ret
    ret["comment"] = "Timeout value reached."
    return ret


def _master_call(kind: str, name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    if __opts__.get("test"):
        return {
            "name": name,
            "result": None,
            "changes": {},
            "comment": f"{kind.capitalize()} function '{name}' would be executed.",
        }
    if kind == "runner":
        kwargs = {**kwargs, "full_return": True}
    out = __salt__[f"saltutil.{kind}"](name, **kwargs)
    value = out.get("return")
    if kind == "runner" and isinstance(value, dict) and "outputter" in value and "data" in value:
        value = value["data"]  # an orchestration's answer: its state results
    success = bool(out.get("success", True)) and not (isinstance(value, dict) and "Error" in value)
    ret = {
        "name": name,
        "changes": {"return": value},
        "result": success,
        "comment": f"{kind.capitalize()} function '{name}' {'executed' if success else 'failed'}.",
    }
    if out.get("jid"):
        ret["__jid__"] = out["jid"]
    return ret


def runner(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run the runner function ``name`` (``manage.up``, ``jobs.list_jobs``, ...) on the master."""
    return _master_call("runner", name, {k: v for k, v in kwargs.items() if not k.startswith("__")})


def wheel(name: str, **kwargs: Any) -> dict[str, Any]:
    """Run the wheel function ``name`` (``key.accept``, ``key.delete``, ...) on the master."""
    return _master_call("wheel", name, {k: v for k, v in kwargs.items() if not k.startswith("__")})


def _config_map(value: Any) -> dict[str, Any]:
    """A runner's config in the parallel form: a list of one-key maps (or a map), merged."""
    if isinstance(value, dict):
        return dict(value)
    out: dict[str, Any] = {}
    for item in value if isinstance(value, list) else []:
        if isinstance(item, dict):
            out.update(item)
    return out


def _changes_of(obj: Any) -> Any:
    """Salt's ``extract_changes``: the changes in a highstate answer, by the path to them."""
    if not isinstance(obj, dict):
        return {}
    if "changes" in obj:
        changes = obj["changes"]
        if isinstance(changes, dict) and changes.get("out", "") == "highstate" and "ret" in changes:
            return changes["ret"]
        return changes
    found = {}
    for key, value in obj.items():
        change = _changes_of(value)
        if change:
            found[key] = change
    return found


def parallel_runners(name: str, runners: Any, **kwargs: Any) -> dict[str, Any]:
    """Run several runner functions on the master at once (one thread each), as Salt's
    ``salt.parallel_runners``: ``runners`` maps an ID to ``[{name: <runner>}, {kwarg: {...}}]``
    (``name`` defaults to the ID; a plain string is one runner without arguments)."""
    import threading

    if isinstance(runners, str):
        runners = {runners: [{"name": runners}]}
    if not isinstance(runners, dict):
        return {
            "name": name,
            "result": False,
            "changes": {},
            "comment": "The runners parameter must be a string or dict.",
        }
    configs = {}
    for runner_id, raw in runners.items():
        config = _config_map(raw) if raw is not None else {}
        config.setdefault("name", runner_id)
        configs[runner_id] = config
    if __opts__.get("test"):
        return {
            "name": name,
            "result": None,
            "changes": {},
            "comment": f"Runner functions {', '.join(str(c['name']) for c in configs.values())} would be executed.",
        }
    outputs: dict[Any, Any] = {}
    errors: dict[Any, BaseException] = {}

    def call(runner_id: Any, config: dict[str, Any]) -> None:
        try:
            kwarg = config.get("kwarg") or {}
            outputs[runner_id] = __salt__["saltutil.runner"](str(config["name"]), full_return=True, **kwarg)["return"]
        except Exception as exc:  # the first runner's failure (in the order given) is the answer, as Salt's
            log.exception("salt.parallel_runners %s: runner %s failed", name, config.get("name"))
            errors[runner_id] = exc

    threads = [threading.Thread(target=call, args=item, name=f"parallel-{item[0]}") for item in configs.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for runner_id in configs:
        if runner_id in errors:
            return {
                "name": name,
                "result": False,
                "success": False,
                "changes": {},
                "comment": f"One of the runners raised an exception: {errors[runner_id]}",
            }
    outs: dict[Any, Any] = {runner_id: outputs.get(runner_id) for runner_id in configs}
    if all(isinstance(o, dict) and o.get("outputter", "") == "highstate" and "data" in o for o in outs.values()):
        # Salt reads the retcode inside ``data`` (where there is none): orchestrations never fail it
        failed = [rid for rid, o in outs.items() if o["data"].get("retcode", 0) != 0]
        comment = "All runner functions executed successfully." if not failed else _failed_comment(failed, outs)
        changes = {rid: c for rid, o in outs.items() if (c := _changes_of(o["data"]))}
    else:
        failed = [rid for rid, o in outs.items() if isinstance(o, dict) and o.get("exit_code", 0) != 0]
        if not failed:
            comment = "All runner functions executed successfully."
        elif len(failed) == 1:
            comment = f"Runner {failed[0]} failed."
        else:
            comment = f"Runners {', '.join(str(f) for f in failed)} failed."
        changes = {"ret": outs}
    return {"name": name, "result": not failed, "changes": changes, "comment": comment}


def _failed_comment(failed: list[Any], outs: dict[Any, Any]) -> str:
    """Each failed runner's answer (Salt draws it with its nested outputter; here as YAML: a state
    module does not reach the outputters)."""
    import yaml

    return "\n".join(
        f"Runner {rid} failed with return value:\n{yaml.safe_dump(outs[rid], default_flow_style=False)}"
        for rid in failed
    )
