"""What ``pkgrepo.managed`` does alike on every family: test mode's answer, and the answer
once the repo was written (a private part of :mod:`briny.states.pkgrepo`)."""

from __future__ import annotations

from typing import Any

__all__: list[str] = []

TEST_NOTE = (
    " This may cause pkg states to behave differently than stated if this action is repeated without "
    "test=True, due to the differences in the configured repositories."
)


def would_configure(ret: dict[str, Any], name: str, pre: dict[str, Any], want: dict[str, Any]) -> dict[str, Any]:
    """Test mode: what would change (each key that differs, or the new repo)."""
    ret["comment"] = f"Package repo '{name}' would be configured." + TEST_NOTE
    if pre:
        ret["changes"] = {k: {"new": v, "old": pre.get(k)} for k, v in want.items() if v != pre.get(k)}
    else:
        ret["changes"]["repo"] = name
    return ret


def configured(
    ret: dict[str, Any], name: str, repo: str, pre: dict[str, Any], want: dict[str, Any], post: dict[str, Any]
) -> dict[str, Any]:
    """After the write: each key whose value changed (or the new repo), and success."""
    if pre:
        ret["changes"] = {k: {"new": post.get(k), "old": pre.get(k)} for k in want if post.get(k) != pre.get(k)}
    else:
        ret["changes"] = {"repo": repo}
    ret.update(result=True, comment=f"Configured package repo '{name}'")
    return ret
