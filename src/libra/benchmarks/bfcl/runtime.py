"""BFCL's 8 multi-turn API classes as a tool set: their catalog and their executable runtime (on top of
:class:`~libra.runtime.python.runtime.PythonRuntime`).

This module owns what the catalog and the runtime share, the table of classes (:data:`CLASS_MODULES`), and the
catalog itself (:func:`load_catalog`, the official function docs). :mod:`libra.benchmarks.bfcl.adapter` adds what makes
the tool set a benchmark (tasks, gold, the sandbox scenario, fixtures) and imports from here, never the reverse.

Tools are ``Class.function`` with the official function docs of :func:`load_catalog`.
Fresh state = every class loaded with its default scenario (config ``{}``), or with a task's ``initial_config``.

Sources of non-determinism in the ``bfcl_eval`` back ends, and how they are handled:

- ``self._random`` generators (MessageAPI, TradingBot, TravelAPI, VehicleControlAPI): reseeded per call from
  (state, tool, args) by the generic runtime, so ids and "sensor readings" are a function of the call.
- Wall clock: ``File._last_modified`` (GorillaFileSystem) and ``datetime.today()`` (TravelAPI's age check) read
  the clock; both modules get a clock frozen at TradingBot's ``CURRENT_TIME`` (2024-09-01 10:30), and
  ``_last_modified`` is left out of views.
- Process-global precision: ``MathAPI.logarithm`` sets ``mpmath.mp.dps`` and ``square_root`` sets the decimal
  context's ``prec``, which would leak into later calls (and into the caller, in-process); every call runs at
  the default precisions and the previous ones are restored after it.
- ``_load_scenario`` keeps references into the config dict and module-level ``DEFAULT_STATE`` dicts are only
  ever deep-copied by it, so each load gets a deep copy of the config. ``LONG_WEATHER_EXTENSION`` is mutated
  only with ``long_context=True``, which this runtime never uses.

The clock patch replaces module attributes of ``bfcl_eval`` in the process that builds the runtime (a worker, or
the caller in trusted in-process mode); nothing outside those two modules is affected.
"""

from __future__ import annotations

import contextlib
import copy
import datetime as _dt
import decimal
import functools
import importlib
import json
import types
from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from libra.catalog import Catalog, Tool
from libra.errors import CatalogError, MissingDependencyError
from libra.runtime.base import Runtime
from libra.runtime.python.runtime import PythonRuntime, error_key_rejection

_PKG = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
#: class name -> module under func_source_code (also the function-doc file stem)
CLASS_MODULES: dict[str, str] = {
    "GorillaFileSystem": "gorilla_file_system",
    "MathAPI": "math_api",
    "MessageAPI": "message_api",
    "TwitterAPI": "posting_api",
    "TicketAPI": "ticket_api",
    "TradingBot": "trading_bot",
    "TravelAPI": "travel_booking",
    "VehicleControlAPI": "vehicle_control",
}
INSTALL_HINT = "install it with: pip install --no-deps 'bfcl-eval==2026.3.23' mpmath  (or run: make setup)"
FUNC_DOC_DIR = "multi_turn_func_doc"  # under bfcl_eval's data folder: one JSON-lines file per class

# BFCL's docs use Python-ish type names; JSON Schema wants these.
_TYPE_MAP = {
    "dict": "object",
    "float": "number",
    "tuple": "array",
    "list": "array",
    "int": "integer",
    "str": "string",
    "bool": "boolean",
}


def data_dir() -> Path:
    """The data folder of the installed ``bfcl-eval``; a one-line install hint when it or its docs are missing."""
    try:
        root = resources.files("bfcl_eval")
    except ModuleNotFoundError:
        raise MissingDependencyError(f"the BFCL benchmark needs the bfcl-eval package: {INSTALL_HINT}") from None
    path = Path(str(root)) / "data"
    if not (path / FUNC_DOC_DIR).is_dir():
        raise MissingDependencyError(
            f"bfcl-eval is installed but {path / FUNC_DOC_DIR} is missing: reinstall it ({INSTALL_HINT})"
        )
    return path


def to_json_schema(schema: Any) -> Any:
    """Translate BFCL's type names ("dict", "float", "tuple", "any") into JSON Schema, recursively."""
    if isinstance(schema, list):
        return [to_json_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = _TYPE_MAP.get(value, value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {k: to_json_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = to_json_schema(value)
        else:
            out[key] = value
    return out


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """One JSON record per non-empty line of a file shipped with bfcl-eval."""
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, json.JSONDecodeError) as exc:
        raise CatalogError(
            f"cannot read BFCL file {path}: {exc.__class__.__name__}: reinstall bfcl-eval ({INSTALL_HINT})"
        ) from None


@lru_cache(maxsize=1)
def raw_docs() -> tuple[tuple[str, dict[str, Any]], ...]:
    """(class name, official function doc) for every function of every class, in table order."""
    root = data_dir() / FUNC_DOC_DIR
    out = []
    for cls, stem in CLASS_MODULES.items():
        for doc in read_jsonl(root / f"{stem}.json"):
            out.append((cls, doc))
    return tuple(out)


#: Values BFCL's travel backend accepts where its metadata only says "the location the travel is from": its
#: flights are between airports written as IATA codes, and its classes are economy/business/first. Written into
#: the parameters as JSON Schema ``examples`` (this is the catalog's knowledge, not the generic proposer's).
PARAMETER_EXAMPLES: dict[tuple[str, str], dict[str, list[Any]]] = {
    ("TravelAPI", "book_flight"): {"travel_from": ["JFK"], "travel_to": ["LAX"], "travel_class": ["economy"]},
    ("TravelAPI", "get_flight_cost"): {"travel_from": ["JFK"], "travel_to": ["LAX"]},
}


def _with_examples(cls: str, function: str, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with :data:`PARAMETER_EXAMPLES` written into the named properties' ``examples``."""
    for pname, examples in PARAMETER_EXAMPLES.get((cls, function), {}).items():
        prop = (params.get("properties") or {}).get(pname)
        if isinstance(prop, dict) and "examples" not in prop:
            prop["examples"] = list(examples)
    return params


def load_catalog() -> Catalog:
    """The 128 multi-turn functions as ``Class.function`` tools."""
    tools = []
    for cls, doc in raw_docs():
        params = to_json_schema(doc.get("parameters") or {"type": "object", "properties": {}})
        params.setdefault("type", "object")
        params = _with_examples(cls, doc["name"], params)
        response = to_json_schema(doc["response"]) if doc.get("response") else None
        tools.append(
            Tool(
                name=f"{cls}.{doc['name']}",
                description=doc.get("description", ""),
                parameters=params,
                response=response,
                group=cls,
            )
        )
    return Catalog(tools, name="bfcl")


FROZEN_NOW = _dt.datetime(2024, 9, 1, 10, 30)
IGNORE_ATTRS = ("_last_modified", "_api_description", "long_context")


class _FrozenDatetime(_dt.datetime):
    """``datetime`` whose ``now``/``today`` are a fixed instant; everything else (strptime...) is inherited."""

    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW if tz is None else FROZEN_NOW.replace(tzinfo=tz)

    @classmethod
    def today(cls) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW

    @classmethod
    def utcnow(cls) -> _dt.datetime:  # type: ignore[override]
        return FROZEN_NOW


def _import(module: str) -> types.ModuleType:
    try:
        return importlib.import_module(f"{_PKG}.{module}")
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            f"the BFCL runtime needs bfcl-eval and mpmath ({exc.name} is missing): "
            "pip install --no-deps 'bfcl-eval==2026.3.23' mpmath"
        ) from None


def _freeze_clocks() -> None:
    fs = _import("gorilla_file_system")
    if not getattr(fs.datetime, "_libra_frozen", False):
        frozen = types.ModuleType("datetime")
        frozen.__dict__.update({k: v for k, v in vars(_dt).items() if not k.startswith("__")})
        frozen.datetime = _FrozenDatetime  # type: ignore[attr-defined]
        frozen._libra_frozen = True  # type: ignore[attr-defined]
        fs.datetime = frozen
    travel = _import("travel_booking")
    travel.datetime = _FrozenDatetime


@contextlib.contextmanager
def _default_precision() -> Iterator[None]:
    """Run a call at default mpmath/decimal precision and restore the caller's afterwards."""
    import mpmath

    saved = mpmath.mp.dps
    mpmath.mp.dps = 15
    try:
        with decimal.localcontext(decimal.Context()):
            yield
    finally:
        mpmath.mp.dps = saved


def _load_scenario(instance: Any, config: Any) -> None:
    load = getattr(instance, "_load_scenario", None)
    if load is not None:  # MathAPI is stateless and has none
        load(copy.deepcopy(config), long_context=False)


def bfcl_classes() -> list[type]:
    return [getattr(_import(module), cname) for cname, module in CLASS_MODULES.items()]


def build_bfcl_python_runtime(
    catalog: Catalog | None = None, initial_config: Mapping[str, Any] | None = None
) -> PythonRuntime:
    """The in-process BFCL runtime; also what each isolated worker builds."""
    _freeze_clocks()
    return PythonRuntime(
        classes=bfcl_classes(),
        docs=catalog if catalog is not None else load_catalog(),
        load=_load_scenario,
        config=dict(initial_config or {}),
        ignore_attrs=IGNORE_ATTRS,
        call_context=_default_precision,
        trusted=True,  # pure Python, deepcopy/pickle-safe back ends
        name="bfcl",
        rejection=error_key_rejection,  # the back ends refuse a call by returning {"error": message}
    )


def make_bfcl_runtime(
    catalog: Catalog | None = None,
    initial_config: Mapping[str, Any] | None = None,
    isolated: bool | None = None,
    **pool_options: Any,
) -> Runtime:
    """The BFCL runtime: in-process when ``isolated`` is false or left to the runtime's trusted declaration.

    ``pool_options`` go to :class:`~libra.runtime.workers.isolation.IsolatedRuntime` (``n_workers``, ``timeout_s``,
    ``memory_mb``, ``allow_network``...).
    """
    factory = functools.partial(build_bfcl_python_runtime, catalog, dict(initial_config or {}))
    if isolated is None:
        isolated = False  # the BFCL back ends declare themselves trusted
    if not isolated:
        return factory()
    from libra.runtime.workers.isolation import IsolatedRuntime

    return IsolatedRuntime(factory, **pool_options)
