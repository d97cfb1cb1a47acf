"""The collector pauses: frozen_heap around state runs, keep_frozen for a process's settled heap."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def run_alone(code: str) -> str:
    """Run ``code`` in a fresh interpreter (keep_frozen is for the life of a process)."""
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_frozen_heap_thaws_what_it_froze_when_the_last_run_ends():
    assert (
        run_alone("""
        import gc
        from briny.common.gcpause import frozen_heap
        keep = [[] for _ in range(1000)]
        with frozen_heap():
            with frozen_heap():
                pass
            during = gc.get_freeze_count()  # the outer run still holds it
        print(during > 1000, gc.get_freeze_count())
    """)
        == "True 0"
    )


def test_a_kept_freeze_outlives_the_state_runs_after_it():
    """briny-swarm freezes its settled heap for good: a state run's frozen_heap (each
    state.apply in its job threads) must not thaw it when it ends."""
    assert (
        run_alone("""
        import gc
        from briny.common.gcpause import frozen_heap, keep_frozen
        keep = [[] for _ in range(1000)]
        gc.collect()
        frozen = keep_frozen()
        with frozen_heap():
            pass
        with frozen_heap():
            with frozen_heap():
                pass
        print(frozen > 1000, gc.get_freeze_count() > frozen // 2)  # (some frozen objects die: freed)
    """)
        == "True True"
    )
