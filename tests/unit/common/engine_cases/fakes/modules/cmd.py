"""Fake ``cmd`` execution module for the engine's unit tests."""

import subprocess


def retcode(cmd, python_shell=True, ignore_retcode=False, cwd=None, **kwargs):
    return subprocess.run(cmd, shell=True, cwd=cwd, capture_output=True).returncode
