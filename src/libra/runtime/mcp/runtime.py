"""A runtime over MCP servers (stdio or Streamable HTTP) that share one sandbox directory.

Why this shape:

- **Catalog**: each server's ``tools/list`` gives its tools; a tool is named ``SERVER.tool`` (its group is the
  server), ``inputSchema`` becomes the parameters, ``outputSchema`` the response schema (text when there is
  none: :data:`TEXT_RESPONSE`), and the description,
  title and ``annotations`` are kept (annotations in ``metadata``: hints from the server's author, never
  evidence of a relation).
- **Sandbox**: every server of a runtime runs against one sandbox directory (``{sandbox}`` in a server's args,
  env, cwd and url is its path), copied fresh from an optional template. Several servers share it, so a file
  one server writes is what another stages.
- **States** (:mod:`libra.runtime.mcp.sandbox_dir`): a state is the sandbox's content fingerprint, plus -- for
  servers declared ``state = "process"``, whose memory holds what later calls see (a session, a cache that is
  not in files) -- the successful calls made to them that their author does not mark ``readOnlyHint``; those
  cannot be observed, so they are part of the identity. A state's payload is the call path that led to it (each
  step with the fingerprint it reached), which is all another process needs to reach it again.
- **Reaching a state** before a call: nothing when the servers already are in it; a state held in files alone
  is restored **in place** (same absolute path, only differing files written) and the servers whose view may
  be stale (``restart_on_restore``, set or learned per server: :mod:`libra.runtime.mcp.learning`, and every
  ``process`` server whose memory holds calls: it must start empty) get another instance: the one left running
  in exactly that state earlier (*parked*, a few per server), else a new one; a state with process history whose
  instances are parked is reached the same way; a state with process history is reached by restoring the last
  files-only state on its path and *replaying* the calls after it. Every (state, tool, arguments) is memoised, so
  a repeated call returns its first record: outputs that read the clock or draw random ids cannot make two
  identical calls disagree.
- **Outcomes**: ``isError`` results are ``rejected`` records with the error text; a crash, a hang past the
  server's ``timeout``, a line of garbage on stdout, or a JSON-RPC error is an ``error`` record, and the server
  is restarted (lazily, on its next call) so the next call works. Text content is kept as text (one block: the
  string; several: a list), structured content as data.
- A server that cannot start raises :class:`~libra.runtime.mcp.client.McpServerError` naming it with the tail of
  its stderr, before any tool runs. :meth:`McpRuntime.close` ends every server process group it started.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import shutil
import tempfile
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Self

from libra.catalog import Catalog, Tool
from libra.errors import CatalogError, ConfigError
from libra.runtime.base import (
    InvocationRecord,
    State,
    ToolRuntimeError,
    UnknownToolError,
)
from libra.runtime.mcp.client import (
    CallFailed,
    Connection,
    McpServerError,
    ToolInfo,
    _LoopThread,
)
from libra.runtime.mcp.learning import Question, ServerLearning
from libra.runtime.mcp.sandbox_dir import Manifest, SandboxDir, fingerprint
from libra.runtime.mcp.spec import ServerSpec
from libra.runtime.workers.guard import to_jsonable

__all__ = ["McpPath", "McpRuntime", "McpServerError", "ServerSpec"]

#: instances of one server kept running at states the runtime left (see :meth:`McpRuntime._restore_files`)
PARKED_PER_SERVER = 3
#: longest base64 payload kept in a record from an image/audio block (the rest is cut: records stay small)
_MAX_DATA = 200


@dataclass(frozen=True)
class McpPath:
    """A state's payload: the calls that led to it from the fresh sandbox, each with the fingerprint it reached,
    and the calls that count in its identity for ``process`` servers (see the module docstring)."""

    steps: tuple[tuple[str, str, str], ...] = ()  # (tool, canonical JSON arguments, fingerprint after)
    history: tuple[tuple[str, str], ...] = ()


@dataclass
class _Known:
    manifest: Manifest
    path: McpPath


def _canonical(args: Mapping[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=repr)


#: The response of a tool that declares no ``outputSchema``: MCP says such a tool answers with content blocks, in
#: practice text. Declaring it as text (not leaving it unknown) is what lets a proposer read identifiers printed in
#: it before it has seen the tool succeed (:func:`libra.contracts.offline.proposer.identifier_exports`).
TEXT_RESPONSE: dict[str, Any] = {
    "type": "string",
    "description": "text content (the tool declares no structured output)",
}


def tool_from_info(server: str, info: ToolInfo) -> Tool:
    """A catalog tool from one ``tools/list`` entry (see the module docstring for the mapping); a tool without an
    ``outputSchema`` answers with text (:data:`TEXT_RESPONSE`)."""
    params = dict(info.input_schema or {})
    params.setdefault("type", "object")
    params.setdefault("properties", {})
    metadata: dict[str, Any] = {"server": server, "mcp_name": info.name}
    if info.annotations:
        metadata["annotations"] = dict(info.annotations)
    if info.title:
        metadata["title"] = info.title
    try:
        return Tool(
            f"{server}.{info.name}",
            info.description,
            params,
            info.output_schema or dict(TEXT_RESPONSE),
            group=server,
            metadata=metadata,
        )
    except CatalogError as exc:
        raise McpServerError(f"MCP server {server!r} lists tool {info.name!r} with an unusable schema: {exc}") from None


def result_output(result: Any) -> Any:
    """A ``CallToolResult`` as record output: structured content when given, else the content blocks (a text
    block as its text; one block alone, not in a list; none: None)."""
    if getattr(result, "structured_content", None) is not None:
        return to_jsonable(result.structured_content)
    blocks = []
    for block in result.content or []:
        if getattr(block, "type", None) == "text":
            blocks.append(block.text)
            continue
        data = block.model_dump(exclude_none=True, by_alias=True, mode="json")
        if isinstance(data.get("data"), str) and len(data["data"]) > _MAX_DATA:
            data["data"] = data["data"][:_MAX_DATA] + f"...<{len(data['data'])} chars>"
        blocks.append(data)
    if not blocks:
        return None
    return blocks[0] if len(blocks) == 1 else blocks


def _error_text(output: Any) -> str:
    if isinstance(output, str):
        return output.strip()[:1000] or "the tool reported an error"
    return json.dumps(output, ensure_ascii=False, default=repr)[:1000]


class McpRuntime:
    """Runtime over MCP servers sharing one sandbox directory (see the module docstring).

    ``servers`` are :class:`ServerSpec` s or ``[[mcp]]`` tables; ``template`` is the directory the sandbox is
    copied from (``[sandbox] template``); ``workdir`` holds the sandbox (``workdir/sandbox``), the blob store and
    the server logs (default: a temporary directory removed by :meth:`close`); ``parked_per_server`` bounds the
    instances of a server kept running at states the runtime left (0: restart instead); ``allow_network`` gives
    every server the network (by default only those whose table says ``allow_network``). Servers start here, once, to
    list
    their tools, side by side (a server that cannot start raises :class:`McpServerError`).
    """

    trusted = True  # the tools run in their own server processes; this object only drives them

    def __init__(
        self,
        servers: Sequence[ServerSpec | Mapping[str, Any]],
        template: str | Path | None = None,
        *,
        workdir: str | Path | None = None,
        name: str = "mcp",
        parked_per_server: int = PARKED_PER_SERVER,
        allow_network: bool = False,
    ) -> None:
        specs = [s if isinstance(s, ServerSpec) else ServerSpec.from_config(s) for s in servers]
        if allow_network:
            specs = [replace(s, allow_network=True) for s in specs]
        if not specs:
            raise ConfigError("no MCP servers given: name at least one [[mcp]] server")
        names = [s.name for s in specs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ConfigError(f"MCP server name(s) {dupes} appear more than once: server names must be unique")
        if template is not None and not Path(template).is_dir():
            raise ConfigError(f"sandbox template {str(template)!r} is not a directory")
        self.specs = {s.name: s for s in specs}
        self.template = Path(template).absolute() if template is not None else None
        self._own_workdir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="libra-mcp-")) if workdir is None else Path(workdir).absolute()
        self.sandbox = SandboxDir(self.workdir / "sandbox", self.workdir / "store")
        self.stats: dict[str, float] = {
            "calls": 0,
            "memo_hits": 0,
            "restores": 0,
            "replayed_calls": 0,
            "replay_mismatches": 0,
        }
        self.timings: dict[str, list[float]] = {"start_ms": [], "call_ms": [], "restore_ms": []}
        self._loop = _LoopThread()
        self._conns: dict[str, Connection] = {}  # the current instance of each server
        self._parked: dict[str, OrderedDict[str, Connection]] = {s.name: OrderedDict() for s in specs}
        self.parked_per_server = parked_per_server
        self._every: list[Connection] = []  # every instance ever made (their pids; close() ends them all)
        self._states: dict[str, _Known] = {}
        self._memo: dict[tuple[str, str, str], tuple[dict[str, Any], State]] = {}
        self._live: str | None = None
        self._live_manifest: Manifest = {}
        self.closed = False
        #: tools whose author's hints the runs contradicted (tool -> what happened): hints order and prune work,
        #: they never decide anything, and a build can report where they were wrong
        self.hint_conflicts: dict[str, str] = {}
        try:
            self.sandbox.reset(self.template)
            for spec in specs:
                self._conns[spec.name] = self._instance(spec, "auto")
            # side by side: a start is mostly waiting for the server to import and answer
            with ThreadPoolExecutor(max_workers=len(specs)) as pool:
                for future in [pool.submit(self._start, conn) for conn in self._conns.values()]:
                    future.result()  # the first server (in the given order) that failed to start raises
            tools = [tool_from_info(spec.name, info) for spec in specs for info in self._conns[spec.name].tools]
            self.catalog = Catalog(tools, name=name)
        except BaseException:
            self.close()
            raise
        self._tools: dict[str, tuple[str, str, dict[str, Any]]] = {
            t.name: (t.metadata["server"], t.metadata["mcp_name"], t.metadata.get("annotations", {}))
            for t in self.catalog
        }
        #: per server: its restart option and what the build learns about it
        self.learning = {s.name: ServerLearning.for_server(s, self._conns[s.name].tools) for s in specs}
        blob = (
            json.dumps([[s.name, s.command, list(s.args), sorted(s.env.items()), s.url, s.state] for s in specs])
            + self.catalog.fingerprint()
        )
        self._signature = hashlib.sha256(blob.encode()).hexdigest()[:16]
        manifest = self.sandbox.scan()
        self._fresh = self._state(fingerprint(manifest), manifest, McpPath())
        self._live, self._live_manifest = self._fresh.fingerprint, manifest

    # -- states -----------------------------------------------------------------------------------------
    def _fingerprint(self, dir_fp: str, history: tuple[tuple[str, str], ...]) -> str:
        return hashlib.sha256(f"mcp\0{self._signature}\0{dir_fp}\0{json.dumps(history)}".encode()).hexdigest()

    def _state(self, dir_fp: str, manifest: Manifest, path: McpPath) -> State:
        fp = self._fingerprint(dir_fp, path.history)
        known = self._states.get(fp)
        if known is None:
            known = self._states[fp] = _Known(manifest, path)
        return State(fp, known.path)

    def fresh(self) -> State:
        return self._fresh

    def load_state(self, config: Mapping[str, Any] | None = None) -> State:
        """The fresh state (an MCP sandbox has no per-task configuration; its template is the configuration)."""
        if config:
            raise ToolRuntimeError(
                "MCP runtimes take no initial configuration: put the starting files in the sandbox template"
            )
        return self._fresh

    @property
    def network_isolation(self) -> str:
        """How the servers are kept off the network: ``"namespace"`` when every server started so far runs in its
        own empty network namespace, else ``"allowed"`` (what a build records in its statistics)."""
        from libra.runtime.workers import sandbox

        return sandbox.weakest(c.isolation for c in self._every if c.isolation is not None)

    def server_versions(self) -> dict[str, str | None]:
        """Each server's version as it reported it when it started (None: it reported none), by server name: part
        of what a library records its tools were built from."""
        # (a connection learns it when its server starts, as it learns the protocol version)
        return {name: getattr(conn, "server_version", None) for name, conn in self._conns.items()}

    @property
    def restarts(self) -> int:
        """Server starts beyond each server's first (after restores, crashes and hangs)."""
        return sum(c.starts for c in self._every) - len(self.specs)

    @property
    def servers_learned(self) -> dict[str, dict[str, Any]]:
        """Per server: whether restores restart it, who decided (its option, what was learned, or the safe default)
        and why: what a build records as ``stats.mcp_servers``."""
        return {name: learn.to_dict() for name, learn in self.learning.items()}

    @property
    def pids(self) -> list[int]:
        """Every server process this runtime started (for checks that none is left after :meth:`close`)."""
        return [pid for c in self._every for pid in c.pids]

    def view(self, state: State) -> dict[str, Any]:
        """The state's sandbox as JSON data (path -> content as ``state_changes`` shows it), plus the calls that
        stand for server memory: for debugging and contract authoring."""
        known = self._states.get(state.fingerprint)
        if known is None:
            raise ToolRuntimeError("this state is not known to this runtime: invoke a call from it first")
        files = {rel: self.sandbox.show(e, rel) for rel, e in sorted(known.manifest.items()) if e.kind != "d"}
        return {"sandbox": files, "memory": [{"tool": t, "arguments": json.loads(a)} for t, a in known.path.history]}

    # -- reaching a state ---------------------------------------------------------------------------------
    def _start(self, conn: Connection) -> None:
        t0 = time.perf_counter()
        conn.start()
        self.timings["start_ms"].append((time.perf_counter() - t0) * 1000)

    def _instance(self, spec: ServerSpec, mode: str) -> Connection:
        conn = Connection(spec, self.sandbox.path, self.workdir / "logs", self._loop)
        conn.mode = mode
        self._every.append(conn)
        return conn

    def _restore_files(self, manifest: Manifest, target: str) -> None:
        """Put a state's files in place (state ``target``) and give each server an instance whose view of them
        is right: a server whose view may be stale (``restart_on_restore``, set, learned or not known yet, or a
        ``process`` server whose memory holds calls) is set aside -- parked, still running, keyed by the state it is
        in -- and replaced by the instance parked at ``target`` if there is one, else by a new instance started on
        its first call (at once, when the restore is one the server's restart decision is learned from).

        Why park: going back to a state the runtime left (the engine does it all the time: a control call from a
        saved state) then costs no restart, and a server whose memory holds a session needs no replay. A parked
        instance is exact only for the state it was parked in, which is why it is keyed by the full fingerprint
        (files and every server's calls), and only used once the files are back in that state."""
        t0 = time.perf_counter()
        probing = self._before_restore(target)
        self.sandbox.restore(manifest)
        self._live_manifest = manifest
        for name, conn in list(self._conns.items()):
            waiting = self._parked[name].pop(target, None)
            if waiting is not None and not waiting.running:  # it died while parked: its memory is gone
                waiting.stop()
                waiting = None
            stale = conn.alive and (self.learning[name].restarts or (conn.spec.state == "process" and conn.dirty))
            if waiting is None and not stale:
                continue
            if waiting is None and name in probing:
                waiting = self._probe_restore(name, conn, *probing[name], manifest)
            if conn.alive:
                self._park(name, conn)
            self._conns[name] = waiting if waiting is not None else self._instance(conn.spec, conn.mode)
        self.stats["restores"] += 1
        self.timings["restore_ms"].append((time.perf_counter() - t0) * 1000)

    def _park(self, name: str, conn: Connection) -> None:
        """Keep an instance running at the live state (at most ``parked_per_server`` per server, the least
        recently parked ones are ended); one whose state is unknown is ended."""
        parked = self._parked[name]
        if self._live is None:
            conn.retire()
            return
        old = parked.pop(self._live, None)
        if old is not None:
            old.retire()
        parked[self._live] = conn
        while len(parked) > self.parked_per_server:
            parked.popitem(last=False)[1].retire()

    def _parked_at(self, fp: str, history: tuple[tuple[str, str], ...]) -> bool:
        """Whether every server whose memory the state holds calls for has an instance parked in that state."""
        servers = {self._tools[tool][0] for tool, _ in history}
        return all(fp in self._parked[name] and self._parked[name][fp].running for name in servers)

    def _reach(self, state: State) -> None:
        if state.fingerprint == self._live:
            return
        path = state.payload if isinstance(state.payload, McpPath) else None
        if path is None:
            raise ToolRuntimeError("this state was not made by this MCP runtime: get states from its fresh()/invoke()")
        known = self._states.get(state.fingerprint)
        if known is not None and (not known.path.history or self._parked_at(state.fingerprint, known.path.history)):
            self._restore_files(known.manifest, state.fingerprint)
            self._live = state.fingerprint
            return
        # the latest step of the path whose state is held in files alone (the fresh state at worst), then replay
        start = 0
        for i in range(len(path.steps), 0, -1):
            k = self._states.get(path.steps[i - 1][2])
            if k is not None and not k.path.history:
                start = i
                break
        live = self._states.get(self._live) if self._live is not None else None
        if live is not None and len(live.path.steps) >= start and path.steps[: len(live.path.steps)] == live.path.steps:
            start = len(live.path.steps)  # the servers already are on this path: replay only the rest
            history = live.path.history
        else:
            base_fp = self._fresh.fingerprint if start == 0 else path.steps[start - 1][2]
            base = self._states[base_fp]
            self._restore_files(base.manifest, base_fp)
            history = base.path.history
        for i in range(start, len(path.steps)):
            tool, args_json, expected = path.steps[i]
            server, mcp_name, annotations = self._tools[tool]
            conn = self._conns[server]
            try:
                result = conn.call(mcp_name, json.loads(args_json))
                status = "rejected" if result.is_error else "success"
            except (CallFailed, McpServerError):
                status = "error"
            self.stats["replayed_calls"] += 1
            if self._counts(conn, annotations, status):
                history = history + ((tool, args_json),)
                conn.dirty = True
            manifest = self.sandbox.scan()
            if self._fingerprint(fingerprint(manifest), history) != expected:
                self.stats["replay_mismatches"] += 1  # a server that is not deterministic: the state is taken as is
            self._states.setdefault(expected, _Known(manifest, McpPath(path.steps[: i + 1], history)))
        self._live_manifest = self.sandbox.scan() if start == len(path.steps) else manifest
        self._live = state.fingerprint

    @staticmethod
    def _counts(conn: Connection, annotations: Mapping[str, Any], status: str) -> bool:
        """Whether a call joins the state's identity: a success on a ``process`` server that its author does not
        mark read-only (its effect on the server's memory cannot be seen, so the call itself stands for it)."""
        return conn.spec.state == "process" and status == "success" and not annotations.get("readOnlyHint")

    # -- learning whether a server needs restarts (libra.runtime.mcp.learning) ------------------------------------
    def _answers(self, learn: ServerLearning, conn: Connection, questions: list[Question]) -> list[Any] | None:
        """Each question's outcome and output from one instance; None when a question failed (it is dropped: a
        question must not be what breaks a server)."""
        out: list[Any] = []
        for tool, args_json in questions:
            try:
                result = conn.call(tool, json.loads(args_json))
            except (CallFailed, McpServerError):
                learn.noisy.add((tool, args_json))
                return None
            out.append(["rejected" if result.is_error else "success", result_output(result)])
        return out

    def _unchanged(self, learn: ServerLearning, manifest: Manifest) -> bool:
        """Whether asking questions left the sandbox as ``manifest`` says; if not, it is put back and the server
        learns nothing more (a tool that reads by its annotation or name changed a file)."""
        if fingerprint(self.sandbox.scan()) == fingerprint(manifest):
            return True
        self.sandbox.restore(manifest)
        learn.stop("a question changed the sandbox")
        return False

    def _before_restore(self, target: str) -> dict[str, tuple[list[Question], list[Any]]]:
        """The servers this restore is to teach whether they need restarts, with their questions and the answers of
        their running instance before the files change (a server whose memory holds counted calls is restarted
        anyway and teaches nothing; one parked at ``target`` is taken up without a new instance)."""
        out: dict[str, tuple[list[Question], list[Any]]] = {}
        for name, conn in self._conns.items():
            learn = self.learning[name]
            questions = learn.questions()
            if not questions or not learn.probing() or conn.dirty or not conn.running or target in self._parked[name]:
                continue
            before = self._answers(learn, conn, questions)
            if before is not None and self._unchanged(learn, self._live_manifest):
                out[name] = (questions, before)
        return out

    def _probe_restore(
        self, name: str, conn: Connection, questions: list[Question], before: list[Any], manifest: Manifest
    ) -> Connection:
        """After the files changed: the running instance's answers against those of a fresh instance on the
        restored files, which replaces it (the restart the safe behaviour makes anyway). Returns the fresh instance."""
        learn = self.learning[name]
        running = self._answers(learn, conn, questions)
        fresh = self._instance(conn.spec, conn.mode)
        try:
            self._start(fresh)
        except McpServerError:
            learn.stop("a fresh instance did not start")
            return fresh
        answers = self._answers(learn, fresh, questions)
        if running is None or answers is None or not self._unchanged(learn, manifest):
            return fresh
        stale = self._differ(learn, conn, questions, running, answers)
        if stale is not None:
            kept = [i for i, q in enumerate(questions) if q not in learn.noisy]
            learn.after_restore(stale, informative=any(before[i] != answers[i] for i in kept))
        return fresh

    def _differ(
        self, learn: ServerLearning, conn: Connection, questions: list[Question], running: list[Any], fresh: list[Any]
    ) -> bool | None:
        """Whether the running instance answers unlike a fresh one. An answer that differs is asked of the running
        instance again: one that changes by itself (a clock) is dropped from the questions instead of taken for a
        difference. None when asking again failed."""
        differing = [i for i, (a, b) in enumerate(zip(running, fresh, strict=True)) if a != b]
        again = self._answers(learn, conn, [questions[i] for i in differing]) if differing else []
        if again is None:
            return None
        real = False
        for i, answer in zip(differing, again, strict=True):
            if answer != running[i]:
                learn.noisy.add(questions[i])
            else:
                real = True
        return real

    def _learn_from(self, server: str, mcp_name: str, args_json: str, after: Manifest) -> None:
        """After a success that changed no file: a reading call becomes a question for later probes; another call may
        have changed the server's memory, which a memory probe looks for."""
        learn = self.learning[server]
        if mcp_name in learn.reading:
            learn.remember(mcp_name, args_json)
        elif learn.probing_calls():
            self._probe_memory(server, mcp_name, after)

    def _probe_memory(self, server: str, tool: str, after: Manifest) -> None:
        """After ``tool`` succeeded without changing a file: whether the server's memory holds what it did, by its
        running instance's answers against those of a fresh instance on the same files (ended after)."""
        learn, conn = self.learning[server], self._conns[server]
        questions = learn.questions()
        if not questions:
            return
        running = self._answers(learn, conn, questions)
        fresh = self._instance(conn.spec, conn.mode)
        try:
            self._start(fresh)
            answers = self._answers(learn, fresh, questions)
        except McpServerError:
            learn.stop("a fresh instance did not start")
            return
        finally:
            fresh.stop()
        if running is None or answers is None or not self._unchanged(learn, after):
            return
        keeps = self._differ(learn, conn, questions, running, answers)
        if keeps is not None:
            learn.after_call(tool, keeps)

    # -- calls ------------------------------------------------------------------------------------------
    def invoke(self, state: State, tool: str, args: Mapping[str, Any] | None = None) -> tuple[InvocationRecord, State]:
        entry = self._tools.get(tool)
        if entry is None:
            raise UnknownToolError(
                f"unknown tool {tool!r}: runtime {self.catalog.name!r} has {len(self._tools)} tools named "
                f"like {next(iter(self._tools), '?')!r}"
            )
        if args is None:
            args = {}
        if not isinstance(args, Mapping):
            raise ToolRuntimeError(f"arguments of {tool!r} must be a JSON object (dict), got {type(args).__name__}")
        args_json = _canonical(args)
        key = (state.fingerprint, tool, args_json)
        hit = self._memo.get(key)
        if hit is not None:
            self.stats["memo_hits"] += 1
            return InvocationRecord.from_dict(hit[0]), hit[1]
        server, mcp_name, annotations = entry
        self._reach(state)
        conn = self._conns[server]
        before = self._live_manifest
        path: McpPath = state.payload
        t0 = time.perf_counter()
        fatal = False
        try:
            result = conn.call(mcp_name, json.loads(args_json))
        except McpServerError as exc:  # a restart after a crash failed: the call has no result
            record = InvocationRecord("error", None, {}, str(exc))
            fatal = True
        except CallFailed as exc:
            record = InvocationRecord("error", None, {}, str(exc))
            fatal = exc.fatal
        else:
            output = result_output(result)
            if result.is_error:
                record = InvocationRecord("rejected", output, {}, _error_text(output))
            else:
                record = InvocationRecord("success", output, {}, None)
        record.duration_ms = (time.perf_counter() - t0) * 1000
        self.stats["calls"] += 1
        self.timings["call_ms"].append(record.duration_ms)
        after = self.sandbox.scan()
        history = path.history
        counted = self._counts(conn, annotations, record.status)
        if counted:
            history = history + ((tool, args_json),)
            conn.dirty = True
        changes: dict[str, Any] = {}
        dir_fp = fingerprint(after)
        if record.status == "success" and dir_fp == fingerprint(before):
            self._learn_from(server, mcp_name, args_json, after)
        if dir_fp != fingerprint(before):
            changes["sandbox"] = self.sandbox.diff(before, after)
            if annotations.get("readOnlyHint"):
                self.hint_conflicts.setdefault(tool, "marked readOnlyHint but changed the sandbox")
        if counted:
            changes[conn.spec.name] = {
                "changed": {},
                "added": {f"calls[{len(history) - 1}]": {"tool": tool, "arguments": json.loads(args_json)}},
                "removed": {},
            }
        record.state_changes = changes
        fp = self._fingerprint(dir_fp, history)
        new_state = (
            state
            if fp == state.fingerprint
            else self._state(dir_fp, after, McpPath(path.steps + ((tool, args_json, fp),), history))
        )
        self._live_manifest = after
        self._live = (
            None if fatal and any(c.spec.state == "process" for c in self._conns.values()) else new_state.fingerprint
        )
        self._memo[key] = (record.to_dict(), new_state)
        return record, new_state

    def invoke_many(
        self, calls: Iterable[tuple[State, str, Mapping[str, Any]]]
    ) -> list[tuple[InvocationRecord, State]]:
        """Calls one after another (the servers share one sandbox, so they cannot run side by side)."""
        return [self.invoke(s, t, a) for s, t, a in calls]

    def close(self) -> None:
        """End every server (their process groups), the event loop, and the work directory if it is ours."""
        self.closed = True
        for conn in getattr(self, "_every", []):
            with contextlib.suppress(Exception):  # keep ending the others
                conn.stop()
        if hasattr(self, "_loop"):
            self._loop.close()
        if self._own_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
