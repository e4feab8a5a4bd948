"""What ``libra build``, ``show`` and ``explain`` print about a library, as plain lines.

Why plain lines: a user reads them in a terminal and pipes them to ``grep`` or a file, and both must see whole
lines (a tool name split over two lines matches nothing). Each function returns lines; the commands print them as
text, never as rich markup (tool names and messages hold ``[brackets]``). The words are the user's: the paper's
table numbers and per-candidate timings belong in ``libra analyze``.
"""

from __future__ import annotations

import json
from typing import Any

from libra.library.evidence import sandbox_relative

#: How many never-succeeded tools and rejection messages the health block names before summarising the rest.
HEALTH_LIST_LIMIT = 5
#: A failing call's arguments and error are quoted up to this many characters each.
QUOTE_LIMIT = 160


def named_list(names: list[str], limit: int = HEALTH_LIST_LIMIT) -> str:
    """``a, b, c and 4 more``: a long list stays one readable line."""
    shown = ", ".join(names[:limit])
    return f"{shown} and {len(names) - limit} more" if len(names) > limit else shown


def one_line(message: str, width: int = 120) -> str:
    """A message as one line: tracebacks and long payloads must not flood the summary."""
    text = sandbox_relative(" ".join(str(message).split()))
    return text if len(text) <= width else text[: width - 3] + "..."


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"


def summary_line(name: str, stats: dict[str, Any]) -> str:
    """One line: the tools, the relations found by kind, how many output -> input pairs were candidates, how
    long the build took."""
    value, state = stats.get("value_relations"), stats.get("state_relations")
    relations = ""
    if value is not None and state is not None:
        relations = f", {int(value) + int(state)} relations ({value} between values, {state} through state)"
    candidates = stats.get("candidate_compositions")
    among = f" among {candidates:,} candidate output -> input pairs" if isinstance(candidates, int) else ""
    wall = stats.get("wall_seconds")
    took = f", built in {_duration(float(wall))}" if isinstance(wall, int | float) else ""
    return f"{name}: {stats.get('tools', '?')} tools{relations}{among}{took}"


def relation_lines(relations: list[Any]) -> list[str]:
    """Every relation, grouped by the tool that needs it (consumers in name order): ``  <- provider  kind  field
    -> input``, so a user sees at a glance what each tool needs first."""
    by_consumer: dict[str, list[Any]] = {}
    for r in relations:
        by_consumer.setdefault(r.consumer, []).append(r)
    if not by_consumer:
        return []
    lines = [f"relations, by the tool that needs them ({len(relations)}; provider -> consumer):"]
    for consumer in sorted(by_consumer):
        rels = sorted(by_consumer[consumer], key=lambda r: (r.provider, r.kind, r.provider_field or ""))
        width = max(len(r.provider) for r in rels)
        lines.append(f"  {consumer}")
        for r in rels:
            fields = f"  {r.provider_field} -> {r.consumer_input}" if r.provider_field else ""
            lines.append(f"    <- {r.provider:<{width}}  {r.kind}{fields}")
    return lines


def _quote(value: Any) -> str:
    text = sandbox_relative(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str))
    text = " ".join(text.split())
    return text if len(text) <= QUOTE_LIMIT else text[: QUOTE_LIMIT - 3] + "..."


def blocking_lines(blocking: list[dict[str, Any]]) -> list[str]:
    """The tools whose failures starve others of a value, each with its failing call and what to give it."""
    if not blocking:
        return []
    lines = ["  blocking: tools that never succeeded and starve others of a value (fix these first):"]
    for b in blocking:
        starved = list(b.get("starves") or [])
        inputs = ", ".join(b.get("inputs") or [])
        lines.append(f"    {b['tool']}: {len(starved)} tools need its {inputs}: {named_list(starved)}")
        call = b.get("call")
        if call:
            args, error = _quote(call.get("arguments") or {}), _quote(call.get("error"))
            lines.append(f"      failing call: {b['tool']}({args}) -> {error}")
        else:
            lines.append("      never called: none of its required inputs had a value")
        if b.get("advice"):
            lines.append(f"      what to do: {b['advice']}")
    return lines


def health_lines(health: dict[str, Any], with_warning: bool = True) -> list[str]:
    """The build health summary; keys a library does not record are skipped, so a summary written by an older or
    newer build still prints what it has. ``with_warning`` False leaves out the warning (a build has printed it
    on stderr already)."""
    lines: list[str] = ["build health:"]
    never = list(health.get("tools_never_succeeded") or [])
    if "tools" in health:
        lines.append(f"  tools: {health['tools']}, never called successfully: {len(never)}")
    if never:
        lines.append(f"    {named_list(never)}")
    lines += blocking_lines(list(health.get("blocking") or []))
    if "templates" in health:
        lines.append(f"  templates matched: {health.get('templates_matched', 0)} of {health['templates']}")
    if "inconclusive_tests" in health:
        lines.append(f"  inconclusive tests: {health['inconclusive_tests']}")
    no_relation = health.get("no_relation")
    if isinstance(no_relation, dict) and no_relation.get("causes"):
        causes = {str(c): list(tools) for c, tools in no_relation["causes"].items()}  # in the build's order of causes
        lines.append(f"  tools with no outgoing relation: {sum(len(t) for t in causes.values())}, by cause:")
        for cause, tools in causes.items():
            lines.append(f"    {len(tools):>5} x {cause.replace('_', ' ')}: {named_list(tools)}")
    conflicts = health.get("hint_conflicts") or {}
    if conflicts:
        lines.append("  annotations contradicted by what the tools did:")
        for tool, what in list(conflicts.items())[:HEALTH_LIST_LIMIT]:
            lines.append(f"    {tool}: {what}")
    rejections = list(health.get("top_rejections") or [])
    if rejections:
        after = " (many follow from the blocking tools above)" if health.get("blocking") else ""
        lines.append(f"  most common rejections{after}:")
        for message, count in rejections[:HEALTH_LIST_LIMIT]:
            lines.append(f"    {count:>5} x {one_line(str(message))}")
    if with_warning and health.get("warning"):
        lines.append(f"  warning: {health['warning']}")
    return lines


def server_lines(servers: Any) -> list[str]:
    """The MCP servers of a build (``stats.mcp_servers``): whether restores restart each one, who decided (the
    project file's option, what the build learned, or the safe default) and why; nothing when none are recorded."""
    if not isinstance(servers, dict) or not servers:
        return []
    lines = ["MCP servers:"]
    for name, s in servers.items():
        restart = "restarted on restore" if s.get("restart_on_restore") else "not restarted on restore"
        lines.append(f"  {name}: {restart} ({s.get('decided_by', '?')}: {s.get('why', '')})")
    return lines


def call_line(call: dict[str, Any]) -> str:
    """``tool({args}) -> status output``: a failed call shows its error text (a failure's output is usually
    empty), paths into the build's sandbox relative to it."""
    args = json.dumps(call.get("arguments", {}), ensure_ascii=False, default=str)
    rec = call.get("record", {})
    status, output = rec.get("status"), rec.get("output")
    if status != "success" and rec.get("error") and output in (None, "", {}, []):
        out = " ".join(str(rec["error"]).split())
    else:
        out = json.dumps(output, ensure_ascii=False, default=str)
    if len(out) > 120:
        out = out[:117] + "..."
    return sandbox_relative(f"{call.get('tool')}({args}) -> {status} {out}")
