"""Capture and cross-check outputter goldens against the reference Salt.

Runs only on a developer machine, with the reference Salt's Python (never
used by the test suite):

    /tmp/saltref/bin/python dev/output_golden.py capture   # rewrite expected/*.txt
    /tmp/saltref/bin/python dev/output_golden.py check     # diff briny vs Salt on the cases
    /tmp/saltref/bin/python dev/output_golden.py fuzz [N]  # random data, diff briny vs Salt

Each case is ``tests/unit/common/output/expected/NAME.json``:
``{"data": ..., "out": "highstate", "opts": {...}, "color": false}``; its
golden is ``NAME.txt``, the exact text Salt's outputter gives for it (what
``salt-call`` prints, minus the final newline). Salt is driven through its
own output entry point with its default minion options plus the case's.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "unit" / "common" / "output" / "expected"


def salt_render(data, out, opts, color):
    import salt.config
    import salt.output

    full = copy.deepcopy(salt.config.DEFAULT_MINION_OPTS)
    full.update({"extension_modules": "/nonexistent-briny-ext"})
    full.update(copy.deepcopy(opts))
    full["color"] = bool(color)
    text = salt.output.try_printout(copy.deepcopy(data), out, full)
    return "" if text is None else text


def briny_module():
    spec = importlib.util.spec_from_file_location(
        "briny_output_dev",
        ROOT / "common" / "output" / "__init__.py",
        submodule_search_locations=[str(ROOT / "common" / "output")],
    )
    mod = importlib.util.module_from_spec(spec)
    sys.modules["briny_output_dev"] = mod
    spec.loader.exec_module(mod)
    return mod


def load_cases():
    for path in sorted(CASES.glob("*.json")):
        yield path, json.loads(path.read_text(encoding="utf-8"))


def capture() -> None:
    for path, case in load_cases():
        text = salt_render(case["data"], case["out"], case.get("opts", {}), case.get("color", False))
        with open(path.with_suffix(".txt"), "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        print("captured", path.with_suffix(".txt").name)


def check() -> int:
    mod = briny_module()
    bad = 0
    for path, case in load_cases():
        want = salt_render(case["data"], case["out"], case.get("opts", {}), case.get("color", False))
        got = mod.render_output(
            copy.deepcopy(case["data"]), case["out"], case.get("opts", {}), color=case.get("color", False)
        )
        if got != want:
            bad += 1
            print("DIFF", path.name)
    print(f"{bad} differing case(s)")
    return 1 if bad else 0


# -- fuzzing -----------------------------------------------------------------
WORDS = ["a", "b", "pkg", "x y", "multi\nline", "", " ", "tab\t", "é", "10", "None", "- x", "trail\n"]


def rand_value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(10 if depth < 3 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.choice([True, False])
    if kind == 2:
        return rng.choice([0, 1, -5, 12345, 1.5, 0.25, 1e20, 10**25, -0.0])
    if kind in (3, 4, 5):
        return rng.choice(WORDS)
    if kind in (6, 7):
        items = [rand_value(rng, depth + 1) for _ in range(rng.randrange(4))]
        return tuple(items) if rng.random() < 0.1 else items
    keys = WORDS + [1, 2, 7, True]
    try:
        return {
            rng.choice(keys) if rng.random() < 0.2 else (rng.choice(WORDS) or "k"): rand_value(rng, depth + 1)
            for _ in range(rng.randrange(4))
        }
    except TypeError:
        return {}


def rand_state(rng: random.Random, num: int):
    sid = rng.choice(["id%d" % num, "/tmp/f%d" % num, "svc %d" % num])  # noqa: S108 - a state id, no file
    name = sid if rng.random() < 0.5 else rng.choice(["n%d" % num, "echo hi; x", "/etc/y%d" % num])
    ret = {
        "name": name,
        "result": rng.choice([True, True, False, None]),
        "changes": {}
        if rng.random() < 0.4
        else ({"diff": "--- \n+++ \n@@ -1 +1 @@\n-a\n+b\n"} if rng.random() < 0.3 else rand_value(rng, 1)),
        "comment": rng.choice(
            ["Success!", "", "line one\nline two", "  padded  ", "x\r\ny", "Failure!", 5, None, ["l1", "l2"], "\nlead"]
        ),
        "__sls__": "sls",
        "__run_num__": num,
        "__id__": sid,
    }
    if not isinstance(ret["changes"], dict):
        ret["changes"] = {"v": ret["changes"]}
    if rng.random() < 0.9:
        ret["start_time"] = "%02d:%02d:%02d.%06d" % (
            rng.randrange(24),
            rng.randrange(60),
            rng.randrange(60),
            rng.randrange(10**6),
        )
        ret["duration"] = rng.choice([0.001, 1.5, 12.345, 999.9, 1234.5678, 0.25, 3, "2.5", 250000.0])
        if rng.random() < 0.1:
            del ret["start_time"]
        elif rng.random() < 0.1:
            del ret["duration"]
    if rng.random() < 0.25:
        ret["warnings"] = [rng.choice(["careful", "w " * 30, "x" * 90])]
    mod, fun = rng.choice([("test", "succeed_with_changes"), ("file", "managed"), ("cmd", "run")])
    return f"{mod}_|-{sid}_|-{name}_|-{fun}", ret


def rand_case(rng: random.Random):
    color = rng.random() < 0.5
    if rng.random() < 0.3:
        out = rng.choice(["nested", "json", "yaml", "txt", "raw", "pprint", "quiet", "highstate"])
        data = {"local": rand_value(rng)} if rng.random() < 0.8 else rand_value(rng)
        opts = {}
        if rng.random() < 0.3:
            opts["output_indent"] = rng.choice([0, 2, -1, 8, "pretty"])
        if out == "nested" and rng.random() < 0.2:
            opts["nested_indent"] = rng.choice([2, 4])
        if out == "json" and rng.random() < 0.5:
            data = json.loads(json.dumps(data, default=repr))
        return data, out, opts, color
    hosts = {}
    for h in range(rng.choice([1, 1, 1, 2])):
        if rng.random() < 0.1:
            hosts[f"m{h}"] = ["Rendering SLS 'base:x' failed: boom", "second\nerror"]
            continue
        if rng.random() < 0.05:
            hosts[f"m{h}"] = rng.choice([True, "some\ntext", None, 5, {}])
            continue
        nstates = rng.choice([rng.randrange(8), rng.randrange(8), rng.randrange(120)])
        states = dict(rand_state(rng, i) for i in range(nstates))
        if states and rng.random() < 0.05:
            rng.choice(list(states.values())).pop("__run_num__", None)
        if rng.random() < 0.05:
            states["junk"] = rng.choice([1, "text", {"x": 1}, {}, None])
        items = list(states.items())
        rng.shuffle(items)
        hosts[f"m{h}"] = dict(items)
    modes = ["full", "terse", "mixed", "changes", "full_id", "terse_id", "mixed_id", "changes_id"]
    opts = {
        "state_output": rng.choice(modes),
        "state_verbose": rng.random() < 0.7,
        "state_output_diff": rng.random() < 0.2,
        "state_output_profile": rng.random() < 0.8,
        "state_output_pct": rng.random() < 0.2,
    }
    return hosts, "highstate", opts, color


def _highstate_like(text: str) -> bool:
    plain = text.replace("\x1b[", "")
    return "Summary for" in plain or "Data failed to compile" in plain


def fuzz(count: int) -> int:
    mod = briny_module()
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1234)
    bad = fallback = 0
    for i in range(count):
        data, out, opts, color = rand_case(rng)
        want = salt_render(data, out, opts, color)
        got = mod.render_output(copy.deepcopy(data), out, opts, color=color)
        if got != want and out == "highstate" and isinstance(data, dict):
            # Salt mutates the data before its highstate printer gives up, so
            # its nested fallback differs in details; both falling back is fine.
            if not _highstate_like(want) and not _highstate_like(got):
                fallback += 1
                continue
        if got != want:
            bad += 1
            if bad <= 3:
                print("=== case", i, out, opts, color)
                print(json.dumps(data)[:2000])
                import difflib

                for line in difflib.unified_diff(
                    want.splitlines(), got.splitlines(), "salt", "briny", lineterm="", n=2
                ):
                    print(repr(line))
    print(f"{bad}/{count} differing ({fallback} where both fell back to nested)")
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    cmd = argv[1] if len(argv) > 1 else "check"
    if cmd == "capture":
        capture()
        return 0
    if cmd == "check":
        return check()
    if cmd == "fuzz":
        return fuzz(int(argv[2]) if len(argv) > 2 else 500)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
