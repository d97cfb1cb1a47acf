"""The one exceptions tree of briny.

Every error briny raises on purpose is a :class:`BrinyError`. Each carries a
message a user can act on; the edges (the CLIs, the engine, the daemons) turn
them into Salt-style results or CLI errors, never into tracebacks.

::

    BrinyError
    ├── ConfigError                 a config file or value is wrong
    ├── RenderError                 an SLS, top file or template did not render
    │   └── TemplateError           Jinja failed (carries the SLS name and line)
    ├── CompileError                high data is unsound (carries Salt's error strings)
    ├── LoaderError                 a module could not be found or loaded
    │   └── FunctionNotFound        ``mod.fun`` is not available on this host
    ├── CommandExecutionError       an execution function failed doing its work
    │   └── HostAccessError         a render away from a minion needed that minion's host
    ├── SaltInvocationError         a function was called with bad arguments
    ├── FileServerError             a ``salt://`` path is missing, hostile or unreadable
    ├── WireError                   a frame does not parse or fails its checks
    │   └── AuthError               signature, key or replay check failed
    └── TimeoutError_               a peer did not answer in time

Custom modules written for Salt raise ``salt.exceptions.CommandExecutionError``
and friends; the loader maps those names to these classes, so the same
``except`` clauses work.
"""

from __future__ import annotations


class BrinyError(Exception):
    """Base of every deliberate briny error."""

    def __init__(self, message: str = "", *args: object) -> None:
        super().__init__(message, *args)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigError(BrinyError):
    """A configuration file or value is wrong."""


class RenderError(BrinyError):
    """An SLS, top file or template did not render."""


class TemplateError(RenderError):
    """A Jinja template failed; the message names the file and line."""


class CompileError(BrinyError):
    """High data is structurally unsound.

    ``errors`` holds the strings Salt would return, in Salt's order.
    """

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = list(errors)


class LoaderError(BrinyError):
    """A module could not be found or loaded."""


class FunctionNotFound(LoaderError, KeyError):
    """``mod.fun`` is not available on this host."""

    def __str__(self) -> str:  # KeyError would quote the message
        return self.message


class CommandExecutionError(BrinyError):
    """An execution function failed while doing its work."""

    def __init__(self, message: str = "", info: object = None) -> None:
        super().__init__(message)
        self.info = info


class HostAccessError(CommandExecutionError):
    """A render on the master (pillar, or states compiled for a minion) needed the minion's host:
    a function that is not pure, a host-reading filter, or Python code. The message names it."""


class SaltInvocationError(BrinyError):
    """A function was called with bad arguments."""


class InvalidArguments(SaltInvocationError):
    """The arguments do not fit the function's signature; the text is Python's own
    (``sls() missing 1 required positional argument: 'mods'``), as Salt reports it."""


class FileServerError(BrinyError):
    """A ``salt://`` path is missing, hostile or unreadable."""


class WireError(BrinyError):
    """A frame does not parse or fails its checks."""


class AuthError(WireError):
    """A signature, key or replay check failed."""


class TimeoutError_(BrinyError):
    """A peer did not answer in time."""


# Names Salt's own modules use, for custom modules that import them.
SaltException = BrinyError
SaltRenderError = RenderError
CommandNotFoundError = FunctionNotFound
MinionError = BrinyError
