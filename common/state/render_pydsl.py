"""The ``pydsl`` renderer: an SLS written in Python with Salt's state DSL (``#!pydsl``).

Runs wherever SLS is compiled; it runs the file's Python, so on the master it is a code
renderer (:data:`briny.common.state.hostview.CODE_RENDERERS`), refused there unless allowed, like
``#!py``. The file runs as a module that sees ``__salt__``, ``__grains__``, ``__pillar__``,
``__opts__``, ``__env__``, ``__sls__``, ``__file__`` and the DSL, as Salt 3007 documents it:

- ``state('id')`` returns the same declaration for the same id (``state()`` makes one named
  ``.`` + a UUID). ``state('id').pkg.installed('name', arg=1)`` and
  ``state('id').pkg('installed', 'name', arg=1)`` declare a function; the first positional
  argument is ``name``; later calls add arguments.
- ``.require(other.pkg, file='x')`` (and the other requisites Salt's pydsl knows) adds one
  requisite item per reference, on a function or on a state module (which makes a function
  whose name is given later); each call returns the function, so calls chain.
- ``include('a', 'b')`` renders those SLS now, into the same build, and returns the module of
  each pydsl one (``None`` for the others; one value for one name); ``delayed=True`` leaves an
  ``include`` declaration instead. ``extend(function, ...)`` moves those declarations under
  ``extend`` (refused once ``ordered`` is on, as in Salt).
- ``__pydsl__.set(ordered=True)``: each function declared after it requires the one declared
  before it (the first ``require`` item of its arguments).
- As in Salt the module is kept as a ``stateconf.set`` state ``_slsmod_<sls>`` (declared last, so
  under ``ordered`` it requires the last function); its ``slsmod`` argument is the module's repr,
  a string, so briny's low data stays plain data.
- A file whose ``include`` names an SLS that includes the file back (``include:`` in YAML) is
  rendered a second time while it renders, as in Salt (a file is known as rendered only once
  its render is over), and refused as Salt refuses it: "Detected conflicting IDs ... The
  conflicting ID is '_slsmod_<sls>' ...". Two pydsl files that ``include()`` each other are
  refused at once ("... includes X, which is still rendering"); Salt recurses until Python's
  recursion limit there.

Not supported, each refused with a RenderError that says so: running a declaration at render
time (``state('x')()``), and ``cmd.call`` / ``cmd.wait_call`` given a Python function: both need
the states to run inside the rendering process, which briny keeps apart.

Errors are Salt's: a DSL misuse caught by ``include``/``extend``/``state`` is a
:class:`RenderError` (``Rendering SLS 'env:sls' failed: ...``); anything the file's Python
raises is a :class:`RenderCodeError` (``Rendering SLS sls failed, render error: ...``) that ends
with the file's own lines of the traceback.
"""

from __future__ import annotations

import contextvars
import functools
import traceback
import types
import uuid
from typing import TYPE_CHECKING, Any

from ..exceptions import RenderCodeError, RenderError
from .highdata import dedupe_extends, merge_included

if TYPE_CHECKING:
    from .stages import BuildContext, RenderEnv

# the pydsl file rendering now: ``state``/``include``/``extend`` act on it, as in Salt, even when
# called from a function of another pydsl module (one that ``include`` returned)
_ACTIVE: contextvars.ContextVar[PyDsl | None] = contextvars.ContextVar("pydsl_active", default=None)

REQUISITES = frozenset(
    "listen require watch prereq use listen_in require_in watch_in prereq_in use_in onchanges onfail".split()
)


class StateFunction:
    """``state('id').mod.fun``: a function declaration and its arguments."""

    def __init__(self, sls: PyDsl, name: str | None, mod: StateModule) -> None:
        self.mod = mod
        self.name = name
        self.args: list[Any] = []
        sls = _ACTIVE.get() or sls
        if sls.options.get("ordered"):
            last = sls.funcs[-1] if sls.funcs else None
            if last is not None:
                self._reference("require", last.mod, None)
            sls.funcs.append(self)

    def __getattr__(self, name: str) -> Any:
        if name in REQUISITES:
            return functools.partial(self._requisite, name)
        raise AttributeError(name)

    def __call__(self, *args: Any, **kws: Any) -> StateFunction:
        return self.configure(args, kws)

    def configure(self, args: tuple[Any, ...], kws: dict[str, Any]) -> StateFunction:
        items = list(args)
        if items:
            if self.mod._name == "cmd" and self.name in ("call", "wait_call") and callable(items[0]):
                raise RenderError(
                    f"pydsl: cmd.{self.name} with a Python function is not supported by briny "
                    "(the state would have to run in the process that renders the SLS)"
                )
            items[0] = {"name": items[0]}
        items.extend({key: value} for key, value in kws.items())
        self.args.extend(items)
        return self

    def _requisite(self, kind: str, *mods: Any, **refs: Any) -> StateFunction:
        for mod in mods:
            self._reference(kind, mod, None)
        for mod, ref in refs.items():
            self._reference(kind, mod, ref)
        return self

    def _reference(self, kind: str, mod: Any, ref: Any) -> None:
        if isinstance(mod, StateModule):
            ref = mod._state_id
        elif not (mod and ref):
            raise RenderCodeError(f"Invalid a requisite reference declaration! {mod}: {ref}")
        self.args.append({kind: [{str(mod): str(ref)}]})

    def high(self, context: str | None = None) -> list[Any]:
        if not self.name:
            if context != "extend":
                raise RenderCodeError(f"No state function specified for module: {self.mod._name}")
            return list(self.args)
        return [self.name, *self.args]


class StateModule:
    """``state('id').mod``: holds at most one function declaration."""

    def __init__(self, sls: PyDsl, name: str, state_id: str) -> None:
        self._sls = sls
        self._name = name
        self._state_id = state_id
        self._func: StateFunction | None = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        func = self._func
        if func is None:
            func = self._func = StateFunction(self._sls, None if name in REQUISITES else name, self)
            return getattr(func, name) if name in REQUISITES else func
        if name == func.name:
            return func
        if name in REQUISITES:
            return getattr(func, name)
        if func.name:
            raise RenderCodeError(f"Multiple state functions({name}) not allowed in a state module({self._name})!")
        func.name = name
        return func

    def __call__(self, _fname: str, *args: Any, **kws: Any) -> StateFunction:
        func: StateFunction = getattr(self, _fname)
        return func.configure(args, kws)

    def __str__(self) -> str:
        return self._name

    def _high(self, context: str | None = None) -> list[Any]:
        if self._func is None:
            raise RenderCodeError(f"No state function specified for module: {self._name}")
        return self._func.high(context)


class StateDeclaration:
    """``state('id')``: the state modules declared under one ID, in the order they were made."""

    def __init__(self, sls: PyDsl, state_id: str) -> None:
        self._sls = sls
        self._id = state_id
        self._mods: list[StateModule] = []

    def __getattr__(self, name: str) -> StateModule:
        if name.startswith("__"):
            raise AttributeError(name)
        for mod in self._mods:
            if mod._name == name:
                return mod
        mod = StateModule(self._sls, name, self._id)
        self._mods.append(mod)
        return mod

    def __getitem__(self, name: str) -> StateModule:
        return self.__getattr__(name)

    def __str__(self) -> str:
        return self._id

    def __iter__(self) -> Any:
        return iter(self._mods)

    def __call__(self, check: bool = True) -> Any:
        raise RenderError(
            f"pydsl: running state({self._id}) at render time is not supported by briny "
            "(states run after the SLS is compiled, never inside the render)"
        )

    def _high(self, context: str | None = None) -> dict[str, Any]:
        return {mod._name: mod._high(context) for mod in self._mods}


class PyDsl:
    """One pydsl file's declarations (the file's ``__pydsl__``)."""

    def __init__(self, sls: str, saltenv: str, build: BuildContext | None) -> None:
        self.name = sls
        self.saltenv = saltenv
        self.build = build
        self.options: dict[str, Any] = {}
        self.includes: list[tuple[str, str]] = []  # delayed ones: (saltenv, sls)
        self.extends: list[StateDeclaration] = []
        self.decls: list[StateDeclaration] = []
        self.by_id: dict[str, StateDeclaration] = {}
        self.funcs: list[StateFunction] = []  # function declarations in order, under ``ordered``
        self.included: dict[str, Any] = {}  # high data of what include() rendered

    def set(self, **options: Any) -> None:
        self.options.update(options)

    def include(self, *names: str, **kws: Any) -> Any:
        kws.pop("env", None)  # Salt ignores "env"; "saltenv" picks the environment
        saltenv = str(kws.get("saltenv", self.saltenv))
        if kws.get("delayed", False):
            self.includes.extend((saltenv, name) for name in names)
            return None
        if self.build is None or self.build.render_sls is None:
            raise RenderError("PyDSL only works with a running high state!")
        modules: list[Any] = []
        for name in names:
            high, errors = self.build.render_sls(name, saltenv, f"{self.saltenv}:{self.name}")
            merge_included(self.included, high, errors)
            if errors:
                raise RenderError("\n".join(errors))
            dedupe_extends(self.included)
            found = f"_slsmod_{name}" in self.included
            modules.append(self.build.pydsl_modules.get(f"{saltenv}:{name}") if found else None)
        if not modules:
            return None
        return modules[0] if len(modules) == 1 else modules

    def extend(self, *funcs: StateFunction) -> None:
        if self.options.get("ordered") or self.funcs:
            raise RenderError("Cannot extend() after the ordered option was turned on!")
        for func in funcs:
            state_id = func.mod._state_id
            decl = self.by_id.pop(state_id, None)
            if decl is None:
                raise RenderError(f"pydsl: extend() of state({state_id}), which this file did not declare")
            self.extends.append(decl)
            for i in range(len(self.decls) - 1, -1, -1):
                if self.decls[i]._id == state_id:
                    del self.decls[i]
                    break

    def state(self, id: str | None = None) -> StateDeclaration:
        state_id = id or f".{uuid.uuid4()}"  # the dot lets stateconf (-p) give it the file's namespace
        decl = self.by_id.get(state_id)
        if decl is None:
            decl = self.by_id[state_id] = StateDeclaration(self, state_id)
            self.decls.append(decl)
        return decl

    def to_high(self, module: types.ModuleType) -> dict[str, Any]:
        slsmod_id = f"_slsmod_{self.name}"
        self.state(slsmod_id).stateconf.set(slsmod=repr(module))
        del self.by_id[slsmod_id]
        high: dict[str, Any] = {}
        if self.includes:
            high["include"] = [{env: name} for env, name in self.includes]
        if self.extends:
            high["extend"] = {decl._id: decl._high("extend") for decl in self.extends}
        for decl in self.decls:
            high[decl._id] = decl._high()
        if self.included:
            again = self.included.get(slsmod_id)
            if isinstance(again, dict):
                # this file was rendered a second time while it rendered (an SLS it includes
                # includes it back): Salt's two ``_slsmod_`` entries hold two module objects,
                # which its merge refuses; the other ids of both renders are equal
                raise RenderCodeError(
                    "Detected conflicting IDs, SLS IDs need to be globally unique.\n    The conflicting ID "
                    f"is '{slsmod_id}' and is found in SLS 'None:None' and SLS "
                    f"'{again.get('__env__')}:{again.get('__sls__')}'"
                )
            errors: list[str] = []
            merge_included(high, self.included, errors)
            if errors:
                raise RenderError("\n".join(errors))
        return high


def _on_active(dsl: PyDsl, method: str) -> Any:
    """``state``/``include``/``extend`` as a file sees them: they act on the file rendering now."""

    def call(*args: Any, **kws: Any) -> Any:
        return getattr(_ACTIVE.get() or dsl, method)(*args, **kws)

    call.__name__ = method
    return call


def render_pydsl(
    data: Any,
    *,
    env: RenderEnv,
    saltenv: str,
    sls: str | None,
    relpath: str | None,
    build: BuildContext | None = None,
    **_: Any,
) -> dict[str, Any]:
    """Run the pydsl file ``data`` and return the high data it declares."""
    if not isinstance(data, str):
        raise RenderError("The pydsl renderer takes the text of an SLS file")
    name = sls or ""
    dsl = PyDsl(name, saltenv, build)
    found = env.client.find(relpath, saltenv) if relpath else None
    filename = str(found) if found else (relpath or "<pydsl>")
    module = types.ModuleType(name)
    module.__dict__.update(
        {
            "__pydsl__": dsl,
            "include": _on_active(dsl, "include"),
            "extend": _on_active(dsl, "extend"),
            "state": _on_active(dsl, "state"),
            "__salt__": env.salt,
            "__grains__": env.grains,
            "__opts__": env.opts_for_templates(),
            "__pillar__": env.pillar,
            "__env__": saltenv,
            "__sls__": name,
            "__file__": filename,
        }
    )
    if build is not None:
        build.pydsl_modules[f"{saltenv}:{name}"] = module
    active = _ACTIVE.set(dsl)
    try:
        exec(compile(data, filename, "exec"), module.__dict__)  # noqa: S102 - the pydsl renderer runs the SLS: that is what it is
        return dsl.to_high(module)
    except RenderError:
        raise
    except Exception as exc:  # noqa: BLE001 - whatever the file's Python raises is a render error
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
        where = "".join(traceback.format_list(frames))
        raise RenderCodeError(
            f"{exc}\nTraceback (most recent call last):\n{where}{type(exc).__name__}: {exc}"
        ) from None
    finally:
        _ACTIVE.reset(active)
