"""Fake ``cmd`` state module for the engine's unit tests."""

import os
import subprocess

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from briny.common.dunders import __opts__


def run(name, cwd=None, **kwargs):
    if __opts__["test"]:
        return {
            "name": name,
            "result": None,
            "changes": {"cmd": name},
            "comment": 'Command "{}" would have been executed'.format(name),
        }
    proc = subprocess.run(name, shell=True, cwd=cwd, capture_output=True, text=True)
    return {
        "name": name,
        "result": proc.returncode == 0,
        "changes": {
            "pid": os.getpid(),
            "retcode": proc.returncode,
            "stdout": proc.stdout.rstrip("\n"),
            "stderr": proc.stderr.rstrip("\n"),
        },
        "comment": 'Command "{}" run'.format(name),
    }


def wait(name, **kwargs):
    return {"name": name, "changes": {}, "result": True, "comment": ""}


def mod_watch(name, sfun=None, **kwargs):
    return run(name, **kwargs)
