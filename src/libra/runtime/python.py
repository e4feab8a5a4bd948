"""A runtime for plain Python objects: stateful classes and modules of functions, found by introspection.

Why this shape:

- One instance per class is one :class:`~libra.runtime.base.StatePart` (pickled bytes + content key). A call on
  ``Class.method`` unpickles only that part (unpickling *is* the copy, so the given state is never mutated),
  runs the method and re-snapshots it; other parts are passed through untouched. That keeps calls cheap and lets
  the worker pool ship only the parts a worker does not hold. The assumption is that a method only changes its
  own instance, which holds for independent tool classes (BFCL's 8 classes).
- Pickled bytes rather than live objects, because states must travel to worker processes.
- Random generators are reseeded before each call from (part key, tool, arguments) and reset after it, so a call
  is a pure function of (state, tool, args): identical calls from identical states give identical results, and a
  read call that draws a random number does not count as a state change. Views skip generator internals for the
  same reason (see :mod:`libra.runtime.diff`).

Tool names are ``ClassName.method`` for classes and ``module_short_name.function`` for modules; only public
callables (not starting with ``_``) become tools. ``docs`` replaces the introspected documents (e.g. a
benchmark's official function docs) while keeping the introspected executables.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
import pickle
import random
import time
from collections import OrderedDict
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Callable, ContextManager, Iterable, Mapping, Sequence

from ..catalog import Catalog, Tool
from ..errors import CatalogError
from .base import InvocationRecord, State, StatePart, ToolRuntimeError, UnknownToolError, parts_fingerprint, to_jsonable
from .diff import content_hash, diff_views, object_view
from .introspect import tool_document

LoadHook = Callable[[Any, Any], None]
_PICKLE = pickle.HIGHEST_PROTOCOL


def public_methods(cls: type) -> list[str]:
    """Names of the public methods of a class, in definition order (base classes first, ``object`` excluded)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        if klass is object:
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") or name in names:
                continue
            if isinstance(value, (staticmethod, classmethod)) or inspect.isfunction(value):
                names.append(name)
    return names


def public_functions(module: ModuleType) -> list[str]:
    """Public functions defined in (not imported into) a module, in definition order."""
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and inspect.isfunction(value) and value.__module__ == module.__name__
    ]


def status_of(output: Any) -> tuple[str, str | None]:
    """A returned dict with an ``error`` key is a rejection: the tool refused the call without raising."""
    if isinstance(output, dict) and "error" in output:
        return "rejected", str(output["error"])
    return "success", None


def error_text(exc: BaseException) -> str:
    msg = str(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def _call_seed(key: str, tool: str, args: Mapping[str, Any]) -> int:
    blob = json.dumps(args, sort_keys=True, default=repr, ensure_ascii=False)
    return int.from_bytes(hashlib.blake2b(f"{key}\0{tool}\0{blob}".encode(), digest_size=8).digest(), "big")


def _rngs(obj: Any) -> list[random.Random]:
    return [v for v in vars(obj).values() if isinstance(v, random.Random)]


@dataclass(frozen=True, slots=True)
class _Entry:
    """How to execute one tool: method ``attr`` of part ``part`` (at ``index``), or a stateless ``func``."""

    part: str | None
    index: int
    attr: str
    func: Callable[..., Any] | None


class PythonRuntime:
    """Runtime over Python classes (stateful, one instance each) and module functions (stateless).

    ``init_kwargs`` gives per-class constructor arguments; ``load(instance, config)`` is called on each new
    instance with a deep copy of ``config.get(ClassName, {})`` (a task's initial configuration); ``ignore_attrs``
    names attributes left out of views (e.g. timestamps that must not count as a state change); ``call_context``
    is a context-manager factory each call runs in, to pin and then restore process-global settings a library
    keeps outside its instances (precision contexts...). ``trusted`` is
    this runtime's declaration that its tools are pure Python and may run in-process.
    """

    def __init__(
        self,
        classes: Sequence[type] = (),
        modules: Sequence[ModuleType] = (),
        *,
        docs: Catalog | Sequence[Mapping[str, Any]] | None = None,
        init_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
        load: LoadHook | None = None,
        config: Mapping[str, Any] | None = None,
        ignore_attrs: Iterable[str] = (),
        reseed_random: bool = True,
        call_context: Callable[[], ContextManager[Any]] | None = None,
        trusted: bool = False,
        name: str = "python",
        view_cache_size: int = 2048,
    ) -> None:
        self.trusted = bool(trusted)
        self.classes: dict[str, type] = {}
        for cls in classes:
            if not isinstance(cls, type):
                raise ToolRuntimeError(f"{cls!r} is not a class: pass classes (not instances) to PythonRuntime")
            if cls.__name__ in self.classes:
                raise ToolRuntimeError(f"two classes are named {cls.__name__!r}: tool names would clash, rename one")
            self.classes[cls.__name__] = cls
        self.init_kwargs = {k: dict(v) for k, v in (init_kwargs or {}).items()}
        unknown = set(self.init_kwargs) - set(self.classes)
        if unknown:
            raise ToolRuntimeError(f"init_kwargs name unknown class(es) {sorted(unknown)}: use class names {sorted(self.classes)}")
        self.load = load
        self.config: dict[str, Any] = dict(config or {})
        self.ignore_attrs = frozenset(ignore_attrs)
        self.reseed_random = reseed_random
        self.call_context = call_context
        self._part_names = list(self.classes)
        self._views: OrderedDict[str, Any] = OrderedDict()
        self._view_cache_size = view_cache_size
        self._fresh: State | None = None

        entries: dict[str, _Entry] = {}
        introspected: list[dict[str, Any]] = []
        groups: dict[str, str] = {}
        for index, (cname, cls) in enumerate(self.classes.items()):
            for meth in public_methods(cls):
                tname = f"{cname}.{meth}"
                entries[tname] = _Entry(cname, index, meth, None)
                introspected.append(tool_document(tname, getattr(cls, meth)))
                groups[tname] = cname
        for module in modules:
            short = module.__name__.rsplit(".", 1)[-1]
            for fname in public_functions(module):
                tname = f"{short}.{fname}"
                if tname in entries:
                    raise ToolRuntimeError(f"tool {tname!r} is defined twice: rename the module or the class")
                func = getattr(module, fname)
                entries[tname] = _Entry(None, -1, fname, func)
                introspected.append(tool_document(tname, func))
                groups[tname] = short
        if docs is None:
            self.catalog = Catalog(
                [Tool(name=d["name"], description=d["description"], parameters=d["parameters"], response=d.get("response"), group=groups[d["name"]]) for d in introspected],
                name=name,
            )
        else:
            catalog = docs if isinstance(docs, Catalog) else Catalog.from_dict(list(docs))
            missing = [t.name for t in catalog if t.name not in entries]
            if missing:
                raise CatalogError(
                    f"docs describe {len(missing)} tool(s) with no executable (e.g. {missing[0]!r}): "
                    f"name tools 'Class.method' or 'module.function' among {len(entries)} found"
                )
            self.catalog = catalog
        self._entries = {t.name: entries[t.name] for t in self.catalog}

    # -- construction helpers ---------------------------------------------------------------------------
    @classmethod
    def from_classes(cls, classes: Sequence[type], **kwargs: Any) -> "PythonRuntime":
        return cls(classes=classes, **kwargs)

    @classmethod
    def from_module(cls, module: ModuleType, **kwargs: Any) -> "PythonRuntime":
        return cls(modules=[module], **kwargs)

    # -- states -----------------------------------------------------------------------------------------
    def fresh(self) -> State:
        if self._fresh is None:
            self._fresh = self.load_state(self.config)
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """A new initial state built with ``config`` (class name -> that class's configuration)."""
        config = dict(config or {})
        unknown = set(config) - set(self.classes)
        if unknown:
            raise ToolRuntimeError(f"initial config names unknown class(es) {sorted(unknown)}: use {sorted(self.classes)}")
        parts = []
        for cname, klass in self.classes.items():
            try:
                inst = klass(**self.init_kwargs.get(cname, {}))
                if self.load is not None:
                    self.load(inst, copy.deepcopy(config.get(cname, {})))
            except Exception as exc:  # noqa: BLE001 - user code: report which class and why
                raise ToolRuntimeError(f"cannot build the initial {cname} instance ({error_text(exc)}): check init_kwargs/config") from exc
            parts.append(self._snapshot(cname, inst))
        return self._state(tuple(parts))

    def _state(self, parts: tuple[StatePart, ...]) -> State:
        return State(parts_fingerprint(parts), parts)

    def _snapshot(self, cname: str, inst: Any) -> StatePart:
        if self.reseed_random:
            for rng in _rngs(inst):
                rng.seed(0)
        view = object_view(inst, self.ignore_attrs)
        key = f"{cname}:{content_hash(view)}"
        self._remember(key, view)
        return StatePart(cname, key, pickle.dumps(inst, _PICKLE))

    def _remember(self, key: str, view: Any) -> None:
        self._views[key] = view
        self._views.move_to_end(key)
        while len(self._views) > self._view_cache_size:
            self._views.popitem(last=False)

    def _view_of(self, part: StatePart) -> Any:
        view = self._views.get(part.key)
        if view is None:
            view = object_view(pickle.loads(part.data), self.ignore_attrs)
            self._remember(part.key, view)
        return view

    def view(self, state: State) -> dict[str, Any]:
        """The whole state as JSON data (part name -> view): for debugging and contract authoring."""
        return {p.name: self._view_of(p) for p in self._parts(state)}

    def _parts(self, state: State) -> tuple[StatePart, ...]:
        parts = state.payload if isinstance(state, State) else None
        if not isinstance(parts, tuple) or [getattr(p, "name", None) for p in parts] != self._part_names:
            raise ToolRuntimeError("this state was not made by this runtime: get states from its fresh()/invoke()")
        return parts

    # -- calls ------------------------------------------------------------------------------------------
    def entry(self, tool: str) -> _Entry:
        entry = self._entries.get(tool)
        if entry is None:
            raise UnknownToolError(f"unknown tool {tool!r}: runtime {self.catalog.name!r} has {len(self._entries)} tools named like {next(iter(self._entries), '?')!r}")
        return entry

    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        entry = self.entry(tool)
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
        parts = self._parts(state)
        args = dict(args)
        if entry.part is None:
            if self.reseed_random:
                random.seed(_call_seed("", tool, args))
            record, _ = self._run(entry.func, args)
            return record, state
        part = parts[entry.index]
        inst = pickle.loads(part.data)
        if self.reseed_random:
            seed = _call_seed(part.key, tool, args)
            random.seed(seed)
            for i, rng in enumerate(_rngs(inst)):
                rng.seed(seed + i)
        record, _ = self._run(getattr(inst, entry.attr), args)
        if self.reseed_random:
            for rng in _rngs(inst):
                rng.seed(0)
        try:
            blob = pickle.dumps(inst, _PICKLE)
        except Exception as exc:  # noqa: BLE001 - a tool left something unpicklable in its instance
            record = InvocationRecord("error", None, {}, f"state cannot be snapshotted after the call ({error_text(exc)})", record.duration_ms)
            return record, state
        if blob == part.data:
            return record, state
        view = object_view(inst, self.ignore_attrs)
        key = f"{entry.part}:{content_hash(view)}"
        if key == part.key:
            return record, state
        before = self._view_of(part)
        self._remember(key, view)
        record.state_changes = {entry.part: diff_views(before, view)}
        new_parts = parts[: entry.index] + (StatePart(entry.part, key, blob),) + parts[entry.index + 1 :]
        return record, self._state(new_parts)

    def _run(self, func: Callable[..., Any], args: dict[str, Any]) -> tuple[InvocationRecord, Any]:
        t0 = time.perf_counter()
        try:
            if self.call_context is None:
                out = func(**args)
            else:
                with self.call_context():
                    out = func(**args)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of the tool is data for induction
            ms = (time.perf_counter() - t0) * 1000.0
            return InvocationRecord("error", None, {}, error_text(exc), ms), None
        ms = (time.perf_counter() - t0) * 1000.0
        try:
            output = to_jsonable(out)
        except Exception as exc:  # noqa: BLE001
            return InvocationRecord("error", None, {}, f"output is not serializable ({error_text(exc)})", ms), None
        status, error = status_of(output)
        return InvocationRecord(status, output, {}, error, ms), out

    def close(self) -> None:
        self._views.clear()
