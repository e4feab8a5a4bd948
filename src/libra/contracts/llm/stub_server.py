"""A small OpenAI-compatible chat endpoint for exercising the LLM proposer without a model.

Why it exists: the LLM proposer's retries, cache, budget and fallback must be tested over real HTTP through the
real ``openai`` SDK, and ``libra build --proposer llm`` must be runnable end to end on a laptop. The server speaks
just enough of the chat-completions protocol (``POST /v1/chat/completions``, ``GET /v1/models``) and delegates
each reply to a *responder*:

- :class:`OfflineResponder` answers deterministically with a valid contract derived from the request's own
  ``public_tool_metadata`` (the offline proposer's contract; for a revision, the offline reviser's result).
- :class:`ScriptedResponder` plays scripted replies per tool (contracts, broken JSON, HTTP errors) and hands any
  tool without a script left to a fallback responder.

Standard library only (``http.server`` in a thread); bind to 127.0.0.1 with port 0 for an ephemeral port.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from libra.catalog import Tool
from libra.contracts.model import Contract
from libra.contracts.offline.proposer import propose as offline_propose
from libra.contracts.offline.proposer import revise as offline_revise


@dataclass
class Reply:
    """One scripted answer: message content with HTTP 200, or an error status with an OpenAI-style error body."""

    content: str | None = None
    status: int = 200
    delay: float = 0.0


def request_payload(body: dict[str, Any]) -> dict[str, Any]:
    """The libra contract request (the JSON user message) inside a chat-completions body, or {}."""
    for msg in reversed(body.get("messages") or []):
        if msg.get("role") == "user" and isinstance(msg.get("content"), str):
            try:
                payload = json.loads(msg["content"])
            except json.JSONDecodeError:
                return {}
            return payload if isinstance(payload, dict) else {}
    return {}


def request_tool(body: dict[str, Any]) -> str | None:
    meta = request_payload(body).get("public_tool_metadata")
    return meta.get("name") if isinstance(meta, dict) else None


def contract_json(contract: Contract) -> str:
    """A contract serialized the way a model would answer: contract fields only."""
    d = contract.to_dict()
    for key in ("notes", "flags", "proposer"):
        d.pop(key, None)
    return json.dumps(d, ensure_ascii=False)


class OfflineResponder:
    """Valid contracts computed from the request alone, so any catalog works without a model.

    An initial request gets the offline proposal for ``public_tool_metadata``; a revision request gets the offline
    revision of ``previous_contract`` under the supplied same-tool feedback (or the previous contract unchanged).
    """

    def __call__(self, body: dict[str, Any], index: int) -> Reply:
        payload = request_payload(body)
        meta = payload.get("public_tool_metadata")
        if not isinstance(meta, dict):
            return Reply(json.dumps({"error": "no public_tool_metadata in the request"}), status=400)
        tool = Tool.from_dict({k: v for k, v in meta.items() if k in ("name", "description", "parameters", "response")})
        previous = payload.get("previous_contract")
        if not isinstance(previous, dict):
            return Reply(contract_json(offline_propose(tool)))
        contract = Contract.from_dict(previous)
        fb = payload.get("same_tool_invocation_feedback") or {}
        calls = [fb["triggering_call"]] if isinstance(fb.get("triggering_call"), dict) else []
        calls += [c for c in fb.get("other_calls") or [] if isinstance(c, dict)]
        feedback = [
            {"arguments": c.get("arguments") or {}, "record": c.get("invocation_result"), "expected": c.get("expected")}
            for c in calls
            if isinstance(c.get("invocation_result"), dict)
        ]
        revised = offline_revise(contract, tool, feedback) if feedback else None
        return Reply(contract_json(revised or contract))


class ScriptedResponder:
    """Per-tool scripts of replies, played in order; tools without (remaining) script go to ``fallback``."""

    def __init__(
        self, scripts: dict[str, Iterable[Reply | str]], fallback: Callable[[dict[str, Any], int], Reply] | None = None
    ) -> None:
        self._scripts = {
            name: [r if isinstance(r, Reply) else Reply(r) for r in replies] for name, replies in scripts.items()
        }
        self._lock = threading.Lock()
        self.fallback = fallback or OfflineResponder()

    def __call__(self, body: dict[str, Any], index: int) -> Reply:
        tool = request_tool(body) or ""
        with self._lock:
            script = self._scripts.get(tool)
            reply = script.pop(0) if script else None
        return reply if reply is not None else self.fallback(body, index)


class _QuietServer(ThreadingHTTPServer):
    """A client that gave up (its timeout ran out during a slow scripted reply) is expected here, not an error."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def tool(self) -> str | None:
        return request_tool(self.body)

    @property
    def payload(self) -> dict[str, Any]:
        return request_payload(self.body)


class OpenAIStubServer:
    """The server plus what it observed: every request, and the maximum number served at the same time."""

    def __init__(
        self,
        responder: Callable[[dict[str, Any], int], Reply] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        delay: float = 0.0,
    ) -> None:
        self.responder = responder or OfflineResponder()
        self.delay = delay
        self.received: list[Received] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._httpd = _QuietServer((host, port), self._handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.received)

    def requests_for(self, tool: str) -> list[Received]:
        with self._lock:
            return [r for r in self.received if r.tool == tool]

    def start(self) -> OpenAIStubServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def serve_forever(self) -> None:
        try:
            self._httpd.serve_forever(poll_interval=0.2)
        finally:
            self._httpd.server_close()

    def __enter__(self) -> OpenAIStubServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- protocol ------------------------------------------------------------------------------------------
    def _answer(self, path: str, body: dict[str, Any], headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            index = len(self.received)
            self.received.append(Received(path, body, headers))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            reply = self.responder(body, index)
            if self.delay or reply.delay:
                time.sleep(self.delay + reply.delay)
        finally:
            with self._lock:
                self.in_flight -= 1
        if reply.status != 200:
            kind = "rate_limit_exceeded" if reply.status == 429 else "server_error"
            return reply.status, {
                "error": {
                    "message": reply.content or f"scripted HTTP {reply.status}",
                    "type": kind,
                    "code": None,
                    "param": None,
                }
            }
        content = reply.content or ""
        prompt_tokens = sum(len(str(m.get("content", ""))) for m in body.get("messages") or []) // 4
        completion_tokens = len(content) // 4
        return 200, {
            "id": f"chatcmpl-stub-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _send(self, status: int, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - http.server naming
                if self.path.rstrip("/").endswith("/models"):
                    self._send(
                        200,
                        {
                            "object": "list",
                            "data": [{"id": "stub", "object": "model", "created": 0, "owned_by": "libra"}],
                        },
                    )
                else:
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

            def do_POST(self) -> None:  # noqa: N802 - http.server naming
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
                    return
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
                    return
                status, obj = server._answer(self.path, body, {k.lower(): v for k, v in self.headers.items()})
                self._send(status, obj)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - keep test output quiet
                return

        return Handler
