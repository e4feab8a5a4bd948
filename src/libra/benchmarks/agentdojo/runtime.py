"""An AgentDojo suite as a :class:`~libra.runtime.base.Runtime`: the state is the suite's environment.

- **State**: the suite's pydantic environment, one :class:`~libra.runtime.base.StatePart` per environment field
  (``inbox``, ``calendar``, ``cloud_drive`` for the workspace suite). A part's key is the content hash of that
  field's JSON dump (``model_dump(mode="json")``, AgentDojo's own serialisation), its data the pickled field, so
  the fingerprint is a content hash of the environment dump and the worker pool ships only the fields a call
  changed. ``fresh()`` is the default environment (see :mod:`libra.benchmarks.agentdojo.suites`).
- **Calls** run through AgentDojo's own ``FunctionsRuntime.run_function`` on a copy of the environment (the
  parts unpickled), which validates the arguments against the tool's parameter model, injects the environment
  dependencies and turns any exception into AgentDojo's error text (``"ValueError: ..."``), which becomes the
  record's ``error`` (status ``error``); AgentDojo tools have no other way to refuse, so there is no ``rejected``.
  The output is the tool's return value as JSON data (pydantic models through their JSON dump).
- **state_changes** is :func:`libra.runtime.diff.diff_views` of each changed field's dump before and after, keyed
  by the field name: ``{"bank_account": {"changed": {...}, "added": {"transactions[5]": {...}}, "removed": {}}}``.
- **Determinism**: the workspace and travel tools stamp new e-mails and files with ``datetime.now()``; every call
  runs under :func:`libra.runtime.python.entropy.fixed_entropy`, seeded from (state, tool, arguments), as the
  Python runtime's calls do, so identical calls give identical records and states in any process.

The tools are pure Python over pydantic models, so the runtime declares itself trusted (in-process by default,
like BFCL's); :func:`make_agentdojo_runtime` runs it in isolated workers on request.
"""

from __future__ import annotations

import functools
import hashlib
import json
import pickle
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from libra.benchmarks.agentdojo.suites import BENCHMARK_VERSION, default_environment, get_suite, load_catalog
from libra.catalog import Catalog
from libra.runtime.base import (
    InvocationRecord,
    Runtime,
    State,
    StatePart,
    ToolRuntimeError,
    UnknownToolError,
    parts_fingerprint,
)
from libra.runtime.diff import content_hash, diff_views
from libra.runtime.python.entropy import FIXED_NOW, fixed_entropy
from libra.runtime.workers.guard import UnserializableOutput, to_jsonable

_PICKLE = pickle.HIGHEST_PROTOCOL


def _plain(value: Any) -> Any:
    """A tool's return value with pydantic models replaced by their JSON dump (what AgentDojo shows a model)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _call_seed(fingerprint: str, tool: str, args: Mapping[str, Any]) -> int:
    """The entropy seed of one call: a function of the state, the tool and the arguments only."""
    blob = json.dumps(args, sort_keys=True, default=repr, ensure_ascii=False)
    digest = hashlib.blake2b(f"{fingerprint}\0{tool}\0{blob}".encode("utf-8", "surrogatepass"), digest_size=8)
    return int.from_bytes(digest.digest(), "big")


class AgentDojoRuntime:
    """One AgentDojo suite's tools over its environment (see the module docstring)."""

    trusted = True

    def __init__(self, suite: str, view_cache_size: int = 256) -> None:
        from agentdojo.functions_runtime import FunctionsRuntime

        self.suite_name = suite
        self._suite = get_suite(suite)
        self.catalog: Catalog = load_catalog(suite)
        self._functions = FunctionsRuntime(self._suite.tools)
        self._env_type = self._suite.environment_type
        self._fields = tuple(self._env_type.model_fields)
        self._signature = StatePart("", f"agentdojo:{BENCHMARK_VERSION}:{suite}", b"")
        self._views: OrderedDict[str, Any] = OrderedDict()
        self._view_cache_size = view_cache_size
        self._fresh: State | None = None

    # -- states -----------------------------------------------------------------------------------------
    def fresh(self) -> State:
        if self._fresh is None:
            self._fresh = self._state(self._parts(default_environment(self.suite_name), None)[0])
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """The default environment; AgentDojo suites have no other starting configuration."""
        if config:
            raise ToolRuntimeError(
                f"the AgentDojo {self.suite_name} runtime starts from the suite's default environment only"
            )
        return self.fresh()

    def _state(self, parts: tuple[StatePart, ...]) -> State:
        payload = (self._signature, *parts)
        return State(parts_fingerprint(payload), payload)

    def _field_parts(self, state: State) -> tuple[StatePart, ...]:
        payload = state.payload if isinstance(state, State) else None
        if (
            not isinstance(payload, tuple)
            or len(payload) != len(self._fields) + 1
            or getattr(payload[0], "key", None) != self._signature.key
        ):
            raise ToolRuntimeError("this state was not made by this runtime: get states from its fresh()/invoke()")
        return payload[1:]

    def _remember(self, key: str, view: Any) -> None:
        self._views[key] = view
        self._views.move_to_end(key)
        while len(self._views) > self._view_cache_size:
            self._views.popitem(last=False)

    def _part_view(self, part: StatePart) -> Any:
        view = self._views.get(part.key)
        if view is None:
            view = _plain(pickle.loads(part.data))
            self._remember(part.key, view)
        return view

    def _parts(
        self, env: Any, previous: tuple[StatePart, ...] | None, before: Mapping[str, bytes] | None = None
    ) -> tuple[tuple[StatePart, ...], dict[str, Any]]:
        """The environment's parts (reusing ``previous`` ones whose content is unchanged) and the diff per field.

        ``before`` holds each field's pickle taken just before the call, from the very objects the call got: a
        field that still pickles to those bytes is unchanged without being dumped and hashed (most calls only
        read). The stored part data cannot serve for that comparison, because a pickle round trip need not give
        the same bytes (pydantic keeps which fields were set in a ``set``, whose order depends on its history).
        Otherwise the dump decides, so a field whose pickle differs but whose content does not keeps its part.
        """
        parts: list[StatePart] = []
        changes: dict[str, Any] = {}
        for i, name in enumerate(self._fields):
            value = getattr(env, name)
            data = pickle.dumps(value, _PICKLE)
            old = previous[i] if previous is not None else None
            if old is not None and before is not None and before[name] == data:
                parts.append(old)
                continue
            view = _plain(value)
            key = content_hash(view)
            if old is not None and old.key == key:
                parts.append(old)
                continue
            if old is not None:
                changes[name] = diff_views(self._part_view(old), view)
            self._remember(key, view)
            parts.append(StatePart(name, key, data))
        return tuple(parts), changes

    def view(self, state: State) -> dict[str, Any]:
        """The whole environment as JSON data (field name -> dump): for debugging and contract authoring."""
        return {p.name: self._part_view(p) for p in self._field_parts(state)}

    # -- calls ------------------------------------------------------------------------------------------
    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        if tool not in self.catalog:
            raise UnknownToolError(
                f"unknown tool {tool!r}: the AgentDojo {self.suite_name} suite has {len(self.catalog)} tools "
                f"named like {self.catalog.names[0]!r}"
            )
        args = {} if args is None else args
        if not isinstance(args, Mapping):
            raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
        previous = self._field_parts(state)
        values = {p.name: pickle.loads(p.data) for p in previous}
        before = {name: pickle.dumps(value, _PICKLE) for name, value in values.items()}
        env = self._env_type.model_construct(**values)
        t0 = time.perf_counter()
        with fixed_entropy(_call_seed(state.fingerprint, tool, args), FIXED_NOW):
            result, error = self._functions.run_function(env, tool, dict(args))
        record = self._record(result, error, (time.perf_counter() - t0) * 1000.0)
        try:
            parts, changes = self._parts(env, previous, before)
        except Exception as exc:  # noqa: BLE001 - a tool left something in the environment that does not dump
            message = f"the environment cannot be saved after the call ({type(exc).__name__}: {exc})"
            return InvocationRecord("error", None, {}, message, record.duration_ms), state
        if not changes:
            return record, state
        record.state_changes = changes
        return record, self._state(parts)

    @staticmethod
    def _record(result: Any, error: str | None, ms: float) -> InvocationRecord:
        if error is not None:
            return InvocationRecord("error", None, {}, error, ms)
        try:
            return InvocationRecord("success", to_jsonable(_plain(result)), {}, None, ms)
        except UnserializableOutput as exc:
            return InvocationRecord("error", None, {}, str(exc), ms)

    def close(self) -> None:
        self._views.clear()


def build_agentdojo_runtime(suite: str) -> AgentDojoRuntime:
    """The in-process runtime of one suite; also what each isolated worker builds (module-level, so it pickles)."""
    return AgentDojoRuntime(suite)


def make_agentdojo_runtime(suite: str, isolated: bool | None = None, **pool_options: Any) -> Runtime:
    """The runtime of one suite: in-process unless ``isolated`` (the tools declare themselves trusted).

    ``pool_options`` go to :class:`~libra.runtime.workers.isolation.IsolatedRuntime` (``n_workers``,
    ``timeout_s``, ``memory_mb``...).
    """
    get_suite(suite)  # a missing package is one error line here, not a failure in every worker
    factory = functools.partial(build_agentdojo_runtime, suite)
    if not isolated:
        return factory()
    from libra.runtime.workers.isolation import IsolatedRuntime

    return IsolatedRuntime(factory, **pool_options)
