"""One line of evidence per relation, built from the executions the library recorded for it.

An agent told "call ``shop.login`` before ``shop.add_item``" has no reason to believe it; told "shop.add_item
failed with 'not signed in' before shop.login ran" it knows what goes wrong without it. Each relation kind keeps
different calls (:mod:`libra.induction.explore.engine`): a state relation keeps the consumer's call before and
after the provider ran, a value relation keeps the consumer's call with the provider's value and a control call
with another value (or without it). The line says what those calls showed, quoting the failure the consumer
reported, and no more: a state relation names the consumer's call that failed before the provider ran and
succeeded after it (``fs.write_file({"path": "new/a.txt"}) failed with 'ENOENT...' before
fs.create_directory({"path": "new"}) ran``: a write into a missing folder), since the relation holds for calls
like that one, not for every call. Nothing here reads anything but the relation's own evidence records.

Paths a build's MCP servers printed name its temporary sandbox (``/tmp/libra-mcp-pn6k3eji/sandbox/notes.txt``),
which means nothing to an agent working elsewhere: they are written relative to the sandbox (``notes.txt``).
"""

from __future__ import annotations

import json
import re
from typing import Any

#: A quoted failure is cut at this many characters: the line must stay one line an agent reads at a glance.
MAX_REASON = 80
#: A call's arguments are quoted up to this many characters.
MAX_ARGUMENTS = 80

#: A path into a build's sandbox: an MCP build works in ``tempfile.mkdtemp(prefix="libra-mcp-")`` with the sandbox
#: in its ``sandbox`` folder (:mod:`libra.runtime.mcp.runtime`). The folder itself, or its trailing slash, matches.
_SANDBOX_PATH = re.compile(r"""(?:[^\s'"`(=]*/)?libra-mcp-[A-Za-z0-9_]+/sandbox(/|(?=[\s'"`),:;\]]|$))""")


def sandbox_relative(text: str) -> str:
    """``text`` with every path into a build's sandbox written relative to it (the sandbox itself as ``.``)."""
    return _SANDBOX_PATH.sub(lambda m: "" if m.group(1) else ".", text)


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
    text = sandbox_relative(" ".join(str(reason).split()))
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def call_text(call: Any) -> str:
    """``tool({"arg": value})`` of a recorded call, its arguments cut to :data:`MAX_ARGUMENTS` characters."""
    if not isinstance(call, dict):
        return "?"
    args = sandbox_relative(json.dumps(call.get("arguments") or {}, ensure_ascii=False, default=str))
    if len(args) > MAX_ARGUMENTS:
        args = args[: MAX_ARGUMENTS - 4] + "...}"
    return f"{call.get('tool', '?')}({args})"


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
        before = evidence.get("before_call")
        reason = failure_reason(before)
        failed = f"failed with '{reason}'" if reason else "failed"
        consumer_call = call_text(before) if isinstance(before, dict) else consumer
        provider_call = call_text(evidence["provider_call"]) if "provider_call" in evidence else provider
        return f"{consumer_call} {failed} before {provider_call} ran, and succeeded after it"
    value = f"{provider}'s {provider_field}" if provider_field else f"{provider}'s output"
    target = f"{_short(consumer)}.{consumer_input}" if consumer_input else _short(consumer)
    if kind == "compatibility":
        return f"{value} was accepted as {target}"
    control = evidence.get("control_call")
    reason = failure_reason(control)
    other = "leaving it out" if evidence.get("control") == "omitted" else "another value"
    failed = f"{other} failed with '{reason}'" if reason else f"{other} failed"
    return f"{value} worked as {target} where {failed}"
