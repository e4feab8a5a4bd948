"""One line of evidence per relation, built from the executions the library recorded for it.

An agent told "call ``shop.login`` before ``shop.add_item``" has no reason to believe it; told "shop.add_item
failed with 'not signed in' until shop.login ran" it knows what goes wrong without it. Each relation kind keeps
different calls (:mod:`libra.induction.explore.engine`): a state relation keeps the consumer's call before and after the
provider ran, a value relation keeps the consumer's call with the provider's value and a control call with
another value (or without it). The line says what those calls showed, quoting the failure the consumer reported.
Nothing here reads anything but the relation's own evidence records.
"""

from __future__ import annotations

import json
from typing import Any

#: A quoted failure is cut at this many characters: the line must stay one line an agent reads at a glance.
MAX_REASON = 80


def failure_reason(call: Any) -> str | None:
    """What a recorded call reported when it failed: its error, else its output's message, else its output."""
    if not isinstance(call, dict):
        return None
    record = call.get("record")
    if not isinstance(record, dict):
        return None
    reason: Any = record.get("error")
    output = record.get("output")
    if not reason and isinstance(output, dict):
        reason = output.get("message") or output.get("error")
    if not reason and output is not None:
        reason = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, default=str)
    if not reason:
        return None
    text = " ".join(str(reason).split())
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def _short(tool: str) -> str:
    return tool.rsplit(".", 1)[-1]


def evidence_line(
    provider: str,
    consumer: str,
    kind: str,
    provider_field: str | None,
    consumer_input: str | None,
    evidence: dict[str, Any],
) -> str:
    """One sentence saying what the recorded executions showed about ``provider`` -> ``consumer``."""
    if kind == "state":
        reason = failure_reason(evidence.get("before_call"))
        failed = f"failed with '{reason}'" if reason else "failed"
        return f"{consumer} {failed} until {provider} ran"
    value = f"{provider}'s {provider_field}" if provider_field else f"{provider}'s output"
    target = f"{_short(consumer)}.{consumer_input}" if consumer_input else _short(consumer)
    if kind == "compatibility":
        return f"{value} was accepted as {target}"
    control = evidence.get("control_call")
    reason = failure_reason(control)
    other = "leaving it out" if evidence.get("control") == "omitted" else "another value"
    failed = f"{other} failed with '{reason}'" if reason else f"{other} failed"
    return f"{value} worked as {target} where {failed}"
