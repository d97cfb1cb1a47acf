"""``opts`` is configuration only (issue 9): runtime objects travel in the job context
(``__job__``), never under hidden keys in ``opts``."""

from __future__ import annotations

import re
from pathlib import Path

from briny.common.config import MINION_DEFAULTS, apply_config
from briny.common.jobcontext import JobContext
from briny.minion.executor import Executor, Job

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("common", "master", "minion", "states")
# Salt's own opts keys that start with "__" (plain strings Salt itself sets): not runtime objects
SALT_KEYS = {"__role"}
# the runtime keys opts used to carry: none may come back under any spelling of access
FORMER = (
    "__fileclient",
    "__fileclient_local",
    "__jobs",
    "__fire_event",
    "__master_request",
    "__refresh_pillar",
    "__refresh_grains",
    "__compile_pillar",
    "__progress",
    "__compiled",
)
# opts["__x"], opts.get("__x"), opts.pop / setdefault, {**opts, "__x": ...}, hooks={"__x": ...}
ACCESS = re.compile(
    r"""(?:opts\w*|__opts__|hooks)\s*(?:\[|\.get\(|\.pop\(|\.setdefault\(|=\s*\{)\s*["'](__\w+)["']"""
    r"""|\*\*\w*opts\w*\s*,\s*["'](__\w+)["']\s*:"""
)


PEEK = """
def opts_keys(**kwargs):
    return sorted(k for k in __opts__ if k.startswith('__'))

def job(**kwargs):
    return [type(__job__).__name__, __job__.jid, __job__.fire_event is not None,
            __job__.file_client is not None]
"""


def _sources() -> list[Path]:
    return sorted(p for d in SOURCES for p in (ROOT / d).rglob("*.py"))


def test_sources_put_no_hidden_runtime_keys_in_opts() -> None:
    found = []
    for path in _sources():
        text = path.read_text(encoding="utf-8")
        for m in ACCESS.finditer(text):
            key = m.group(1) or m.group(2)
            if key not in SALT_KEYS:
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)}")
        for key in FORMER:
            for m in re.finditer(rf"""["']{key}["']""", text):
                line = text.count("\n", 0, m.start()) + 1
                found.append(f"{path.relative_to(ROOT)}:{line}: {key}")
    assert not found, "runtime objects belong in the job context (__job__), not in opts:\n" + "\n".join(found)


def test_the_pattern_catches_each_form() -> None:
    for text in (
        'opts["__fileclient"] = c',
        "__opts__.get('__jobs')",
        'opts.pop("__x", None)',
        'job_opts.setdefault("__y", 1)',
        '{**opts, "__z": 1}',
        'hooks={"__w": f}',
    ):
        assert ACCESS.search(text), text
    assert not ACCESS.search('opts["file_roots"]') and not ACCESS.search('low["__id__"]')


def test_a_job_sees_configuration_in_opts_and_its_runtime_in_job(tmp_path: Path) -> None:
    (tmp_path / "srv" / "_modules").mkdir(parents=True)
    (tmp_path / "srv" / "_modules" / "peek.py").write_text(PEEK)
    opts = apply_config(
        {
            "id": "m1",
            "root_dir": str(tmp_path),
            "cachedir": "cache",
            "file_client": "local",
            "file_roots": {"base": [str(tmp_path / "srv")]},
            "custom_modules_from_roots": True,  # the tree's peek module, without a sync
        },
        MINION_DEFAULTS,
        "test",
    )
    ex = Executor(opts, dict)
    res = ex.run(Job("20240101000000000001", "peek.opts_keys"))
    assert res.retcode == 0 and set(res.ret) <= SALT_KEYS, res.ret
    res = ex.run(Job("20240101000000000002", "peek.job"), fire_event=lambda tag, data: None)
    assert res.ret == [JobContext.__name__, "20240101000000000002", True, True]
