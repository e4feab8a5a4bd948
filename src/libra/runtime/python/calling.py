"""Calling a Python tool with JSON arguments the way its signature asks for them.

Why: a build, an agent and an MCP client all hand a tool JSON data, while typed Python code declares ``date``,
``datetime``, ``UUID``, ``Decimal``, an ``Enum``, a dataclass or a pydantic model and then uses it as one
(``start.isoformat()``, ``request.product_id``). MCP frameworks validate and convert arguments through pydantic
from the signature before calling; so does libra, so a typed tool receives what it declared and a value that
cannot become it is refused with pydantic's message, as the tool's own validation would refuse it.

Parameters typed with plain JSON types (``str``, ``int``, ``float``, ``bool``, ``list``, ``dict``, ``Any``, a
``Literal``, and unions and containers of these) are passed as given: the JSON value already is what they take,
and converting would only refuse calls the function itself accepts (an ``int`` where ``str`` is declared).
"""

from __future__ import annotations

import collections.abc
import dataclasses
import datetime as dt
import enum
import functools
import inspect
import typing
from collections.abc import Callable, Mapping
from typing import Any

from libra.runtime.python.introspect import portable, resolved_hints

_PLAIN = (str, int, float, bool, type(None), list, dict, tuple, set, frozenset, object)


def run(func: Callable[..., Any], args: dict[str, Any]) -> Any:
    """Call ``func`` with ``args`` converted to its signature's types; a coroutine function's coroutine is run to its
    end (an async tool answers like a plain one: a backend's ``async def`` handlers are tools too)."""
    out = func(**converter_for(func)(args))
    if inspect.isawaitable(out):
        out = _run_awaitable(out)
    return out


def _run_awaitable(awaitable: Any) -> Any:
    import asyncio

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    # called from inside a running loop (a tool run by an async host): run it on a loop of its own thread
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wait()).result()


def needs_conversion(tp: Any) -> bool:
    """Whether a parameter annotated ``tp`` takes something JSON data is not (a date, an enum, a model...)."""
    if tp is Any or tp is inspect.Parameter.empty or tp in _PLAIN:
        return False
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return False
    if _is_callable(tp):
        return True
    if origin is typing.Annotated:
        return needs_conversion(typing.get_args(tp)[0])
    if origin is not None:  # unions, list[...], dict[...], tuple[...]: any member that needs it
        return any(needs_conversion(a) for a in typing.get_args(tp) if a is not Ellipsis)
    if isinstance(tp, type) and issubclass(tp, (dt.date, dt.time, dt.timedelta, enum.Enum)):
        return True
    return isinstance(tp, type) or dataclasses.is_dataclass(tp)


def _is_callable(tp: Any) -> bool:
    return tp is collections.abc.Callable or typing.get_origin(tp) is collections.abc.Callable


@dataclasses.dataclass(frozen=True)
class Converter:
    """The pydantic validators of one tool's parameters that need converting (name -> validator)."""

    adapters: Mapping[str, Any]

    def __call__(self, args: dict[str, Any]) -> dict[str, Any]:
        """``args`` with each converting parameter validated into its declared type; pydantic's
        ``ValidationError`` (a ``ValueError``) says what is wrong with which argument."""
        if not self.adapters:
            return args
        out = dict(args)
        for name, adapter in self.adapters.items():
            if name in out:
                out[name] = adapter.validate_python(out[name])
        return out


_NOTHING = Converter({})


def converter_for(func: Callable[..., Any]) -> Converter:
    """The converter of ``func``'s parameters (a bound method's are its function's)."""
    return _converter(getattr(func, "__func__", func))


@functools.lru_cache(maxsize=4096)
def _converter(func: Callable[..., Any]) -> Converter:
    """:func:`converter_for`, cached per function: signatures do not change during a build."""
    try:
        hints = resolved_hints(func)
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return _NOTHING
    adapters = {}
    for name, param in params.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or name in ("self", "cls"):
            continue
        tp = hints.get(name, param.annotation)
        if needs_conversion(tp):
            adapter = _adapter(tp)
            if adapter is not None:
                adapters[name] = adapter
    return Converter(adapters) if adapters else _NOTHING


def untestable(func: Callable[..., Any]) -> dict[str, str]:
    """Parameters of ``func`` that no JSON value can build (a ``Callable``, a class pydantic has no schema for),
    each with its type: no call can pass them, so the tool is kept for retrieval but never called with them."""
    func = getattr(func, "__func__", func)
    try:
        hints = resolved_hints(func)
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    out = {}
    for name, param in params.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD) or name in ("self", "cls"):
            continue
        tp = hints.get(name, param.annotation)
        if needs_conversion(tp) and _adapter(tp) is None:
            out[name] = getattr(tp, "__name__", None) or repr(tp)
    return out


def _adapter(tp: Any) -> Any:
    """A pydantic validator for ``tp`` in lax mode (ISO strings become dates, objects become dataclasses), or None
    when pydantic has no schema for it (such a parameter is reported untestable before a build starts)."""
    from pydantic import TypeAdapter

    if _is_callable(tp):
        return None  # pydantic checks that a value is callable, but no JSON value is
    try:
        return TypeAdapter(portable(tp))
    except Exception:  # noqa: BLE001 - pydantic cannot build this type from JSON (a Callable, a plain class)
        return None
