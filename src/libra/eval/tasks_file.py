"""Your own retrieval tasks: a JSON-lines file, one ``{"id": ..., "query": ..., "gold": [...]}`` per line.

``gold`` lists the tools a correct run needs, prerequisites included (a sign-in the request never names), which
is what the graph methods are there to recover. Other keys on a line are kept as the task's metadata. The file
is checked whole before any method runs: a line that is not such an object is refused with its line number, and
gold names the catalog does not have are refused together, each with its closest catalog name (a typo in gold
would silently count as a miss for every method).
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from libra.benchmarks.base import Task
from libra.catalog import Catalog
from libra.errors import ConfigError


def _line_task(path: Path, number: int, line: str, seen: set[str]) -> Task:
    where = f"{path.name} line {number}"
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON ({exc.msg})") from None
    if not isinstance(obj, dict):
        raise ConfigError(f"{where}: must be a JSON object with id, query and gold")
    missing = [k for k in ("id", "query", "gold") if k not in obj]
    if missing:
        raise ConfigError(f"{where}: missing {', '.join(missing)}")
    tid, query, gold = obj["id"], obj["query"], obj["gold"]
    if isinstance(tid, bool) or not isinstance(tid, (str, int)) or not str(tid).strip():
        raise ConfigError(f"{where}: id must be a non-empty string or an integer")
    if not isinstance(query, str) or not query.strip():
        raise ConfigError(f"{where}: query must be a non-empty string")
    if not isinstance(gold, list) or not gold or not all(isinstance(g, str) and g.strip() for g in gold):
        raise ConfigError(f"{where}: gold must be a non-empty list of tool names")
    tid = str(tid)
    if tid in seen:
        raise ConfigError(f"{where}: id {tid!r} is used by an earlier line")
    seen.add(tid)
    extra = {k: v for k, v in obj.items() if k not in ("id", "query", "gold")}
    return Task(tid, query, tuple(gold), extra)


def read_tasks(path: str | Path) -> list[Task]:
    """The tasks of a JSON-lines file (blank lines skipped); a bad line is one :class:`ConfigError` naming it."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path} is a directory, not a tasks file")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no tasks file at {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    seen: set[str] = set()
    tasks = [_line_task(path, n, line, seen) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    if not tasks:
        raise ConfigError(f"{path} holds no tasks: write one JSON object per line")
    return tasks


def check_gold(tasks: list[Task], catalog: Catalog, source: str = "tasks") -> None:
    """Refuse gold names that are not tools of ``catalog``, naming each with its closest catalog name."""
    names = set(catalog.names)
    unknown = sorted({g for t in tasks for g in t.gold if g not in names})
    if not unknown:
        return
    parts = []
    for g in unknown[:5]:
        close = difflib.get_close_matches(g, catalog.names, n=1, cutoff=0.5)
        parts.append(f"{g} (did you mean {close[0]}?)" if close else g)
    more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
    raise ConfigError(
        f"{source}: gold names tools the catalog {catalog.name!r} does not have: {', '.join(parts)}{more}"
    )
