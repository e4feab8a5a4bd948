"""Values built from a JSON Schema alone: what a nested object, a list of items, a pattern or a bound needs.

Why: when neither the documentation nor the parameter's name says what to pass, the schema still does, often in
detail (a pydantic model's nested fields, ``minItems``, ``pattern``, ``minimum``). Hypothesis, through
hypothesis-jsonschema, generates values that satisfy a schema far more completely than hand-written recursion;
draws are seeded, so a build asks for the same values every time.
"""

from __future__ import annotations

import functools
import json
from typing import Any

#: How many examples one schema is asked for at most.
MAX_EXAMPLES = 8


def from_schema(schema: dict[str, Any], seed: int, n: int = 3) -> list[Any]:
    """Up to ``n`` distinct values valid for ``schema``, the same ones for the same ``seed`` (empty when the schema
    cannot be generated from, e.g. it refers outside itself)."""
    key = json.dumps(_closed(schema), sort_keys=True, default=str)
    return list(_examples(key, seed, min(n, MAX_EXAMPLES)))


def _closed(schema: Any) -> Any:
    """``schema`` with objects that declare properties closed to others: a caller sends the fields a tool
    declares, not arbitrary extra keys (which hypothesis would otherwise add)."""
    if isinstance(schema, list):
        return [_closed(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _closed(v) for k, v in schema.items()}
    if "properties" in out and "additionalProperties" not in out and "patternProperties" not in out:
        out["additionalProperties"] = False
    return out


@functools.lru_cache(maxsize=4096)
def _examples(key: str, seed: int, n: int) -> tuple[Any, ...]:
    try:
        from hypothesis import HealthCheck, Phase, given, settings
        from hypothesis import seed as seeded
        from hypothesis_jsonschema import from_schema as strategy_for
    except ImportError:  # pragma: no cover - both are dependencies of libra
        return ()
    try:
        strategy = strategy_for(json.loads(key))
    except Exception:  # noqa: BLE001 - a schema hypothesis-jsonschema cannot read: no values from this layer
        return ()
    found: list[Any] = []
    seen: set[str] = set()

    @seeded(seed)
    @settings(
        max_examples=max(n * 4, 10),
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(value: Any) -> None:
        text = json.dumps(value, sort_keys=True, default=str)
        if text not in seen and len(found) < n:
            seen.add(text)
            found.append(value)

    try:
        collect()
    except Exception:  # noqa: BLE001 - generation gave up on this schema (unsatisfiable, too deep)
        pass
    return tuple(found)
