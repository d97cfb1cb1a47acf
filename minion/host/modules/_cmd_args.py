"""The ``cmd`` execution module's argument names (its private file): Salt's order of
``cmd.run``'s arguments after ``cmd``, shared by the ``run`` family and ``cmd.script``."""

from __future__ import annotations

POSITIONAL = (
    "cwd",
    "stdin",
    "runas",
    "group",
    "shell",
    "python_shell",
    "env",
    "clean_env",
    "template",
    "rstrip",
    "umask",
    "output_encoding",
    "output_loglevel",
    "log_callback",
    "hide_output",
    "timeout",
    "reset_system_locale",
    "ignore_retcode",
)
