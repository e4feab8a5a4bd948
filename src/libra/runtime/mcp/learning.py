"""What the MCP runtime learns about each server while it builds: whether the server must be restarted when the
sandbox is put back.

Why learn it: both fixed choices were wrong somewhere. Restarting every server on every restore is always safe and
made a build over two npm servers take minutes instead of seconds; never restarting is fast and silently wrong for
a server that reads its files only when it starts, or that keeps its data in memory (a dictionary of records): after
the files are put back, its answers would still be those of the state it came from. A project file's
``restart_on_restore`` still decides when it is given; only its default is learned.

How, with nothing here knowing a particular server:

- **Questions** are calls that read and change nothing: tools that take no required argument and that the server
  annotates ``readOnlyHint`` (a tool without the annotation counts when its name reads: ``list_...``, ``get...``,
  ``search_...``), and the first reading calls the build itself made that succeeded without changing a file, with
  their arguments. An answer is the call's outcome and output. A question whose answer changes when the same
  instance is asked again (a clock reading), or that fails, is dropped; one that changes a file ends the learning.
- **Probe**: when files are restored and the server's running instance holds no call counted in a state's identity,
  it is asked the questions before and after the restore, and a fresh instance on the restored files is asked too
  (that fresh instance is the restart the safe behaviour makes anyway, and it replaces the running one).
- **Memory probe**: after a successful call to a tool that does not read and changed no file, the instance that
  ran it and a fresh instance on the same files are asked the questions (the fresh one is ended after); at most
  :data:`MAX_CALL_PROBES` times. A call changes the sandbox only where the server writes files, so a memory-only
  change never causes a restore that could be probed: this is where a server keeping its data in memory shows.
- **Decision**: the running and the fresh instance answering differently (after a restore, or after such a call)
  means the running one's view is not the files' (it read them when it started, or its memory holds what earlier
  calls did): it is restarted on every restore. Equal answers on :data:`RESTORE_AGREEMENTS` restores that changed
  what the questions see (the answers before the restore differ from the fresh ones) mean it reads the sandbox on
  every call: it is not restarted any more. Until then, when there is nothing to ask, and after
  :data:`MAX_RESTORE_PROBES` restores that never changed what the questions see, it is restarted (the safe
  behaviour).

A server the runtime does not start (a ``url`` without ``command``) cannot be compared with a fresh instance of
itself: it keeps the safe behaviour (it is reconnected after every restore).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from libra.runtime.mcp.client import ToolInfo
from libra.runtime.mcp.spec import ServerSpec

__all__ = [
    "MAX_CALL_PROBES",
    "MAX_RESTORE_PROBES",
    "RESTORE_AGREEMENTS",
    "Question",
    "ServerLearning",
    "name_reads",
    "reads",
]

#: questions asked at one probe (the no-argument ones first, then calls the build made)
MAX_QUESTIONS = 4
#: restores that changed what the questions see, answered alike by the running and a fresh instance, before a server
#: is taken to read the sandbox on every call
RESTORE_AGREEMENTS = 2
#: restores probed before giving up on learning (the server then keeps being restarted, the safe way)
MAX_RESTORE_PROBES = 8
#: calls that changed no file after which the running instance is compared with a fresh one
MAX_CALL_PROBES = 3
#: first words of tool names that read (for tools their server does not annotate)
READ_VERBS = frozenset(
    {
        "list",
        "get",
        "show",
        "search",
        "read",
        "find",
        "query",
        "view",
        "describe",
        "fetch",
        "lookup",
        "count",
        "inspect",
        "whoami",
    }
)

Question = tuple[str, str]  # (the server's tool name, canonical JSON arguments)


def name_reads(name: str) -> bool:
    """Whether a tool's name starts with a reading verb (``list_boards``, ``getUser``, ``search-issues``)."""
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    return re.split(r"[^a-z0-9]+", words, maxsplit=1)[0] in READ_VERBS


def reads(name: str, annotations: Mapping[str, Any]) -> bool:
    """Whether a tool reads and changes nothing: its ``readOnlyHint`` when its server gives one, else its name."""
    hint = annotations.get("readOnlyHint")
    return bool(hint) if hint is not None else name_reads(name)


def _required(info: ToolInfo) -> list[str]:
    required = (info.input_schema or {}).get("required") or []
    return list(required) if isinstance(required, list) else ["?"]


@dataclass
class ServerLearning:
    """One server's option, what was learned about it so far, and the evidence (see the module docstring)."""

    name: str
    option: bool | None  # the project file's restart_on_restore (None: learn it)
    startable: bool  # the runtime starts it, so a fresh instance can be compared with the running one
    reading: frozenset[str]  # its tools that read (questions are asked of these)
    fixed: list[Question] = field(default_factory=list)  # reading tools that take no required argument
    remembered: list[Question] = field(default_factory=list)  # reading calls of the build that succeeded
    noisy: set[Question] = field(default_factory=set)  # questions dropped: their answers change by themselves
    restart: bool | None = None  # learned: None while unknown
    why: str = ""
    probes: int = 0
    agreements: int = 0
    call_probes: int = 0
    stopped: str = ""  # why learning stopped early (a question changed the sandbox, a fresh one did not start)

    @classmethod
    def for_server(cls, spec: ServerSpec, tools: Sequence[ToolInfo]) -> ServerLearning:
        reading = frozenset(t.name for t in tools if reads(t.name, t.annotations or {}))
        fixed = [(t.name, "{}") for t in tools if t.name in reading and not _required(t)]
        return cls(spec.name, spec.restart_on_restore, bool(spec.command), reading, fixed)

    # -- questions ----------------------------------------------------------------------------------------
    def questions(self) -> list[Question]:
        """What a probe asks now (the no-argument questions first)."""
        return [q for q in [*self.fixed, *self.remembered] if q not in self.noisy][:MAX_QUESTIONS]

    def remember(self, tool: str, args_json: str) -> None:
        """Keep a reading call the build made (it succeeded and changed no file) as a question: one per tool, so the
        questions look at different parts of the server."""
        if not self.probing() or tool not in self.reading or len(self.remembered) >= MAX_QUESTIONS:
            return
        if any(q[0] == tool for q in [*self.fixed, *self.remembered]):
            return
        self.remembered.append((tool, args_json))

    def stop(self, why: str) -> None:
        """Learn nothing more (the server keeps being restarted)."""
        self.stopped = self.stopped or why

    # -- decision -----------------------------------------------------------------------------------------
    @property
    def restarts(self) -> bool:
        """Whether a restore gives the server a new instance (the option; else what was learned; unknown: yes)."""
        if self.option is not None:
            return self.option
        return self.restart is not False

    def probing(self) -> bool:
        """Whether restores still teach something about this server."""
        return self.option is None and self.restart is None and self.startable and not self.stopped

    def probing_calls(self) -> bool:
        """Whether a call that changed no file is still to be followed by a memory probe."""
        return self.probing() and self.call_probes < MAX_CALL_PROBES

    def after_call(self, tool: str, keeps: bool) -> None:
        """One memory probe: after ``tool`` changed no file, the instance that ran it answered unlike a fresh one
        (``keeps``: its memory holds state), or alike (nothing learned: the call may have changed nothing)."""
        self.call_probes += 1
        if keeps:
            self.restart = True
            self.why = f"{tool} changed no file, yet a fresh instance answered differently: its memory holds state"

    def after_restore(self, stale: bool, informative: bool) -> None:
        """One probe: the running instance answered unlike a fresh one after the restore (``stale``), or alike; the
        restore changed what the questions see (``informative``) or not."""
        self.probes += 1
        if stale:
            self.restart = True
            self.why = "after a restore the running instance answered unlike a fresh one"
            return
        self.agreements += int(informative)
        if self.agreements >= RESTORE_AGREEMENTS:
            self.restart = False
            self.why = (
                f"{self.agreements} restores changed what it answers, and the running instance answered as a fresh one"
            )
        elif self.probes >= MAX_RESTORE_PROBES:
            self.restart = True
            self.why = f"{self.probes} restores never changed what its questions see: kept restarting"

    def to_dict(self) -> dict[str, Any]:
        """What the library's statistics record (``stats.mcp_servers``; ``libra show`` prints it)."""
        return {
            "restart_on_restore": self.restarts,
            "decided_by": "option" if self.option is not None else "learned" if self.restart is not None else "default",
            "why": self._reason(),
            "questions": sorted({q[0] for q in self.questions()}),
            "restore_probes": self.probes,
            "call_probes": self.call_probes,
        }

    def _reason(self) -> str:
        if self.option is not None:
            return f"set by restart_on_restore = {str(self.option).lower()}"
        if self.restart is not None:
            return self.why
        if not self.startable:
            return "not learned (the runtime does not start this server): restarted on every restore"
        if self.stopped:
            return f"not learned ({self.stopped}): restarted on every restore"
        if not self.questions():
            return "not learned (no read-only question to ask it): restarted on every restore"
        return "not learned (no restore changed what its questions see): restarted on every restore"
