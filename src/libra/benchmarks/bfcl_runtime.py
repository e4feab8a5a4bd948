"""BFCL's 8 multi-turn API classes as an executable runtime (on top of :class:`~libra.runtime.python.PythonRuntime`).

Tools are ``Class.function`` with the official function docs of :func:`libra.benchmarks.bfcl.load_catalog`.
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
import types
from typing import Any, Iterator, Mapping

from ..catalog import Catalog
from ..errors import MissingDependencyError
from ..runtime.base import Runtime
from ..runtime.python import PythonRuntime, error_key_rejection

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


def _shared_catalog() -> Catalog:
    from .bfcl import load_catalog

    return load_catalog()


def build_bfcl_python_runtime(catalog: Catalog | None = None, initial_config: Mapping[str, Any] | None = None) -> PythonRuntime:
    """The in-process BFCL runtime; also what each isolated worker builds."""
    _freeze_clocks()
    return PythonRuntime(
        classes=bfcl_classes(),
        docs=catalog if catalog is not None else _shared_catalog(),
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

    ``pool_options`` go to :class:`~libra.runtime.isolation.IsolatedRuntime` (``n_workers``, ``timeout_s``,
    ``memory_mb``, ``allow_network``...).
    """
    factory = functools.partial(build_bfcl_python_runtime, catalog, dict(initial_config or {}))
    if isolated is None:
        isolated = False  # the BFCL back ends declare themselves trusted
    if not isolated:
        return factory()
    from ..runtime.isolation import IsolatedRuntime

    return IsolatedRuntime(factory, **pool_options)
