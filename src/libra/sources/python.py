"""A user's own Python tools as a catalog: ``--tools [NAMESPACE=]MODULE_OR_FILE[:OBJECT]``.

A *source* names where tools live, in one of three shapes, each the way people already write tools:

- ``pkg.module`` or ``path/to/tools.py``: a module of functions (its public functions defined in it are the
  tools; its globals are state, see :mod:`libra.runtime.python.runtime`);
- ``...:ClassName``: a class, called with no arguments for every fresh state (its public methods are the tools);
- ``...:make_thing``: a factory function returning an instance, called for every fresh state (the public
  methods of the instance's class are the tools), for classes that need constructor arguments.

Tools are published under their **own names** (``search_products``), because that is how their authors and
their agents know them. Only names that clash between sources are qualified (``Shop.search`` and
``admin_tools.search``, the Python runtime's own names), and a source given as ``NAMESPACE=SOURCE`` has all its
tools named ``NAMESPACE.tool``.

Everything is checked when the source is resolved, before any build work: a module that does not import, an
object that is not there, a source with no tools, a class that cannot be made without arguments, a required
parameter with neither a type hint nor ``@tool(examples=...)`` (nothing would say what value to pass it) all
raise :class:`~libra.errors.ConfigError` with one line saying what to change.

Builds run tools in isolated worker processes, which rebuild the runtime themselves: :func:`make_tools_runtime`
is a module-level function of the source texts only, so the factory pickles.
"""

from __future__ import annotations

import difflib
import functools
import importlib
import importlib.util
import inspect
import os
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from libra.catalog import Catalog
from libra.errors import ConfigError
from libra.sources.base import ToolSource

_NAMESPACE = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_IDENT_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
#: The module-level mapping a tool module may define: facts about its fresh state any caller knows (a test
#: account's credentials). Builds offer them as inputs, as a benchmark's ``fixtures()``.
FIXTURES_NAME = "FIXTURES"


@dataclass(frozen=True)
class ToolSpec:
    """One ``--tools`` value, parsed: ``namespace=target:obj`` (``namespace`` and ``obj`` optional)."""

    target: str
    obj: str | None = None
    namespace: str | None = None

    @property
    def is_file(self) -> bool:
        """A file path (ends in ``.py`` or has a path separator), else a dotted module name."""
        return self.target.endswith(".py") or "/" in self.target or os.sep in self.target

    def text(self) -> str:
        return (f"{self.namespace}=" if self.namespace else "") + self.target + (f":{self.obj}" if self.obj else "")


def parse_spec(text: str, namespace: str | None = None) -> ToolSpec:
    """Parse ``[NAMESPACE=]MODULE_OR_FILE[:OBJECT]``; ``namespace`` (from a project file) applies when the text has
    none."""
    raw = text.strip()
    if not raw:
        raise ConfigError(
            "a tools source must not be empty: give MODULE, MODULE:OBJECT, path/to/file.py[:OBJECT], "
            "optionally NAMESPACE=..."
        )
    head, eq, rest = raw.partition("=")
    if eq and _NAMESPACE.match(head.strip()):
        namespace, raw = head.strip(), rest.strip()
    target, colon, obj = raw.rpartition(":")
    if not colon or not _IDENT_PATH.match(obj):
        target, obj = raw, ""
    if not target:
        raise ConfigError(f"tools source {text!r} names no module or file before ':'")
    if namespace is not None and not _NAMESPACE.match(namespace):
        raise ConfigError(
            f"namespace {namespace!r} must start with a letter and hold only letters, digits, '_' and '-'"
        )
    spec = ToolSpec(target, obj or None, namespace)
    if not spec.is_file and not _IDENT_PATH.match(target):
        raise ConfigError(f"tools source {text!r}: {target!r} is neither a dotted module name nor a path to a .py file")
    return spec


# -- importing --------------------------------------------------------------------------------------------------
def _import_file(path_text: str) -> ModuleType:
    """Import a ``.py`` file as the module named by its stem, with its folder on ``sys.path`` (so it imports its
    neighbours as it would when run as a script). The name must be the same in every process: states pickle
    objects of the module's classes by module name, and worker processes import the file again."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise ConfigError(
            f"no Python file at {path_text}"
            + (" (it is a directory: name a .py file, or the package as a dotted module)" if path.is_dir() else "")
        )
    path = path.resolve()
    name = path.stem
    if not name.isidentifier():
        raise ConfigError(
            f"{path_text}: the file name {path.name!r} is not a valid module name (rename it with letters, "
            "digits and '_')"
        )
    loaded = sys.modules.get(name)
    if loaded is not None:
        if Path(getattr(loaded, "__file__", "") or "").resolve() == path:
            return loaded
        raise ConfigError(
            f"{path_text}: a module named {name!r} is already imported from "
            f"{getattr(loaded, '__file__', None) or 'built-ins'}: rename the file"
        )
    spec = importlib.util.spec_from_file_location(name, path)
    if path.suffix != ".py" or spec is None or spec.loader is None:
        raise ConfigError(f"{path_text}: not a Python file (name a .py file)")
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        sys.modules.pop(name, None)
        if added:
            sys.path.remove(folder)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ConfigError(f"cannot import {path_text}: {type(exc).__name__}: {exc}") from None
    return module


def _import_module(name: str) -> ModuleType:
    """Import a dotted module; the working directory is searched too, as ``python -m`` would."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            raise ConfigError(
                f"no module named {name!r} (not installed, and not under the current directory or PYTHONPATH)"
            ) from None
        raise ConfigError(f"cannot import {name}: {type(exc).__name__}: {exc}") from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's module failed while importing: say how, in one line
        raise ConfigError(f"cannot import {name}: {type(exc).__name__}: {exc}") from None


def import_target(spec: ToolSpec) -> ModuleType:
    return _import_file(spec.target) if spec.is_file else _import_module(spec.target)


# -- resolving ----------------------------------------------------------------------------------------------------
@dataclass
class Source:
    """A resolved source: the module, and the class with its instance factory when it names one."""

    spec: ToolSpec
    module: ModuleType
    cls: type | None = None
    factory: Callable[[], Any] | None = None
    #: default (Python runtime) name -> (bare name, function)
    tools: dict[str, tuple[str, Callable[..., Any]]] = field(default_factory=dict)

    @property
    def owner(self) -> str:
        """The runtime's owner of this source's state (class name or module short name)."""
        return self.cls.__name__ if self.cls is not None else self.module.__name__.rsplit(".", 1)[-1]


def _required_args(func: Callable[..., Any]) -> list[str]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in params
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def _lookup(module: ModuleType, spec: ToolSpec) -> Any:
    obj: Any = module
    for part in (spec.obj or "").split("."):
        if not hasattr(obj, part):
            names = [n for n in vars(module) if not n.startswith("_")]
            close = difflib.get_close_matches(part, names, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{spec.target} has no {spec.obj!r}{hint}")
        obj = getattr(obj, part)
    return obj


def resolve(spec: ToolSpec) -> Source:
    """Import the source and find its tools; every problem is a :class:`ConfigError` naming the source."""
    from libra.runtime.python.runtime import public_functions, public_methods

    module = import_target(spec)
    where = spec.text()
    if spec.obj is None:
        names = public_functions(module)
        if not names:
            classes = [
                n
                for n, v in vars(module).items()
                if isinstance(v, type) and v.__module__ == module.__name__ and not n.startswith("_")
            ]
            hint = f": name a class or factory, e.g. {spec.target}:{classes[0]}" if classes else ""
            raise ConfigError(f"{where} defines no public functions, so it has no tools{hint}")
        short = module.__name__.rsplit(".", 1)[-1]
        source = Source(spec, module, tools={f"{short}.{n}": (n, getattr(module, n)) for n in names})
    else:
        obj = _lookup(module, spec)
        if isinstance(obj, type):
            missing = _required_args(obj)
            if missing:
                raise ConfigError(
                    f"{where}: class {obj.__name__} needs constructor arguments {missing}: name a factory "
                    "function that returns an instance instead"
                )
            cls, factory = obj, None
        elif inspect.isfunction(obj) or inspect.isbuiltin(obj):
            missing = _required_args(obj)
            if missing:
                raise ConfigError(
                    f"{where}: factory {spec.obj} needs arguments {missing}: a factory is called with none"
                )
            try:
                instance = obj()
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # noqa: BLE001 - the user's factory failed: say how, in one line
                raise ConfigError(f"{where}: calling {spec.obj}() failed: {type(exc).__name__}: {exc}") from None
            cls, factory = type(instance), obj
            if cls.__module__ == "builtins" or isinstance(instance, ModuleType):
                raise ConfigError(
                    f"{where}: factory {spec.obj} returned a {cls.__name__}, not an instance of a class with "
                    "tool methods"
                )
        else:
            raise ConfigError(f"{where}: {spec.obj} is a {type(obj).__name__}, not a class or a factory function")
        methods = public_methods(cls)
        if not methods:
            raise ConfigError(f"{where}: class {cls.__name__} has no public methods, so it has no tools")
        source = Source(spec, module, cls, factory, {f"{cls.__name__}.{m}": (m, getattr(cls, m)) for m in methods})
    _check_hints(source)
    return source


def _check_hints(source: Source) -> None:
    """A required parameter needs a type hint or examples: without either nothing says what value to pass it,
    and every call of the tool would be a guess. Every such parameter is named at once, so one run shows them all."""
    from libra.decorators import hints_of

    missing = []
    for bare, func in source.tools.values():
        marks = hints_of(func)
        try:
            params = inspect.signature(func).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if p.name in ("self", "cls") or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not p.empty:
                continue
            if p.annotation is p.empty and not (marks and p.name in marks.examples):
                missing.append((bare, p.name))
    if missing:
        where = ", ".join(f"{tool}({param})" for tool, param in missing)
        tool, param = missing[0]
        raise ConfigError(
            f"{source.spec.text()}: no type hint for {len(missing)} required parameter(s): {where}; annotate them "
            f"(e.g. {param}: str) or give @libra.tool(examples={{{param!r}: [...]}})"
        )


def untestable_parameters(sources: Sequence[Source]) -> dict[str, dict[str, str]]:
    """Tool -> parameters no JSON value can build, with their types (see
    :func:`libra.runtime.python.calling.untestable`)."""
    from libra.runtime.python.calling import untestable

    names = published_names(sources)
    out = {}
    for source in sources:
        for key, (_bare, func) in source.tools.items():
            found = untestable(func)
            if found:
                out[names.get(key, key)] = found
    return out


def published_names(sources: Sequence[Source]) -> dict[str, str]:
    """Default runtime name -> published name for every tool of ``sources``.

    A namespaced source publishes ``namespace.tool``; others publish the bare name, except names two tools
    share, which keep the runtime's qualified names (``Class.method``, ``module.function``) so neither wins.
    """
    bare_counts = Counter(bare for s in sources if not s.spec.namespace for bare, _ in s.tools.values())
    names: dict[str, str] = {}
    for s in sources:
        for default, (bare, _) in s.tools.items():
            if s.spec.namespace:
                names[default] = f"{s.spec.namespace}.{bare}"
            else:
                names[default] = bare if bare_counts[bare] == 1 else default
    taken = Counter(names.values())
    clashes = sorted(n for n, c in taken.items() if c > 1)
    if clashes:
        raise ConfigError(
            f"tool name(s) {', '.join(clashes)} would be published twice: give one of the sources a "
            "namespace (NAMESPACE=SOURCE)"
        )
    return names


def resolve_all(specs: Sequence[ToolSpec]) -> list[Source]:
    """Resolve every source, refusing the same class or module given twice (its tools would be listed twice)."""
    sources = [resolve(s) for s in specs]
    owners = Counter(s.owner for s in sources)
    twice = sorted(o for o, c in owners.items() if c > 1)
    if twice:
        raise ConfigError(
            f"tools source(s) {', '.join(twice)} are given twice (or two sources share that name): give each once"
        )
    published_names(sources)
    return sources


def fixtures_of(sources: Sequence[Source]) -> dict[str, Any]:
    """The union of the sources' module-level :data:`FIXTURES` mappings (a key two modules disagree on is refused)."""
    out: dict[str, Any] = {}
    seen: set[str] = set()
    for s in sources:
        if s.module.__name__ in seen:
            continue
        seen.add(s.module.__name__)
        fixtures = getattr(s.module, FIXTURES_NAME, None)
        if fixtures is None:
            continue
        if not isinstance(fixtures, dict):
            raise ConfigError(
                f"{s.spec.target}: {FIXTURES_NAME} must be a dict of fact name -> value, got {type(fixtures).__name__}"
            )
        for k, v in fixtures.items():
            if k in out and out[k] != v:
                raise ConfigError(f"fixture {k!r} has two different values in two tool modules: keep one")
            out[str(k)] = v
    return out


def runtime_of(sources: Sequence[Source], name: str = "tools") -> Any:
    """An in-process :class:`~libra.runtime.python.runtime.PythonRuntime` over resolved sources (trusted: the user's own
    code, which ``--workers 0`` asks to run in-process)."""
    from libra.runtime.base import ToolRuntimeError
    from libra.runtime.python.runtime import PythonRuntime

    classes = [s.cls for s in sources if s.cls is not None]
    modules = list({s.module.__name__: s.module for s in sources if s.cls is None}.values())
    instances = {s.cls.__name__: s.factory for s in sources if s.cls is not None and s.factory is not None}
    try:
        return PythonRuntime(
            classes=classes,
            modules=modules,
            names=published_names(sources),
            instances=instances,
            trusted=True,
            name=name,
        )
    except ToolRuntimeError as exc:
        raise ConfigError(f"tools sources: {exc}") from None


def add_search_path(folders: Sequence[str]) -> None:
    """Let dotted module names be found in ``folders`` too (a project file's folder), after what is there."""
    for folder in folders:
        if folder not in sys.path:
            sys.path.append(folder)


def make_tools_runtime(
    specs: tuple[str, ...], cwd: str | None = None, name: str = "tools", search: tuple[str, ...] = ()
) -> Any:
    """The runtime of ``specs`` (source texts, ``namespace=`` included), built from scratch: the picklable
    factory worker processes call. ``cwd`` is the directory relative file paths and module names are found
    from (the parent's, so a worker started elsewhere finds the same files); ``search`` adds folders where
    dotted modules are looked for (a project file's own folder)."""
    add_search_path(([cwd] if cwd else []) + list(search))
    parsed = [parse_spec(s) for s in specs]
    if cwd:
        parsed = [
            ToolSpec(str(Path(cwd, p.target)), p.obj, p.namespace)
            if p.is_file and not Path(p.target).is_absolute()
            else p
            for p in parsed
        ]
    return runtime_of(resolve_all(parsed), name)


def runtime_factory(specs: Sequence[ToolSpec], name: str = "tools", search: Sequence[str] = ()) -> Callable[[], Any]:
    """A picklable zero-argument factory of the runtime of ``specs``."""
    return functools.partial(make_tools_runtime, tuple(s.text() for s in specs), os.getcwd(), name, tuple(search))


class PythonSource(ToolSource):
    """Python tool sources (and project settings) as one source; everything is resolved and checked here, in the
    constructor, so a bad source ends a command before any work. ``search`` adds folders where dotted module
    names are found (a project file's folder), in this process and in every worker."""

    description = "your own tools"

    def __init__(
        self,
        specs: Sequence[Any],
        *,
        name: str | None = None,
        fixtures: dict[str, Any] | None = None,
        search: Sequence[str] = (),
    ) -> None:
        self.specs = tuple(specs)
        self.search = tuple(str(s) for s in search)
        add_search_path(self.search)
        if not self.specs:
            raise ConfigError("no tools given: name a source with --tools MODULE[:OBJECT] or a [[python]] table")
        self.sources = resolve_all(self.specs)
        self.name = name or "+".join(dict.fromkeys(s.owner for s in self.sources))
        module_fixtures = fixtures_of(self.sources)
        clash = sorted(
            k for k in set(module_fixtures) & set(fixtures or {}) if module_fixtures[k] != (fixtures or {})[k]
        )
        if clash:
            raise ConfigError(
                f"fixture(s) {', '.join(clash)} have one value in the tool module and another in the project "
                "file: keep one"
            )
        self._fixtures = {**module_fixtures, **(fixtures or {})}
        runtime = runtime_of(self.sources, self.name)
        try:
            self._catalog: Catalog = runtime.catalog
        finally:
            runtime.close()

    def catalog(self) -> Catalog:
        return self._catalog

    def fixtures(self) -> dict[str, Any]:
        return dict(self._fixtures)

    def untestable(self) -> dict[str, dict[str, str]]:
        return untestable_parameters(self.sources)

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kwargs: Any) -> Any:
        """In-process when not isolated (``--workers 0``); else workers that each rebuild the runtime from the
        source texts (:func:`libra.sources.python.make_tools_runtime`)."""
        if not isolated:
            return runtime_of(self.sources, self.name)
        from libra.runtime.workers.isolation import IsolatedRuntime

        return IsolatedRuntime(runtime_factory(self.specs, self.name, self.search), n_workers=n_workers, **kwargs)


#: The name this class had when every build input was a benchmark.
ToolsBenchmark = PythonSource
