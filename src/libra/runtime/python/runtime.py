"""A runtime for plain Python objects: stateful classes and modules of functions, found by introspection.

Why this shape:

- **State** is what a tool can change and a later call can see: each class's one instance (its attributes),
  each tool module's own globals (the non-callable, non-module, non-dunder values that pickle, so a sign-in that
  stores a module-level token, or a module-level catalog, is state without any declaration), and the declared
  ``state_holders`` (state that lives elsewhere or does not pickle, e.g. a process-global context object:
  ``name -> (get, set)`` where ``get()`` returns a picklable copy and ``set(value)`` puts one back; an object
  that defines ``__getstate__``/``__setstate__`` pickles, and so is found without a holder). A call on
  ``Class.method`` sees and changes its instance; ``module.function`` its module's globals; every call the
  holders. The assumption is that a tool only changes those, which holds for independent tool classes.
- States are values made of content-addressed :class:`~libra.runtime.base.StatePart` s (pickled bytes, so the
  given state is never mutated). A small instance is one part; a big one (pickle over 64 KiB) and a module's
  globals are split per attribute, big dicts/lists in chunks (see :mod:`libra.runtime.python.snapshot`), so a call
  costs in proportion to what it touched: one live object per owner is patched to the state asked for, big
  dict/list attributes are write-watched so a call that only reads them is settled without comparing them
  (:mod:`libra.runtime.python.watch`; ``type(x) is dict`` is false for their containers), the sub-parts whose pickled
  bytes changed are the only ones viewed, hashed and diffed, and the worker pool ships only parts a worker does
  not hold. While a runtime is in use it owns its modules' globals: restoring a state
  rebinds them, so another module's ``from tools import CATALOG`` keeps the object it imported.
- **Entropy is fixed per call** (:mod:`libra.runtime.python.entropy`): the clock reads a fixed instant (``clock``,
  default 2025-01-01 12:00 UTC), and ``os.urandom`` (so ``uuid4``, ``secrets``, ``SystemRandom``), the
  module-level ``random`` functions and every ``random.Random`` the owner holds are seeded from (state, tool,
  arguments); all are restored after the call. So a call is a pure function of (state, tool, args): identical
  calls from identical states give identical results, and a read call that draws a number or reads the clock
  does not count as a state change. Views skip generator internals for the same reason (see
  :mod:`libra.runtime.diff`).
- **Rejections** are recognised by the ``rejection`` hook, ``output -> message or None``: by default
  :func:`error_key_rejection` (a returned dict with an ``error`` key is the tool refusing without raising).
  Pass another function to recognise a catalog's own convention, or ``None`` to treat every return as success.

Tool names are ``ClassName.method`` for classes and ``module_short_name.function`` for modules; only public
callables (not starting with ``_``) become tools. ``docs`` replaces the introspected documents (e.g. a
benchmark's official function docs) while keeping the introspected executables.
"""

from __future__ import annotations

import copy
import datetime as _dt
import hashlib
import inspect
import json
import logging
import pickle
import random
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from libra.catalog import Catalog, Tool
from libra.errors import CatalogError
from libra.runtime.base import (
    InvocationRecord,
    State,
    StatePart,
    ToolRuntimeError,
    UnknownToolError,
    error_text,
    parts_fingerprint,
)
from libra.runtime.diff import content_hash, diff_views, object_view  # noqa: F401 - re-exported for callers of the old layout
from libra.runtime.python.calling import run
from libra.runtime.python.entropy import FIXED_NOW, fixed_entropy
from libra.runtime.python.introspect import tool_document
from libra.runtime.python.snapshot import Snapshotter
from libra.runtime.python.snapshot_common import Live, Unsnapshotable, _default_pickling, parse_label
from libra.runtime.workers.guard import UnserializableOutput, to_jsonable

LoadHook = Callable[[Any, Any], None]
Rejection = Callable[[Any], "str | None"]
StateHolder = tuple[Callable[[], Any], Callable[[Any], None]]
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


def module_state(module: ModuleType) -> dict[str, Any]:
    """A module's candidate state: its globals that are data (not callables, classes, modules or dunders).

    Why: module-level tool sets keep their database, session token or settings in globals; functions, classes
    and imported modules are code, dunders are the interpreter's, loggers are the logging system's. Constants are
    included at no cost (their
    sub-parts never change, so they are shared by every state); globals that do not pickle are left out by the
    snapshotter (declare them with ``state_holders``). Identity constants (:func:`is_identity_constant`, e.g. a
    ``_MISSING = object()`` sentinel) are left out: restoring them would rebind the name to an unpickled copy.
    """
    return {
        k: v
        for k, v in vars(module).items()
        if not (k.startswith("__") and k.endswith("__"))
        and not callable(v)
        and not isinstance(v, _NOT_STATE)
        and not is_identity_constant(v)
    }


def is_identity_constant(value: Any) -> bool:
    """Whether a value is an object with no state of its own: a bare ``object()``, or an instance with an empty
    ``__dict__``, no slots and default pickling (a private ``_Missing()`` sentinel).

    Why: such objects are used for who they are (``x is _MISSING``, often also as a function's default), never
    for what they hold, so they cannot carry state; unpickling makes a new object, and rebinding the global to it
    would make every identity check against the function's default fail after a state is restored.
    """
    cls = type(value)
    if cls is object:
        return True
    if isinstance(value, type) or getattr(value, "__dict__", None) != {} or not _default_pickling(cls):
        return False
    return True


#: global values that are machinery, not data: imported modules, ``from __future__`` directives, and loggers
#: (configuration of the logging system whose level caches fill on first use, which would look like a write)
_NOT_STATE: tuple[type, ...] = (ModuleType, type(annotations), logging.Logger)  # annotations: a __future__ feature


def error_key_rejection(output: Any) -> str | None:
    """Default rejection rule: a returned dict with an ``error`` key is a refusal without raising; its message."""
    if isinstance(output, dict) and "error" in output:
        return str(output["error"])
    return None


def status_of(output: Any, rejection: Rejection | None = error_key_rejection) -> tuple[str, str | None]:
    """(status, error) of a returned value under a rejection rule (``None``: every return is a success)."""
    message = rejection(output) if rejection is not None else None
    if message is not None:
        return "rejected", message
    return "success", None


def _call_seed(key: str, tool: str, args: Mapping[str, Any]) -> int:
    blob = json.dumps(args, sort_keys=True, default=repr, ensure_ascii=False)
    # surrogatepass: arguments may hold lone surrogates (from a caller, or an older library), which must seed, not crash
    return int.from_bytes(
        hashlib.blake2b(f"{key}\0{tool}\0{blob}".encode("utf-8", "surrogatepass"), digest_size=8).digest(), "big"
    )


def _rngs(obj: Any) -> list[random.Random]:
    return [v for v in vars(obj).values() if isinstance(v, random.Random)]


@dataclass(frozen=True, slots=True)
class _Entry:
    """How to execute one tool: method ``attr`` of the instance of owner ``part``, or function ``func`` of module owner
    ``part``."""

    part: str | None
    index: int
    attr: str
    func: Callable[..., Any] | None


@dataclass
class _Owner:
    """One stateful thing: a class (its instance), a tool module (its globals) or a declared state holder."""

    name: str
    kind: str  # "class" | "module" | "holder"
    target: Any
    snap: Snapshotter


#: first globals seen of each tool module in this process (name -> pickled {global: value}): every runtime's fresh
#: state starts from them, whatever earlier runtimes left in the module
_MODULE_BASELINE: dict[str, bytes] = {}
#: the live state of each tool module's globals (module name -> parts it holds), shared by all runtimes
_MODULE_LIVE: dict[str, Live] = {}


def _classes_by_name(classes: Sequence[type]) -> dict[str, type]:
    """The tool classes by name; a non-class or two classes of one name are refused (tool names would clash)."""
    by_name: dict[str, type] = {}
    for cls in classes:
        if not isinstance(cls, type):
            raise ToolRuntimeError(f"{cls!r} is not a class: pass classes (not instances) to PythonRuntime")
        if cls.__name__ in by_name:
            raise ToolRuntimeError(f"two classes are named {cls.__name__!r}: tool names would clash, rename one")
        by_name[cls.__name__] = cls
    return by_name


def _check_class_names(option: str, given: Mapping[str, Any], classes: Mapping[str, type]) -> None:
    """Refuse per-class settings (``option``) that name no class of the runtime (a typo would be ignored)."""
    unknown = set(given) - set(classes)
    if unknown:
        raise ToolRuntimeError(f"{option} name unknown class(es) {sorted(unknown)}: use class names {sorted(classes)}")


def _catalog(
    docs: Catalog | Sequence[Mapping[str, Any]] | None,
    entries: Mapping[str, _Entry],
    introspected: list[dict[str, Any]],
    groups: Mapping[str, str],
    name: str,
) -> Catalog:
    """The runtime's catalog: the introspected documents, or ``docs`` when given (every tool it describes must
    have an executable among ``entries``)."""
    if docs is None:
        return Catalog(
            [
                Tool(
                    name=d["name"],
                    description=d["description"],
                    parameters=d["parameters"],
                    response=d.get("response"),
                    group=d.get("group") or groups[d["name"]],
                    metadata=d.get("metadata") or {},
                )
                for d in introspected
            ],
            name=name,
        )
    catalog = docs if isinstance(docs, Catalog) else Catalog.from_dict(list(docs))
    missing = [t.name for t in catalog if t.name not in entries]
    if missing:
        raise CatalogError(
            f"docs describe {len(missing)} tool(s) with no executable (e.g. {missing[0]!r}): "
            f"name tools 'Class.method' or 'module.function' among {len(entries)} found"
        )
    return catalog


class PythonRuntime:
    """Runtime over Python classes (one instance each) and modules of functions (their globals are state).

    ``init_kwargs`` gives per-class constructor arguments; ``load(instance, config)`` is called on each new
    instance with a deep copy of ``config.get(ClassName, {})`` (a task's initial configuration); ``ignore_attrs``
    names attributes left out of views (e.g. timestamps that must not count as a state change); ``call_context``
    is a context-manager factory each call runs in, to pin and then restore process-global settings a library
    keeps outside its instances (precision contexts...). ``state_holders`` declares state the runtime cannot
    find by itself (``name -> (get, set)``, see the module docstring). ``reseed_random`` fixes the random
    sources per call and ``clock`` the instant calls see (``None``: the real clock). ``rejection`` maps a
    returned value to a rejection message or None (default :func:`error_key_rejection`; ``None`` disables).
    ``trusted`` is this runtime's declaration that its tools are pure Python and may run in-process.
    ``names`` renames tools (default name ``Class.method``/``module.function`` -> published name), for catalogs
    whose tools are known by their own names; ``instances`` gives per-class factories that make the instance a
    fresh state starts from (e.g. a user's ``make_shop()``), in place of calling the class.
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
        call_context: Callable[[], AbstractContextManager[Any]] | None = None,
        trusted: bool = False,
        name: str = "python",
        view_cache_size: int = 8192,
        rejection: Rejection | None = error_key_rejection,
        clock: _dt.datetime | None = FIXED_NOW,
        state_holders: Mapping[str, StateHolder] | None = None,
        names: Mapping[str, str] | None = None,
        instances: Mapping[str, Callable[[], Any]] | None = None,
    ) -> None:
        self.trusted = bool(trusted)
        self.classes = _classes_by_name(classes)
        self.init_kwargs = {k: dict(v) for k, v in (init_kwargs or {}).items()}
        _check_class_names("init_kwargs", self.init_kwargs, self.classes)
        self.instances = dict(instances or {})
        _check_class_names("instances", self.instances, self.classes)
        self.load = load
        self.config: dict[str, Any] = dict(config or {})
        self.ignore_attrs = frozenset(ignore_attrs)
        self.reseed_random = reseed_random
        self.call_context = call_context
        self.rejection = rejection
        self.clock = clock
        self._views: OrderedDict[str, Any] = OrderedDict()
        self._view_cache_size = view_cache_size
        self._fresh: State | None = None

        entries, introspected, groups = self._introspect(modules, dict(names or {}))
        self.catalog = _catalog(docs, entries, introspected, groups, name)
        self._entries = {t.name: entries[t.name] for t in self.catalog}
        self._owners: dict[str, _Owner] = {}
        self._add_owners(modules, state_holders or {})
        self._holders = [o for o in self._owners.values() if o.kind == "holder"]
        self._signature = StatePart(
            "",
            "python:"
            + hashlib.sha256("\0".join(f"{o.kind}:{o.name}" for o in self._owners.values()).encode()).hexdigest()[:16],
            b"",
        )
        self._live: dict[str, Live] = {}
        self._layout: OrderedDict[str, dict[str, tuple[StatePart, ...]]] = OrderedDict()
        self._module_fresh: dict[str, tuple[StatePart, ...]] = {}
        for owner in self._owners.values():
            if owner.kind == "module":
                self._module_fresh[owner.name] = self._module_baseline(owner)
            elif owner.kind == "holder":
                self._module_fresh[owner.name] = self._holder_parts(owner, None)[0]

    def _introspect(
        self, modules: Sequence[ModuleType], renamed: dict[str, str]
    ) -> tuple[dict[str, _Entry], list[dict[str, Any]], dict[str, str]]:
        """How to execute each tool (published name -> entry), the introspected documents and each tool's group."""
        entries: dict[str, _Entry] = {}
        introspected: list[dict[str, Any]] = []
        groups: dict[str, str] = {}
        for index, (cname, cls) in enumerate(self.classes.items()):
            for meth in public_methods(cls):
                tname = renamed.get(f"{cname}.{meth}", f"{cname}.{meth}")
                entries[tname] = _Entry(cname, index, meth, None)
                introspected.append(tool_document(tname, getattr(cls, meth)))
                groups[tname] = cname
        for module in modules:
            short = module.__name__.rsplit(".", 1)[-1]
            for fname in public_functions(module):
                tname = renamed.get(f"{short}.{fname}", f"{short}.{fname}")
                if tname in entries:
                    raise ToolRuntimeError(f"tool {tname!r} is defined twice: rename the module or the class")
                func = getattr(module, fname)
                entries[tname] = _Entry(short, -1, fname, func)
                introspected.append(tool_document(tname, func))
                groups[tname] = short
        return entries, introspected, groups

    def _add_owners(self, modules: Sequence[ModuleType], state_holders: Mapping[str, StateHolder]) -> None:
        """One owner per class, per tool module (one with public functions) and per declared state holder."""
        for cname, klass in self.classes.items():
            self._add_owner(
                cname,
                "class",
                klass,
                new_empty=lambda k=klass: k.__new__(k),
                attrs=vars,
                prototype=self._prototype(cname),
            )
        for module in modules:
            short = module.__name__.rsplit(".", 1)[-1]
            if not public_functions(module):
                continue
            if short in self._owners:
                raise ToolRuntimeError(
                    f"a class and a module are both named {short!r}: their states would clash, rename one"
                )
            self._add_owner(
                short, "module", module, new_empty=lambda m=module: m, attrs=module_state, always_split=True, skip=True
            )
        for hname, holder in state_holders.items():
            if (
                hname in self._owners
                or not isinstance(holder, tuple)
                or len(holder) != 2
                or not all(callable(f) for f in holder)
            ):
                raise ToolRuntimeError(
                    f"state holder {hname!r} must be a new name mapped to a (get, set) pair of functions"
                )
            self._add_owner(hname, "holder", holder, new_empty=lambda: None, attrs=lambda v: {}, whole=True)

    def _add_owner(
        self,
        oname: str,
        kind: str,
        target: Any,
        *,
        new_empty: Callable[[], Any],
        attrs: Callable[[Any], dict[str, Any]],
        always_split: bool = False,
        skip: bool = False,
        whole: bool = False,
        prototype: Callable[[], Any] | None = None,
    ) -> None:
        snap = Snapshotter(
            oname,
            attrs,
            new_empty,
            self.ignore_attrs,
            self._remember,
            self._views.get,
            skip_unpicklable=skip,
            whole_only=whole,
            always_split=always_split,
            prototype=prototype,
        )
        self._owners[oname] = _Owner(oname, kind, target, snap)

    def _prototype(self, cname: str) -> Callable[[], Any]:
        """An instance of class ``cname`` built by its constructor (or factory), once per process: where the values
        of attributes that cannot be pickled come from (see :class:`~.snapshot_common.FromConstructor`)."""
        built: list[Any] = []

        def prototype() -> Any:
            if not built:
                make = self.instances.get(cname)
                built.append(make() if make is not None else self.classes[cname](**self.init_kwargs.get(cname, {})))
            return built[0]

        return prototype

    @property
    def state_modules(self) -> tuple[str, ...]:
        """Names of the modules whose globals hold this runtime's state: the tool modules, and those defining the
        state holders' functions (a holder may keep its value there). A worker's guard leaves them alone."""
        names = [o.target.__name__ for o in self._owners.values() if o.kind == "module"]
        names += [getattr(f, "__module__", None) or "" for h in self._holders for f in h.target]
        return tuple(dict.fromkeys(n for n in names if n))

    # -- construction helpers ---------------------------------------------------------------------------
    @classmethod
    def from_classes(cls, classes: Sequence[type], **kwargs: Any) -> PythonRuntime:
        return cls(classes=classes, **kwargs)

    @classmethod
    def from_module(cls, module: ModuleType, **kwargs: Any) -> PythonRuntime:
        return cls(modules=[module], **kwargs)

    # -- states -----------------------------------------------------------------------------------------
    def fresh(self) -> State:
        if self._fresh is None:
            self._fresh = self.load_state(self.config)
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """A new initial state built with ``config`` (class name -> that class's configuration).

        Module globals and declared holders start from what they held when the runtime was built (for modules:
        when this process first saw them), so no earlier call leaks into a fresh state.
        """
        config = dict(config or {})
        unknown = set(config) - set(self.classes)
        if unknown:
            raise ToolRuntimeError(
                f"initial config names unknown class(es) {sorted(unknown)}: use {sorted(self.classes)}"
            )
        by_owner: dict[str, tuple[StatePart, ...]] = {}
        for owner in self._owners.values():
            if owner.kind != "class":
                by_owner[owner.name] = self._module_fresh[owner.name]
                continue
            cname, klass = owner.name, owner.target
            try:
                make = self.instances.get(cname)
                inst = make() if make is not None else klass(**self.init_kwargs.get(cname, {}))
                if self.load is not None:
                    self.load(inst, copy.deepcopy(config.get(cname, {})))
                if self.reseed_random:
                    for rng in _rngs(inst):
                        rng.seed(0)
                parts = owner.snap.snapshot(inst, None)[0]
            except Exception as exc:  # noqa: BLE001 - user code: report which class and why
                raise ToolRuntimeError(
                    f"cannot build the initial {cname} instance ({error_text(exc)}): check init_kwargs/config"
                ) from exc
            self._live[cname] = Live(inst, {p.name: p.key for p in parts})
            by_owner[cname] = parts
        return self._state(by_owner)

    def _module_baseline(self, owner: _Owner) -> tuple[StatePart, ...]:
        """The module's fresh parts: its globals as this process first saw them (restored into it if need be)."""
        module = owner.target
        base = _MODULE_BASELINE.get(module.__name__)
        if base is None:
            picklable = {}
            for k, v in module_state(module).items():
                try:
                    pickle.dumps(v, _PICKLE)
                except Exception:  # noqa: BLE001 - not picklable: not state (declare a holder for it)
                    continue
                picklable[k] = v
            base = _MODULE_BASELINE[module.__name__] = pickle.dumps(picklable, _PICKLE)  # one pickle keeps sharing
        else:
            values = pickle.loads(base)
            for k in set(module_state(module)) - set(values):
                if self._was_created(module, k):
                    delattr(module, k)
            for k, v in values.items():
                setattr(module, k, v)
        _MODULE_LIVE.pop(module.__name__, None)
        try:
            parts = owner.snap.snapshot(module, None)[0]
        except Exception as exc:  # noqa: BLE001
            raise ToolRuntimeError(
                f"cannot snapshot the globals of module {module.__name__!r} ({error_text(exc)})"
            ) from exc
        _MODULE_LIVE[module.__name__] = Live(module, {p.name: p.key for p in parts})
        return parts

    @staticmethod
    def _was_created(module: ModuleType, name: str) -> bool:
        """A global absent from the baseline that pickles was created by a call (unpicklable ones predate us)."""
        try:
            pickle.dumps(getattr(module, name), _PICKLE)
        except Exception:  # noqa: BLE001
            return False
        return True

    def _holder_parts(
        self, owner: _Owner, previous: tuple[StatePart, ...] | None
    ) -> tuple[tuple[StatePart, ...], list[StatePart], list[StatePart]]:
        getter = owner.target[0]
        try:
            return owner.snap.snapshot(getter(), previous)
        except Exception as exc:  # noqa: BLE001
            raise Unsnapshotable(f"state holder {owner.name!r}: {error_text(exc)}") from exc

    def _state(self, by_owner: Mapping[str, tuple[StatePart, ...]]) -> State:
        parts = (self._signature,) + tuple(p for o in self._owners for p in by_owner[o])
        state = State(parts_fingerprint(parts), parts)
        self._cache_layout(state.fingerprint, dict(by_owner))
        return state

    def _cache_layout(self, fingerprint: str, by_owner: dict[str, tuple[StatePart, ...]]) -> None:
        self._layout[fingerprint] = by_owner
        self._layout.move_to_end(fingerprint)
        while len(self._layout) > 1024:
            self._layout.popitem(last=False)

    def _by_owner(self, state: State) -> dict[str, tuple[StatePart, ...]]:
        """The state's parts grouped by owner (checking that this runtime made the state)."""
        parts = state.payload if isinstance(state, State) else None
        if not isinstance(parts, tuple) or not parts or getattr(parts[0], "key", None) != self._signature.key:
            raise ToolRuntimeError("this state was not made by this runtime: get states from its fresh()/invoke()")
        cached = self._layout.get(state.fingerprint)
        if cached is not None:
            self._layout.move_to_end(state.fingerprint)
            return cached
        grouped: dict[str, list[StatePart]] = {o: [] for o in self._owners}
        for p in parts[1:]:
            bucket = grouped.get(parse_label(p.name)[0])
            if bucket is None:
                raise ToolRuntimeError("this state was not made by this runtime: get states from its fresh()/invoke()")
            bucket.append(p)
        by_owner = {o: tuple(ps) for o, ps in grouped.items()}
        self._cache_layout(state.fingerprint, by_owner)
        return by_owner

    def _remember(self, key: str, view: Any) -> None:
        self._views[key] = view
        self._views.move_to_end(key)
        while len(self._views) > self._view_cache_size:
            self._views.popitem(last=False)

    def view(self, state: State) -> dict[str, Any]:
        """The whole state as JSON data (owner name -> view): for debugging and contract authoring."""
        by_owner = self._by_owner(state)
        return {o.name: o.snap.view(by_owner[o.name]) for o in self._owners.values()}

    # -- live objects -----------------------------------------------------------------------------------
    def _enter(self, owner: _Owner, parts: tuple[StatePart, ...]) -> Any:
        """Make the owner's live object hold ``parts`` (patching only what differs) and return it."""
        if owner.kind == "class":
            live = owner.snap.restore(self._live.get(owner.name), parts)
            self._live[owner.name] = live
            return live.obj
        if owner.kind == "module":
            module = owner.target
            snap = owner.snap
            live = snap.restore(
                _MODULE_LIVE.get(module.__name__), parts, tracked=lambda m: set(module_state(m)) - snap.unpicklable
            )
            _MODULE_LIVE[module.__name__] = live
            return module
        wanted = {p.name: p.key for p in parts}
        live = self._live.get(owner.name)
        if live is None or live.keys != wanted:
            owner.target[1](pickle.loads(parts[0].data))
            self._live[owner.name] = Live(None, wanted)
        return None

    def _live_of(self, owner: _Owner) -> Live | None:
        return _MODULE_LIVE.get(owner.target.__name__) if owner.kind == "module" else self._live.get(owner.name)

    def _leave(self, owner: _Owner, parts: tuple[StatePart, ...] | None) -> None:
        """Record what the live object holds after a call (None: unknown, rebuild it next time)."""
        store = _MODULE_LIVE if owner.kind == "module" else self._live
        key = owner.target.__name__ if owner.kind == "module" else owner.name
        if parts is None:
            store.pop(key, None)
        elif key in store:
            store[key].keys = {p.name: p.key for p in parts}
        else:
            store[key] = Live(None, {p.name: p.key for p in parts})

    # -- calls ------------------------------------------------------------------------------------------
    def entry(self, tool: str) -> _Entry:
        entry = self._entries.get(tool)
        if entry is None:
            raise UnknownToolError(
                f"unknown tool {tool!r}: runtime {self.catalog.name!r} has {len(self._entries)} tools named "
                f"like {next(iter(self._entries), '?')!r}"
            )
        return entry

    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        entry = self.entry(tool)
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
        by_owner = self._by_owner(state)
        args = dict(args)
        owner = self._owners[entry.part]  # type: ignore[index]
        touched = [owner, *self._holders]
        try:
            target = self._enter(owner, by_owner[owner.name])
            for holder in self._holders:
                self._enter(holder, by_owner[holder.name])
        except Exception as exc:  # noqa: BLE001 - a part that no longer unpickles (code changed under it)
            for o in touched:
                self._leave(o, None)
            raise ToolRuntimeError(
                f"cannot restore the state of {owner.name!r} for {tool!r} ({error_text(exc)})"
            ) from exc
        seed = _call_seed("\0".join(p.key for o in touched for p in by_owner[o.name]), tool, args)
        rngs = _rngs(target) if self.reseed_random else []
        for i, rng in enumerate(rngs):
            rng.seed(seed + i)
        func = getattr(target, entry.attr) if owner.kind == "class" else entry.func
        with fixed_entropy(seed, self.clock, self.reseed_random):
            record, _ = self._run(func, args)  # type: ignore[arg-type]
        for rng in rngs:
            rng.seed(0)
        changes: dict[str, Any] = {}
        new_by_owner = dict(by_owner)
        for o in touched:
            previous = by_owner[o.name]
            try:
                if o.kind == "holder":
                    parts, removed, added = self._holder_parts(o, previous)
                else:
                    parts, removed, added = o.snap.snapshot(target, previous, self._live_of(o))
            except Exception as exc:  # noqa: BLE001 - a tool left something unpicklable in its state
                for t in touched:
                    self._leave(t, None)
                record = InvocationRecord(
                    "error",
                    None,
                    {},
                    f"state cannot be snapshotted after the call ({error_text(exc)})",
                    record.duration_ms,
                )
                return record, state
            if parts is previous:
                continue
            self._leave(o, parts)
            changes[o.name] = o.snap.diff(removed, added)
            new_by_owner[o.name] = parts
        if not changes:
            return record, state
        record.state_changes = changes
        return record, self._state(new_by_owner)

    def _run(self, func: Callable[..., Any], args: dict[str, Any]) -> tuple[InvocationRecord, Any]:
        t0 = time.perf_counter()
        try:
            if self.call_context is None:
                out = run(func, args)
            else:
                with self.call_context():
                    out = run(func, args)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of the tool is data for induction
            ms = (time.perf_counter() - t0) * 1000.0
            return InvocationRecord("error", None, {}, error_text(exc), ms), None
        ms = (time.perf_counter() - t0) * 1000.0
        try:
            output = to_jsonable(out)
        except UnserializableOutput as exc:  # cyclic, an int too long to print, or over the record cap: it says which
            return InvocationRecord("error", None, {}, str(exc), ms), None
        except Exception as exc:  # noqa: BLE001 - e.g. a property that raises while the output is read
            return InvocationRecord("error", None, {}, f"output is not serializable ({error_text(exc)})", ms), None
        status, error = status_of(output, self.rejection)
        return InvocationRecord(status, output, {}, error, ms), out

    def close(self) -> None:
        self._views.clear()
        self._live.clear()
        self._layout.clear()
