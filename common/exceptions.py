"""The one exceptions tree of briny: every exception class briny defines is here.

Every error briny raises on purpose is a :class:`BrinyError`. Each carries a
message a user can act on; the edges (the CLIs, the engine, the daemons) turn
them into Salt-style results or CLI errors, never into tracebacks.

::

    BrinyError
    ├── ConfigError                 a config file or value is wrong
    │   └── BeaconInvalid           a beacon config its validation refuses (``reason``: Salt's message)
    ├── UsageError                  a bad command line (the CLIs exit 2)
    ├── RenderError                 an SLS, top file or template did not render
    │   ├── TemplateError           Jinja failed (carries the SLS name and line)
    │   ├── RenderCodeError         Python a template runs (``#!pydsl``) raised (Salt's "render error")
    │   └── DeserializationError    text a serializer cannot read (``slsutil.deserialize``)
    ├── SerializationError          data a serializer cannot write (``slsutil.serialize``)
    ├── LoaderError                 a module could not be found or loaded
    │   └── FunctionNotFound        ``mod.fun`` is not available on this host (also a KeyError)
    ├── CommandExecutionError       an execution function failed doing its work
    │   └── HostAccessError         a render away from a minion needed that minion's host
    ├── CommandNotFoundError        a command an execution function needs is not on this host
    ├── SaltInvocationError         a function was called with bad arguments
    │   ├── InvalidArguments        the arguments do not fit the function's signature
    │   ├── GrantError              a privilege or grant option a database does not know (also a ValueError)
    │   └── KeyStoreError           the minion key store cannot make a change now (its database is away)
    ├── HashError                   a ``source_hash`` that cannot be used (also a ValueError)
    ├── FileServerError             a ``salt://`` path (or a pushed file's) is missing, hostile or unreadable
    │   └── GitError                a git command of gitfs failed or ran out of time
    ├── WireError                   a frame does not parse or fails its checks
    │   ├── AuthError               signature, key or replay check failed
    │   └── ChannelClosed           the other end of a job channel is gone
    ├── JobCacheError               the job cache is closed, or was opened read-only
    ├── MasterNotRunning            no master answers on the operator socket (or it is not ours)
    ├── MasterError                 the master answered an operator request with an error
    │   └── Unauthorized            the caller's external_auth ACL does not allow the job: nothing was published
    ├── MinionNotRunning            no minion daemon answers on the local socket (or it is not ours)
    ├── EventBusNotRunning          no event bus where a listener that requires one looked
    ├── ReactionError               a reactor SLS's reaction cannot run as written
    ├── ApiError                    a request briny-api refuses (its HTTP status and Salt's message)
    └── LauncherGone                the minion's job launcher is not there to start a job

    Not errors, and so outside BrinyError:
    JobKilled (BaseException)       raised in a job's thread by saltutil.kill_job
    FallbackToNested (Exception)    an outputter hands data it cannot draw to the nested one

Custom modules written for Salt import Salt's names
(``from salt.exceptions import CommandExecutionError``): when no real Salt is
installed beside briny, :mod:`briny.common.loader` provides a ``salt.exceptions``
module that holds the classes of :data:`SALT_NAMES`, so such modules import,
raise and catch briny's own classes.
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


class BeaconInvalid(ConfigError):
    """A beacon config that cannot run; ``reason`` is the validation's message without the name."""

    def __init__(self, name: str, reason: str) -> None:
        super().__init__(f"beacon {name!r}: {reason}")
        self.reason = reason


class UsageError(BrinyError):
    """A bad command line (the CLIs exit 2)."""


class RenderError(BrinyError):
    """An SLS, top file or template did not render."""


class TemplateError(RenderError):
    """A Jinja template failed; the message names the file and line."""


class RenderCodeError(RenderError):
    """The Python of a code template (``#!pydsl``) raised: Salt reports it as
    ``Rendering SLS NAME failed, render error: MESSAGE`` and a traceback."""


class DeserializationError(RenderError):
    """A serializer could not read its input (Salt's ``salt.serializers.DeserializationError``)."""


class SerializationError(BrinyError):
    """A serializer could not write its data (Salt's ``salt.serializers.SerializationError``)."""


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


class CommandNotFoundError(BrinyError):
    """A command an execution function needs is not installed on this host (Salt's class of the
    same name: the job's return is ``Command required for 'mod.fun' not found: <message>``)."""


class SaltInvocationError(BrinyError):
    """A function was called with bad arguments."""


class InvalidArguments(SaltInvocationError):
    """The arguments do not fit the function's signature; the text is Python's own
    (``sls() missing 1 required positional argument: 'mods'``), as Salt reports it."""


class GrantError(SaltInvocationError, ValueError):
    """A privilege or grant option the database server does not know (``mysql_grants``)."""


class HashError(BrinyError, ValueError):
    """A ``source_hash`` that cannot be used; the message is Salt's comment."""


class FileServerError(BrinyError):
    """A ``salt://`` path is missing, hostile or unreadable."""


class GitError(FileServerError):
    """A git command of gitfs failed or ran out of time; the message says which and why."""


class WireError(BrinyError):
    """A frame does not parse or fails its checks."""


class AuthError(WireError):
    """A signature, key or replay check failed."""


class ChannelClosed(WireError):
    """The other end of a job channel is gone (the daemon stopped, or the job process died)."""


class JobCacheError(BrinyError):
    """The job cache cannot take a write: it is closed, or was opened read-only."""


class KeyStoreError(SaltInvocationError):
    """The minion key store cannot make a change now (its database is unreachable). A
    ``SaltInvocationError``: whoever answers a key request that cannot be served answers this too."""


class MasterNotRunning(BrinyError):
    """No master answers on the operator socket, or this user may not reach it (the CLIs exit 2)."""


class EventBusNotRunning(BrinyError):
    """No event bus listens where a listener that requires one looked (or this user may not reach it)."""


class ReactionError(BrinyError):
    """A reactor SLS's reaction that cannot run as written (unknown kind or function, bad arguments or target)."""


class MasterError(BrinyError):
    """The master answered an operator request with an error."""


class Unauthorized(MasterError):
    """The master refused a job its caller's ACL does not allow (``external_auth`` through
    briny-api): nothing was published."""


class ApiError(BrinyError):
    """A request ``briny-api`` refuses: the HTTP ``status`` and Salt's message for it."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class MinionNotRunning(BrinyError):
    """No minion daemon answers on the local socket, or this user may not reach it (exit 2)."""


class LauncherGone(BrinyError):
    """The launcher process is not there to start a job."""


class JobKilled(BaseException):
    """Raised inside a job's thread by ``saltutil.kill_job`` (BaseException: ``except Exception``
    in a module must not swallow it)."""


class FallbackToNested(Exception):
    """An outputter cannot draw this data (not state returns, a bad indent); Salt prints it with
    the nested outputter instead, and so does briny. Control flow, not an error."""


# What ``salt.exceptions`` holds for custom modules (see the module docstring): Salt's name ->
# briny's class. A module that raises one gets the return Salt gives for it.
SALT_NAMES: dict[str, type[BaseException]] = {
    "SaltException": BrinyError,
    "CommandExecutionError": CommandExecutionError,
    "CommandNotFoundError": CommandNotFoundError,
    "SaltInvocationError": SaltInvocationError,
    "SaltRenderError": RenderError,
    "TemplateError": TemplateError,
    "LoaderError": LoaderError,
    "MinionError": FileServerError,  # what Salt raises when a salt:// file cannot be had
}
