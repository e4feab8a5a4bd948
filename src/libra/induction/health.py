"""A build's health summary: a build that ends with most tools never succeeding, or with no relation at all,
must say so instead of reporting success silently.

The summary is kept in the library's ``stats["health"]`` and printed by ``libra show``; :func:`warn` prints its
warning at the end of the build.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from libra.induction.explore.engine import Engine


def top_messages(messages: Iterable[str | None], n: int = 5, width: int = 120) -> list[list[Any]]:
    """The ``n`` most common messages as ``[message, count]``, each cut to ``width`` characters (ties in first-seen
    order), so a build's most frequent refusals can be read at a glance."""
    counts = Counter(str(m).strip()[:width] for m in messages if m is not None and str(m).strip())
    return [[m, c] for m, c in counts.most_common(n)]


def health_summary(
    tools: Sequence[str],
    succeeded: Iterable[str],
    templates: int,
    templates_matched: int,
    inconclusive_tests: int,
    rejections: Iterable[str | None],
    relations: int,
) -> dict[str, Any]:
    """A build's health in a few numbers, with a plain warning when the library is unlikely to be worth anything.

    A build that ends with most tools never succeeding, or with no relation at all, ranks exactly like its base
    retriever; without a word about it a user cannot tell a catalog that has no compositions from one the
    contracts never managed to call. The warning fires when more than half the executable tools never succeeded,
    or when no relation was found.
    """
    ok = set(succeeded)
    never = sorted(t for t in tools if t not in ok)
    problems = []
    if len(never) * 2 > len(tools):
        problems.append(f"{len(never)} of {len(tools)} tools never succeeded")
    if relations == 0:
        problems.append("the library has 0 relations")
    warning = None
    if problems:
        warning = "; ".join(problems) + (
            f": retrieval with it ranks like the base retriever. {templates_matched} of {templates} contract "
            "templates matched their"
            " expected outcome; look at the most common rejections (stats.health.top_rejections) and give the tools"
            " fixtures, examples or response schemas their validation accepts."
        )
    return {
        "tools": len(tools),
        "tools_never_succeeded": never,
        "templates": int(templates),
        "templates_matched": int(templates_matched),
        "inconclusive_tests": int(inconclusive_tests),
        "top_rejections": top_messages(rejections),
        "warning": warning,
    }


def rejection_messages(engine: Engine, summary: Any) -> Iterable[str | None]:
    """The error message of every failed call: each distinct call the engine ran once, and contract checking's."""
    for rec, _state in engine.memo.values():
        if rec.get("status") != "success":
            yield rec.get("error") or (
                json.dumps(rec.get("output"), default=repr) if rec.get("output") is not None else rec.get("status")
            )
    for tc in summary.per_tool.values():
        for t in tc.templates:
            if t.status is not None and t.status != "success":
                yield t.error or t.status


def warn(message: str, progress: bool) -> None:
    """The health warning on stderr: yellow through rich when the build shows progress, plain otherwise."""
    if progress:
        from rich.console import Console

        Console(stderr=True).print(f"[yellow]warning:[/yellow] {message}", markup=True, highlight=False)
    else:
        print(f"warning: {message}", file=sys.stderr)


__all__ = ["health_summary", "rejection_messages", "top_messages", "warn"]
