"""Fake ``test`` state module for the engine's unit tests (behaves as Salt's observably does)."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from briny.common.dunders import __opts__, __running__


_CHANGES = {"testing": {"old": "Unchanged", "new": "Something pretended to change"}}


def nop(name, **kwargs):
    return succeed_without_changes(name)


def succeed_without_changes(name, **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": "Success!"}


def succeed_with_changes(name, **kwargs):
    ret = {"name": name, "changes": dict(_CHANGES), "result": True, "comment": "Success!"}
    if __opts__["test"]:
        ret["result"] = None
        ret["comment"] = "If we weren't testing, this would be successful with changes"
    return ret


def fail_without_changes(name, **kwargs):
    ret = {"name": name, "changes": {}, "result": False, "comment": "Failure!"}
    if __opts__["test"]:
        ret["comment"] = "If we weren't testing, this would be a failure!"
    return ret


def fail_with_changes(name, **kwargs):
    ret = {"name": name, "changes": dict(_CHANGES), "result": False, "comment": "Failure!"}
    if __opts__["test"]:
        ret["result"] = None
        ret["comment"] = "If we weren't testing, this would be failed with changes"
    return ret


def configurable_test_state(name, changes=True, result=True, comment="", **kwargs):
    ret = {"name": name, "changes": dict(_CHANGES) if changes else {}, "result": result, "comment": comment}
    if __opts__["test"]:
        ret["result"] = True if not changes else None
    return ret


def raise_error(name, **kwargs):
    raise RuntimeError("boom")


def mod_watch(name, sfun=None, **kwargs):
    changed = []
    for kind in ("watch",):
        for low in (kwargs.get("__reqs__") or {}).get(kind, []):
            tag = "{0[state]}_|-{0[__id__]}_|-{0[name]}_|-{0[fun]}".format(low)
            if __running__.get(tag, {}).get("changes"):
                changed.append("{0[state]}: {0[__id__]}".format(low))
    return {
        "name": name,
        "changes": {"Requisites with changes": changed},
        "result": True,
        "comment": "Watch statement fired.",
    }
