"""AppWorld inside its own environment: API execution backend, catalog generator and bundle decrypter.

This file runs under the AppWorld virtual environment's interpreter (see :mod:`libra.benchmarks.appworld.env`),
which has the standard library and ``appworld`` but not ``libra``: it must never import ``libra``. It is used in
two ways:

- as a :mod:`libra.runtime.workers.remote_server` backend (``make_backend``), loaded by path;
- as a script: ``python appworld_server.py catalog OUT.json`` writes the public API docs of
  ``ApiDocCollection.build()``; ``python appworld_server.py decrypt BUNDLE DEST`` unpacks an encrypted bundle with
  AppWorld's own ``unpack_bundle`` and key; ``python appworld_server.py bench N`` times calls and resets.

The sandbox (why it looks like this):

- All apps run on AppWorld's own API machinery (``Requester`` over the FastAPI apps, so request validation,
  ``access_token`` auth and HTTP errors behave as in AppWorld), each app on its own in-memory SQLite database,
  tables created empty. The clock is frozen at AppWorld's default system time, and ``random`` is reseeded before
  each call from (state, tool, args), so a call is a pure function of its state and arguments.
- The fresh state is built here, never from task data: a made-up supervisor (profile, address, payment card,
  one placeholder active task) signs up to every app through the apps' ``signup`` APIs with generated passwords,
  which are stored in the supervisor's account passwords (the only public way to learn them); a made-up contact
  signs up to the social apps; and the supervisor creates a few records per app through public create APIs.
  Spotify's catalogue (two artists, an album, three songs) and Amazon's (a seller, three products) are the
  exceptions: no public API creates them, so they are written through the apps' models, as AppWorld's own data
  generation does.
- A state is one part per app: the bytes of ``sqlite3.Connection.serialize()`` of its database, keyed by a
  content hash (the header's change counters are left out of the hash, so equal content gives equal keys).
  Restoring copies a part into the live database with the SQLite backup API, only for apps whose content differs
  from what is loaded. After a call only apps whose connection saw writes are re-serialized, and their rows are
  diffed table by table (only the tables whose pages changed: :func:`untouched_tables`) into ``state_changes``:
  ``{app: {table: {"added": [row...], "removed": [row...], "changed": [{"id", "before", "after"}...]}}}``.
- A call that wrote nothing, revoked no token and drew no random number says which parts it read (``reads``: the
  apps whose connection ran a statement during the call or whose content key the user-loader memo asked for, and
  the revoked tokens, which every signed-in request checks), so the server answers a repeat of it from any state
  that agrees on those parts without running it (:class:`ReadMemo` of :mod:`libra.runtime.workers.remote_server`). Why:
  most calls of a build are rejected requests and reads of one app, repeated from states that differ elsewhere.
- AppWorld keeps one piece of state outside the databases: the access tokens revoked by ``logout``, in each
  app's login manager. It is a part of the state too (``TOKENS_PART``, the sorted revoked tokens per app), so a
  logout in one state never leaks into another and every worker process agrees on what a token is worth.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import sys
import time
from typing import Any

SUPERVISOR = {
    "first_name": "Casey",
    "last_name": "Morgan",
    "email": "casey.morgan@gmail.com",
    "phone_number": "4155550132",
    "birthday": "1990-04-12",
    "sex": "female",
}
CONTACT = {
    "first_name": "Jordan",
    "last_name": "Reyes",
    "email": "jordan.reyes@gmail.com",
    "phone_number": "4155550187",
}
SOCIAL_APPS = ("phone", "gmail", "venmo", "splitwise", "todoist")
FROZEN_AT = (2023, 5, 18, 12, 0, 0)  # AppWorld's DEFAULT_SYSTEM_DATETIME
TOKENS_PART = "__revoked_tokens__"
_FTS_SHADOW = ("_data", "_idx", "_docsize", "_config", "_content")
_FTS_SHADOW_ALL = (*_FTS_SHADOW, "_segments", "_segdir", "_stat")  # FTS5's, and FTS3/4's
# the real clock, kept in a tuple: freezegun replaces module-level references to time functions, not this one
_CLOCK = (time.perf_counter,)


def _log(msg: str) -> None:
    print(f"[appworld-backend] {msg}", file=sys.stderr)


def _password(app: str, who: str) -> str:
    """Deterministic, unguessable-looking per-app passwords (the library must read them, not guess them)."""
    return "Pw-" + hashlib.sha256(f"libra-sandbox:{who}:{app}".encode()).hexdigest()[:12]


def part_key(data: bytes) -> str:
    """Content hash of a serialized database, ignoring header bytes that count writes or restores, not content."""
    if (
        len(data) >= 100
    ):  # file change counter (24), schema cookie (40: bumped by a backup restore), version-valid-for (92)
        data = data[:24] + b"\0" * 4 + data[28:40] + b"\0" * 4 + data[44:92] + b"\0" * 4 + data[96:]
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------------------------
# catalog and decryption (script mode)
# ---------------------------------------------------------------------------------------------------------------
def public_api_docs() -> list[dict[str, Any]]:
    """The public API docs of every app, as AppWorld generates them (standard format, response examples kept)."""
    from appworld.collections.api_docs import ApiDocCollection

    docs = ApiDocCollection.build(include_response_schemas=True)
    out = []
    for app in docs.keys():
        for doc in docs[app].values():
            out.append(json.loads(json.dumps(doc, default=str)))
    return out


def decrypt(bundle: str, dest: str) -> None:
    from appworld.common.constants import PASSWORD, SALT
    from appworld.common.utils import unpack_bundle

    unpack_bundle(bundle, dest, PASSWORD, SALT)


# ---------------------------------------------------------------------------------------------------------------
# the backend
# ---------------------------------------------------------------------------------------------------------------
def _jsonable(v: Any) -> Any:
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    return v


def _tables(conn: sqlite3.Connection) -> list[str]:
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
    ]
    shadows = {f + s for f in names if f.endswith("_fts") for s in _FTS_SHADOW}
    return [n for n in names if n not in shadows]


def _raw_rows(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[tuple[Any, ...]]]:
    cur = conn.execute(f'SELECT rowid AS "__rowid__", * FROM "{table}"')
    return [d[0] for d in cur.description], cur.fetchall()


def _rows(
    conn: sqlite3.Connection, table: str, raw: tuple[list[str], list[tuple[Any, ...]]] | None = None
) -> dict[Any, dict[str, Any]]:
    cols, rows = raw if raw is not None else _raw_rows(conn, table)
    out = {}
    for row in rows:
        rec = {c: _jsonable(v) for c, v in zip(cols[1:], row[1:])}
        out[rec.get("id", row[0])] = rec
    return out


def _open(data: bytes) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.deserialize(data)
    return conn


_HEADER_BYTES = 100  # the database header at the start of page 1 (change counters, page counts: not content)


def _page_size(data: bytes) -> int:
    size = int.from_bytes(data[16:18], "big")
    return 65536 if size == 1 else size


def untouched_tables(before: bytes, after: bytes, conn: sqlite3.Connection) -> set[str]:
    """Tables of ``before`` (open as ``conn``) whose content is certainly the same in ``after``: none of the pages
    that hold them differs between the two serializations.

    Why it is safe: a table's rows are read from the b-tree pages reachable from its root page (its overflow
    pages included), and ``dbstat`` lists exactly those pages under the table's name. When the schema is the same
    (page 1 past the header and every other page of ``sqlite_schema`` unchanged, so every root page is the same)
    and none of a table's pages in ``before`` changed, reading it in ``after`` reads the same bytes. A table that
    owns no page (a virtual table, such as full-text search over its shadow tables) is never listed, and neither
    is any table when the schema or the page size changed, or when SQLite has no ``dbstat``: those are compared
    row by row as before. Why it matters: a call changes a row or two of one table, and comparing every table of
    the app row by row was most of the cost of a write.
    """
    size = _page_size(before)
    if size != _page_size(after) or size < 512:
        return set()
    if before[_HEADER_BYTES:size] != after[_HEADER_BYTES:size]:
        return set()
    changed = {
        page + 1
        for page in range(1, (len(before) + size - 1) // size)
        if before[page * size : (page + 1) * size] != after[page * size : (page + 1) * size]
    }
    try:
        owners = conn.execute("SELECT name, pageno FROM dbstat").fetchall()
    except sqlite3.Error:
        return set()
    touched = {name for name, page in owners if page in changed}
    if "sqlite_schema" in touched or "sqlite_master" in touched:
        return set()
    same = {name for name, _page in owners} - touched
    # A full-text table keeping its own copy of the text (FTS3/4/5 without an external ``content=`` table) reads
    # its rows from its ``<name>_content`` shadow table and nothing else: untouched with all its shadow tables.
    shadows = {name for name, _page in owners}
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE 'CREATE VIRTUAL TABLE%USING fts%'"
    ):
        own = {name + suffix for suffix in _FTS_SHADOW_ALL} & shadows
        if name + "_content" in own and own <= same:
            same.add(name)
    return same


def diff_databases(before: bytes, after: bytes) -> dict[str, Any]:
    """Row-level diff of two serialized databases: {table: {added, removed, changed}} for changed tables only.

    Tables whose pages are all the same in both (:func:`untouched_tables`) are skipped without reading them."""
    a, b = _open(before), _open(after)
    try:
        out: dict[str, Any] = {}
        tables_a, tables_b = set(_tables(a)), set(_tables(b))
        same = untouched_tables(before, after, a)
        for table in sorted(tables_a | tables_b):
            if table in same and table in tables_b:
                continue
            raw_a = _raw_rows(a, table) if table in tables_a else None
            raw_b = _raw_rows(b, table) if table in tables_b else None
            if raw_a is not None and raw_a == raw_b:
                continue  # the same columns and rows in the same order: nothing of this table changed
            ra = _rows(a, table, raw_a) if raw_a is not None else {}
            rb = _rows(b, table, raw_b) if raw_b is not None else {}
            if ra == rb:
                continue
            added = [rb[k] for k in rb if k not in ra]
            removed = [ra[k] for k in ra if k not in rb]
            changed = []
            for k in ra:
                if k in rb and ra[k] != rb[k]:
                    cols = [c for c in rb[k] if ra[k].get(c) != rb[k][c]]
                    changed.append(
                        {"id": k, "before": {c: ra[k].get(c) for c in cols}, "after": {c: rb[k][c] for c in cols}}
                    )
            out[table] = {"added": added, "removed": removed, "changed": changed}
        return out
    finally:
        a.close()
        b.close()


class _InlinePortal:
    """Stands in for a ``TestClient``'s blocking portal: runs what it is given on an event loop in the calling thread.

    Why: AppWorld's requester is a starlette ``TestClient``, which hands every request to an event loop in a
    thread of its own and waits for the answer (two round trips per request). A backend answers one request at a
    time, so that thread buys nothing, and the hand-offs cost CPU and, on a busy machine, waits for the GIL.
    """

    def __init__(self) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()

    def call(self, func: Any, *args: Any) -> Any:
        import inspect

        async def run() -> Any:
            result = func(*args)
            return (await result) if inspect.isawaitable(result) else result

        return self.loop.run_until_complete(run())


async def _run_sync_inline(func: Any, *args: Any, **_options: Any) -> Any:
    """``anyio.to_thread.run_sync`` without the thread: the function runs in a copy of the caller's context, as in
    a worker thread (contextvars it sets stay local), but in the calling thread."""
    import contextvars

    return contextvars.copy_context().run(func, *args)


def run_requests_inline(requester: Any) -> Any:
    """Make ``requester`` run its requests in the calling thread (:class:`_InlinePortal`), and FastAPI's sync
    endpoints and dependencies in the event loop's thread instead of a worker thread of their own.

    Why it changes no answer: the same ASGI application handles the same request; only the threads differ, and the
    backend serves one request at a time (nothing runs concurrently that the threads kept apart). It saves four
    to six thread hand-offs per call. Every module holding ``anyio.to_thread.run_sync`` under that name (the
    module itself, and those that imported it by name) gets the inline version. Returns a function that puts the threads
    back (None when the requester has
    no ``TestClient`` with a portal: it is left as it is).
    """
    client = getattr(requester, "client", None)
    portal = getattr(client, "portal", None)
    if portal is None:
        return None
    import anyio.to_thread

    threaded = anyio.to_thread.run_sync
    client.portal = _InlinePortal()
    # Modules that imported the function by name (``from anyio.to_thread import run_sync``, as fastapi_login does
    # to load the user of every authenticated request) hold their own reference: replace those too, or each such
    # call still goes to a worker thread and back.
    holders = [m for m in list(sys.modules.values()) if m is not None and vars(m).get("run_sync") is threaded]
    for module in holders:
        module.run_sync = _run_sync_inline  # type: ignore[attr-defined]

    def undo() -> None:
        client.portal = portal
        for module in holders:
            module.run_sync = threaded  # type: ignore[attr-defined]

    return undo


class _DirectClient:
    """The requester's ``TestClient`` without the HTTP client around the ASGI call: the same request, built by
    the client's own ``build_request`` (so its URL, query string, headers, cookies and body are the bytes the
    client would send), handed straight to the application in one turn of the event loop.

    Why: for a request that the application answers quickly (a rejected token, a validation error) most of a
    call's CPU went to the layers between the requester and the application -- merging the URL twice, the send
    machinery (auth flow, redirect loop, response streams), and two event-loop turns per request (one to create
    the completion event, one for the application). This runs what those layers do to an in-process request and
    nothing else. What ``httpx.Client.send`` does that could change an answer is kept: redirects are followed as
    it follows them (same limit, same redirect request), cookies a response sets are stored in the client's jar
    (and so sent with the next request, as before), and the response is an ``httpx.Response`` read in full, so
    ``.json()``, ``.text`` and ``.status_code`` are computed as before. The scope is built exactly as the test
    client's transport builds it, and a server exception propagates as it does there.
    """

    def __init__(self, client: Any, loop: Any) -> None:
        self.client = client
        self.transport = client._transport
        self.loop = loop

    def __getattr__(self, name: str) -> Any:  # anything else the requester asks of its client (e.g. __exit__)
        return getattr(self.client, name)

    def __exit__(self, *exc: object) -> Any:
        return self.client.__exit__(*exc)

    def get(self, url: str, **kwargs: Any) -> Any:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> Any:
        return self.request("POST", url, **kwargs)

    def put(self, url: str, **kwargs: Any) -> Any:
        return self.request("PUT", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> Any:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> Any:
        return self.request("DELETE", url, **kwargs)

    def request(self, method: str, url: str, **kwargs: Any) -> Any:
        import httpx

        client = self.client
        request = client.build_request(method, url, **kwargs)
        history: list[Any] = []
        while True:  # httpx.Client._send_handling_redirects, without its hooks (the test client sets none)
            if len(history) > client.max_redirects:
                raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=request)
            response = self._send(request)
            if "set-cookie" in response.headers:
                client.cookies.extract_cookies(response)
            response.history = list(history)
            if not (client.follow_redirects and response.has_redirect_location):
                return response
            history = [*history, response]
            request = client._build_redirect_request(request, response)

    def _send(self, request: Any) -> Any:
        """``_TestClientTransport.handle_request`` for a plain HTTP request, in one turn of the event loop."""
        import io
        from urllib.parse import unquote

        import anyio
        import httpx

        url = request.url
        scheme, netloc = url.scheme, url.netloc.decode("ascii")
        default_port = {"http": 80, "https": 443}[scheme]
        host, _, port_text = netloc.partition(":")
        port = int(port_text) if port_text else default_port
        headers: list[tuple[bytes, bytes]]
        if "host" in request.headers:
            headers = []
        else:
            headers = [(b"host", (host if port == default_port else f"{host}:{port}").encode())]
        headers += [(key.lower().encode(), value.encode()) for key, value in request.headers.multi_items()]
        transport = self.transport
        scope = {
            "type": "http",
            "http_version": "1.1",
            "method": request.method,
            "path": unquote(url.path),
            "raw_path": url.raw_path,
            "root_path": transport.root_path,
            "scheme": scheme,
            "query_string": url.query.decode("ascii").encode(),
            "headers": headers,
            "client": ["testclient", 50000],
            "server": [host, port],
            "extensions": {"http.response.debug": {}},
            "state": transport.app_state.copy(),
        }
        body = request.read()
        out: dict[str, Any] = {"stream": io.BytesIO()}
        sent = {"request": False, "started": False}

        async def run() -> None:
            complete = anyio.Event()

            async def receive() -> dict[str, Any]:
                if sent["request"]:
                    if not complete.is_set():
                        await complete.wait()
                    return {"type": "http.disconnect"}
                sent["request"] = True
                return {"type": "http.request", "body": body}

            async def send(message: dict[str, Any]) -> None:
                if message["type"] == "http.response.start":
                    assert not sent["started"], 'Received multiple "http.response.start" messages.'
                    out["status_code"] = message["status"]
                    out["headers"] = [(k.decode(), v.decode()) for k, v in message.get("headers", [])]
                    sent["started"] = True
                elif message["type"] == "http.response.body":
                    assert sent["started"], 'Received "http.response.body" without "http.response.start".'
                    assert not complete.is_set(), 'Received "http.response.body" after response completed.'
                    if request.method != "HEAD":
                        out["stream"].write(message.get("body", b""))
                    if not message.get("more_body", False):
                        out["stream"].seek(0)
                        complete.set()

            await transport.app(scope, receive, send)

        try:
            self.loop.run_until_complete(run())
        except BaseException:
            if transport.raise_server_exceptions:
                raise
        if transport.raise_server_exceptions:
            assert sent["started"], "TestClient did not receive any response."
        elif not sent["started"]:
            out = {"status_code": 500, "headers": [], "stream": io.BytesIO()}
        response = httpx.Response(
            out["status_code"], headers=out["headers"], stream=httpx.ByteStream(out["stream"].read()), request=request
        )
        response.default_encoding = self.client._default_encoding
        response.read()
        return response


def send_requests_direct(requester: Any) -> Any:
    """Give ``requester`` a :class:`_DirectClient` over its test client, when it has one whose internals are the
    ones the direct path reproduces (else it is left as it is). Returns a function that puts the test client back,
    or None when nothing was changed."""
    client = getattr(requester, "client", None)
    transport = getattr(client, "_transport", None)
    needed = ("app", "root_path", "app_state", "raise_server_exceptions")
    if (
        client is None
        or not all(hasattr(transport, a) for a in needed)
        or not hasattr(client, "_build_redirect_request")
    ):
        return None
    portal = getattr(client, "portal", None)
    if isinstance(portal, _InlinePortal):
        loop = portal.loop
    else:
        import asyncio

        loop = asyncio.new_event_loop()
    requester.client = _DirectClient(client, loop)

    def undo() -> None:
        requester.client = client

    return undo


def _is_raised(exc: BaseException, raised: Any) -> bool:
    """Whether ``exc`` is what ``raise raised`` raises: that very exception, or a bare instance of that class."""
    if isinstance(raised, type):
        return type(exc) is raised and not exc.args
    return exc is raised


def memoize_token_payloads(manager_class: Any) -> Any:
    """Decode each access token once: ``manager_class._get_payload`` (the login manager's JWT decoding) answers a
    token it has seen, under the same secret, algorithm and clock, from a table.

    Why it changes no answer: decoding is a pure function of the token, the secret, the algorithm and the current
    time (for the expiry check), and all four are in the key; the clock is frozen here, so the table's entries stay
    valid, but a moved clock is simply a new key. A token that fails to decode raises the manager's own
    ``not_authenticated_exception`` as the original does, and a decoded payload is handed out as a copy. What
    does depend on the state -- the revoked tokens (checked by AppWorld's subclass before it calls this) and the
    user the payload names (loaded afterwards) -- is not memoized. Why it matters: every signed-in request, and
    every request with a made-up token, decoded and verified a JWT, a sizeable part of a request's CPU.
    Returns a function that puts the original method back.
    """
    original = manager_class._get_payload
    table: dict[tuple[Any, ...], Any] = {}
    invalid = object()

    def _get_payload(self: Any, token: str) -> Any:
        key = (self.secret.secret_for_decode, self.algorithm, token, time.time())
        found = table.get(key)
        if found is None:
            try:
                found = original(self, token)
            except Exception as exc:
                if not _is_raised(exc, self.not_authenticated_exception):
                    raise
                found = invalid
            if len(table) >= 100_000:
                table.clear()
            table[key] = found
        if found is invalid:
            raise self.not_authenticated_exception
        return dict(found)

    manager_class._get_payload = _get_payload

    def undo() -> None:
        manager_class._get_payload = original

    return undo


def _routers(app: Any, found: dict[int, Any]) -> None:
    """Every starlette router reachable from ``app``: its own, and those of the applications it mounts."""
    from starlette.routing import Router

    router = app if isinstance(app, Router) else getattr(app, "router", None)
    if not isinstance(router, Router) or id(router) in found:
        return
    found[id(router)] = router
    for route in router.routes:
        mounted = getattr(route, "_base_app", None)  # a Mount's application, under any middleware it adds
        if mounted is not None:
            _routers(mounted, found)


def memoize_route_choice(app: Any) -> Any:
    """Find each request's route once: every router of ``app`` (starlette's, which asks each of its routes in turn
    whether it matches) remembers which route first matched a request fully and, on a repeat, asks only that one.

    Why it changes no answer: whether a route matches is a pure function of the request's type, path (as the
    router sees it, after its mount's root path), method and the path parameters its mounts matched, and of the
    router's list of routes; all of these are in the key (the list by identity and length: routes are added
    when the apps are built, not per request). The remembered route is still asked, so the scope it hands on
    (endpoint, converted path parameters) is computed as before, and a request that no route fully matches
    (a wrong method, a missing API, a redirect) goes through the original loop every time. Only routers that
    run their own matching loop directly (no middleware of their own) are changed. Why it matters: an AppWorld
    request was matched against a dozen app mounts and then against some thirty routes of its app, a regular
    expression each, about a twentieth of a call's CPU. Returns a function that puts the routers back; its
    ``routers`` attribute counts the routers changed (for tests).
    """
    import types

    from starlette.routing import Match, Router, get_route_path

    original = Router.app
    table: dict[tuple[Any, ...], int] = {}

    async def choose(self: Any, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            return await original(self, scope, receive, send)
        routes = self.routes
        try:
            key = (
                id(self),
                id(routes),
                len(routes),
                get_route_path(scope),
                scope.get("root_path", ""),
                scope["method"],
                tuple(sorted(scope.get("path_params", {}).items())),
            )
            hash(key)
        except (TypeError, KeyError):
            return await original(self, scope, receive, send)
        index = table.get(key)
        if index is None:
            index = next((i for i, route in enumerate(routes) if route.matches(scope)[0] == Match.FULL), -1)
            if len(table) >= 50_000:
                table.clear()
            table[key] = index
        if index < 0:
            return await original(self, scope, receive, send)
        route = routes[index]
        match, child_scope = route.matches(scope)
        if match != Match.FULL:  # cannot happen for the same key; the original decides if it ever does
            return await original(self, scope, receive, send)
        if "router" not in scope:
            scope["router"] = self
        scope.update(child_scope)
        await route.handle(scope, receive, send)

    found: dict[int, Any] = {}
    _routers(app, found)
    changed = []
    for router in found.values():
        stack = getattr(router, "middleware_stack", None)
        if getattr(stack, "__func__", None) is original and getattr(stack, "__self__", None) is router:
            router.middleware_stack = types.MethodType(choose, router)
            changed.append((router, stack))

    def undo() -> None:
        for router, stack in changed:
            router.middleware_stack = stack

    undo.routers = len(changed)  # type: ignore[attr-defined]
    return undo


def memoize_user_loaders(managers: dict[str, Any], content_key: Any) -> Any:
    """Load each signed-in user once per database content: every app's login manager answers a user it loaded
    before, from the same content of that app's database, with a fresh copy of what it loaded then.

    ``managers`` maps an app to its login manager (or None); ``content_key(app)`` is the content key of the app's
    live database, or None when the database may differ from that content (writes not yet snapshotted), in which
    case the loader simply runs. Why it changes no answer: a user loader is a query of its own app's database
    for the identifier a token names (AppWorld's ``load_user_by_email`` / ``..._by_phone_number``); its result
    depends on that database's content, the identifier and the arguments bound to the loader, all in the key (with
    the clock, frozen here: a moved clock is a new key). A loader that raises (an unverified account) is not
    memoized and raises again each time. The object handed out on a repeat is an unpickled copy of the detached
    record the loader returned (SQLAlchemy pickles a mapped instance with its identity and loaded state), so an
    endpoint that changes or saves the user it was given changes its own copy, never the table's, and a first
    load hands out the loader's own object, as before. Why it matters: loading the user of a signed-in request
    through the ORM (a session, a compiled query, a row turned into a model) was about a fifth of a call's CPU.
    Returns a function that puts the original loaders back; its ``hits`` dict counts, per app, the loads
    answered from the table (for tests).
    """
    import pickle

    table: dict[tuple[Any, ...], bytes] = {}
    hits: dict[str, int] = {}
    originals: dict[str, Any] = {}
    for app, manager in managers.items():
        loader = getattr(manager, "_user_callback", None)
        if loader is None:
            continue
        originals[app] = loader

        def load(*args: Any, _app: str = app, _loader: Any = loader, **kwargs: Any) -> Any:
            content = content_key(_app)
            try:
                key = (_app, content, args, tuple(sorted(kwargs.items())), time.time())
                hash(key)
            except TypeError:
                content = None
            if content is None:
                return _loader(*args, **kwargs)
            found = table.get(key)
            if found is not None:
                hits[_app] = hits.get(_app, 0) + 1
                return pickle.loads(found)
            user = _loader(*args, **kwargs)
            try:
                data = pickle.dumps(user)
            except Exception:  # noqa: BLE001 - a user that does not pickle is simply loaded each time
                return user
            if len(table) >= 20_000:
                table.clear()
            table[key] = data
            return user

        manager._user_callback = load

    def undo() -> None:
        for app, loader in originals.items():
            managers[app]._user_callback = loader

    undo.hits = hits  # type: ignore[attr-defined]
    return undo


class AppWorldBackend:
    """All AppWorld apps on in-memory SQLite behind AppWorld's requester; see the module docstring."""

    def __init__(self, options: dict[str, Any] | None = None) -> None:
        options = dict(options or {})
        from appworld.apps import get_all_apps
        from appworld.apps.api_lib import import_models_module  # type: ignore[attr-defined]
        from appworld.collections.apis import ApiCollection
        from appworld.common.datetime import DateTime

        home = f":memory:libra{os.getpid()}"
        self.apis, self.requester = ApiCollection.load(
            to_db_home_path=home,
            from_db_home_path=home,
            date_and_time=DateTime(*FROZEN_AT),
            create_db=True,
            raise_on_failure=False,
            max_num_requests=None,
        )
        self.undo_inline = run_requests_inline(self.requester)
        self.undo_direct = send_requests_direct(self.requester)
        from fastapi_login import LoginManager

        self.undo_tokens = memoize_token_payloads(LoginManager)
        self.undo_routes = memoize_route_choice(getattr(getattr(self.requester, "client", None), "app", None))
        self.apps = [a for a in get_all_apps() if a in self.requester.apps]
        self.db = {app: import_models_module(app).SQLModel.db for app in self.apps}
        from appworld.common.utils import import_apis_module

        self.login_managers = {app: getattr(import_apis_module(app), "logging_manager", None) for app in self.apps}
        self.undo_users = memoize_user_loaders(self.login_managers, self.content_key)
        self.public = {f"{d['app_name']}.{d['api_name']}" for d in public_api_docs()}
        self.current: dict[str, str] = {}  # app -> key of the content loaded in its live database
        self.clean: dict[str, int] = {}  # app -> its connection's total_changes when that content was loaded
        self.snap: dict[str, bytes] = {}  # app -> serialized content of the loaded state
        self.seed = int(options.get("seed", 100))
        self._fresh: list[tuple[str, str, bytes]] | None = None
        self._remember_all()
        #: the apps whose database the running call read (None outside a call): see :meth:`_note_read`
        self._read: set[str] | None = None
        for app in self.apps:
            self._conn(app).set_trace_callback(lambda _statement, _app=app: self._note_read(_app))

    # -- snapshots --------------------------------------------------------------------------------------
    def _conn(self, app: str) -> sqlite3.Connection:
        return self.db[app].connection

    def _remember(self, app: str) -> None:
        conn = self._conn(app)
        data = conn.serialize()
        self.snap[app] = data
        self.current[app] = part_key(data)
        self.clean[app] = conn.total_changes

    def _note_read(self, app: str) -> None:
        """Note that the running call depends on ``app``'s database: it ran a statement on its connection (the
        trace callback of every app's connection), or asked its content key (:meth:`content_key`, which a memo
        of what the database holds does instead of running the statement)."""
        if self._read is not None:
            self._read.add(app)

    def content_key(self, app: str) -> str | None:
        """The content key of ``app``'s live database, or None when rows were written since that content was
        loaded or snapshotted (the same write count :meth:`invoke` trusts to know which apps a call changed)."""
        self._note_read(app)
        if app not in self.clean or self._conn(app).total_changes != self.clean[app]:
            return None
        return self.current.get(app)

    def _remember_all(self) -> None:
        for app in self.apps:
            self._remember(app)
        self._remember_tokens()

    def _revoked(self) -> dict[str, list[str]]:
        return {
            app: sorted(m.blacklisted_tokens)
            for app, m in self.login_managers.items()
            if m is not None and getattr(m, "blacklisted_tokens", None)
        }

    def _remember_tokens(self) -> None:
        data = json.dumps(self._revoked(), sort_keys=True).encode()
        self.snap[TOKENS_PART], self.current[TOKENS_PART] = data, hashlib.sha256(data).hexdigest()

    def _parts(self) -> list[tuple[str, str, bytes]]:
        return [(app, self.current[app], self.snap[app]) for app in [*self.apps, TOKENS_PART]]

    def _restore(self, parts: list[tuple[str, str, bytes]]) -> None:
        for app, key, data in parts:
            if self.current.get(app) == key:
                continue
            if app == TOKENS_PART:
                revoked = json.loads(data)
                for name, m in self.login_managers.items():
                    if m is not None and hasattr(m, "blacklisted_tokens"):
                        m.blacklisted_tokens = set(revoked.get(name, ()))
                self.snap[app], self.current[app] = data, key
                continue
            src = _open(data)
            try:
                src.backup(self._conn(app))
            finally:
                src.close()
            self.snap[app], self.current[app] = data, key
            self.clean[app] = self._conn(app).total_changes

    def _changes(self) -> dict[str, int]:
        return {app: self._conn(app).total_changes for app in self.apps}

    # -- calls ------------------------------------------------------------------------------------------
    def _call(self, app: str, api: str, args: dict[str, Any]) -> tuple[int, Any]:
        response = self.requester._request(_app_name=app, _api_name=api, track=False, **args)
        return response.status_code, self.requester.response_to_json(response)

    def invoke(self, parts: list[tuple[str, str, bytes]], tool: str, args: dict[str, Any]) -> dict[str, Any]:
        if tool not in self.public:
            return {
                "status": "error",
                "output": None,
                "error": f"no public AppWorld API named {tool!r}",
                "parts": parts,
            }
        self._restore(parts)
        app, api = tool.split(".", 1)
        state_key = hashlib.sha256("".join(k for _, k, _ in parts).encode()).hexdigest()
        blob = json.dumps(args, sort_keys=True, default=repr)
        random.seed(f"{self.seed}:{state_key}:{tool}:{blob}")
        seeded = random.getstate()
        counts = self._changes()
        self._read = set()
        pure = True  # False when the record may not be a function of the arguments and the parts read
        try:
            status, output = self._call(app, api, dict(args))
            result: dict[str, Any]
            if status == 200:
                result = {"status": "success", "output": output, "error": None}
            elif 400 <= status < 500:
                message = output.get("message") if isinstance(output, dict) else None
                result = {
                    "status": "rejected",
                    "output": output,
                    "error": f"HTTP {status}: {message or json.dumps(output, default=str)[:300]}",
                }
            else:
                result = {"status": "error", "output": output, "error": f"HTTP {status}"}
        except Exception as exc:  # noqa: BLE001 - an exception inside the app is an error record
            msg = str(exc)
            result = {
                "status": "error",
                "output": None,
                "error": f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__,
            }
            pure = not isinstance(exc, (MemoryError, RecursionError))  # the process's limits, not the call's
        finally:
            read, self._read = self._read, None
        after = self._changes()
        state_changes: dict[str, Any] = {}
        before_revoked = json.loads(self.snap[TOKENS_PART])
        revoked = self._revoked()
        if revoked != before_revoked:
            self._remember_tokens()
            state_changes["revoked_tokens"] = {
                app: sorted(set(v) - set(before_revoked.get(app, ())))
                for app, v in revoked.items()
                if set(v) - set(before_revoked.get(app, ()))
            }
        for app_name in self.apps:
            if after[app_name] == counts[app_name]:
                continue
            # the loaded content's key is known (content-addressed parts), so only the new content is hashed
            old, old_key = self.snap[app_name], self.current.get(app_name)
            self._remember(app_name)
            if old_key != self.current[app_name]:
                d = diff_databases(old, self.snap[app_name])
                if d:
                    state_changes[app_name] = d
        result["state_changes"] = state_changes
        result["parts"] = self._parts()
        if pure and after == counts and revoked == before_revoked and random.getstate() == seeded:
            # nothing written, no token revoked, no random number drawn: the record is a function of the arguments
            # and of the parts read (the revoked tokens are read by every signed-in request)
            result["reads"] = [*sorted(read), TOKENS_PART]
        return result

    # -- fresh state ------------------------------------------------------------------------------------
    def _must(self, tool: str, args: dict[str, Any]) -> Any:
        app, api = tool.split(".", 1)
        status, output = self._call(app, api, args)
        if status != 200:
            raise RuntimeError(f"building the fresh AppWorld state: {tool} answered HTTP {status}: {output}")
        return output

    @staticmethod
    def _verify(app: str, who: dict[str, Any]) -> None:
        """Mark a new account verified, as accounts of a running sandbox are (the code would go to its inbox)."""
        from appworld.apps.api_lib import import_models_module  # type: ignore[attr-defined]

        models = import_models_module(app)
        where = {"phone_number": who["phone_number"]} if "phone_number" in who else {"email": who["email"]}
        user = models.User.find_one(**where)
        if user is not None and hasattr(user, "verified") and not user.verified:
            user.verified = True
            user.save()

    @staticmethod
    def _music_catalogue() -> dict[str, Any]:
        """A tiny made-up music catalogue. Nothing public creates songs, albums or artists (a service's catalogue
        is its operator's data), so they are written through the app's models, as AppWorld's own data
        generation does; without them no song, album or artist API has anything to act on."""
        from datetime import datetime

        from appworld.apps.api_lib import import_models_module  # type: ignore[attr-defined]

        sp = import_models_module("spotify")
        nova = sp.Artist(name="Nova Lane", genre="pop")
        nova.save()
        quiet = sp.Artist(name="The Quiet Hours", genre="indie")
        quiet.save()
        album = sp.Album(title="Morning Light", artist_ids=[nova.id], release_date=datetime(2022, 3, 1), genre="pop")
        album.save()
        songs = [
            sp.Song(
                title="First Light",
                artist_ids=[nova.id],
                album_id=album.id,
                duration=215,
                release_date=datetime(2022, 3, 1),
                genre="pop",
            ),
            sp.Song(
                title="Open Road",
                artist_ids=[nova.id],
                album_id=album.id,
                duration=189,
                release_date=datetime(2022, 3, 1),
                genre="pop",
            ),
            sp.Song(
                title="Paper Boats",
                artist_ids=[quiet.id],
                album_id=None,
                duration=240,
                release_date=datetime(2021, 9, 17),
                genre="indie",
            ),
        ]
        for song in songs:
            song.save()
        return {
            "playlist_songs": [songs[0].id, songs[2].id],
            "song": songs[1].id,
            "album": album.id,
            "artist": quiet.id,
        }

    @staticmethod
    def _store_catalogue() -> None:
        """A tiny made-up store: one seller and three products. As with the music catalogue, no public API creates
        a seller or a product (a store's inventory is its operator's data), so they are written through the app's
        models; without them every product, cart, wish-list, order and review API of the store has nothing to act
        on, and the build's health summary lists them all as never succeeding."""
        from appworld.apps.api_lib import import_models_module  # type: ignore[attr-defined]

        am = import_models_module("amazon")
        seller = am.Seller(name="Harbor Goods", rating=4.5)
        seller.save()
        common = {"seller_id": seller.id, "inventory_quantity": 20, "rating": 4.2, "seller_rating": 4.5}
        for product in (
            {
                "product_type": "water bottle",
                "name": "Trail Flask",
                "description": "An insulated steel bottle that keeps drinks cold for a day.",
                "price": 24.5,
                "delivery_days": 3,
                "weight": 0.4,
                "length": 10.0,
                "width": 3.0,
                "height": 3.0,
                "color": "green",
                "relative_size": "small",
            },
            {
                "product_type": "backpack",
                "name": "Ridge Pack",
                "description": "A light daypack with a padded laptop sleeve.",
                "price": 59.0,
                "delivery_days": 5,
                "weight": 0.9,
                "length": 18.0,
                "width": 12.0,
                "height": 7.0,
                "color": "black",
                "relative_size": "medium",
            },
            {
                "product_type": "desk lamp",
                "name": "Glow Arc",
                "description": "A dimmable LED desk lamp with a flexible neck.",
                "price": 32.0,
                "delivery_days": 2,
                "weight": 1.1,
                "length": 16.0,
                "width": 6.0,
                "height": 15.0,
                "color": "white",
                "relative_size": "medium",
            },
        ):
            am.Product(**common, **product).save()

    def _build_fresh(self) -> None:
        """The starting state: the supervisor, an account on every app, and a few records per app, made through
        the apps' own public APIs wherever one exists."""
        from appworld.apps.api_lib import import_models_module  # type: ignore[attr-defined]

        sid = self._seed_supervisor(import_models_module("supervisor"))
        t = self._sign_up_everywhere(import_models_module("supervisor"), sid)
        self._seed_records(t)
        self._seed_payment()
        self._seed_music_and_shop(t)

    def _seed_supervisor(self, sup: Any) -> Any:
        person = sup.Supervisor(**SUPERVISOR)
        person.save()
        sid = person.id
        sup.Address(
            supervisor_id=sid,
            name="Home",
            street_address="12 Alder Lane",
            city="Springfield",
            state="Oregon",
            country="United States",
            zip_code=97477,
        ).save()
        sup.PaymentCard(
            supervisor_id=sid,
            owner_name="Casey Morgan",
            card_name="Visa",
            card_number=4000123412341234,
            expiry_year=2027,
            expiry_month=8,
            cvv_number=321,
        ).save()
        sup.Task(supervisor_id=sid, instruction="Sandbox session: no task is assigned.").save()
        return sid

    def _sign_up_everywhere(self, sup: Any, sid: Any) -> dict[str, str]:
        from appworld.apps.api_lib import CompanyNotifier  # type: ignore[attr-defined]

        signup_apps = [a for a in self.apps if f"{a}.signup" in self.public]
        for app in signup_apps:  # the apps' own notification senders (verification codes, receipts...)
            CompanyNotifier(app).create_accounts(skip_if_exists=True)
        # phone and gmail first, so the other apps' verification messages reach the supervisor
        signup_apps.sort(key=lambda a: (a not in ("phone", "gmail"), a))
        tokens: dict[str, str] = {}
        for app in signup_apps:
            pw = _password(app, "supervisor")
            args = {k: SUPERVISOR[k] for k in ("first_name", "last_name")}
            args.update(
                {"phone_number": SUPERVISOR["phone_number"]} if app == "phone" else {"email": SUPERVISOR["email"]}
            )
            self._must(f"{app}.signup", {**args, "password": pw})
            self._verify(app, args)
            sup.AccountPassword(supervisor_id=sid, account_name=app, password=pw).save()
            if app in SOCIAL_APPS:
                cargs = {k: CONTACT[k] for k in ("first_name", "last_name")}
                cargs.update(
                    {"phone_number": CONTACT["phone_number"]} if app == "phone" else {"email": CONTACT["email"]}
                )
                self._must(f"{app}.signup", {**cargs, "password": _password(app, "contact")})
                self._verify(app, cargs)
            username = SUPERVISOR["phone_number"] if app == "phone" else SUPERVISOR["email"]
            tokens[app] = self._must(f"{app}.login", {"username": username, "password": pw})["access_token"]
        return tokens

    def _seed_records(self, t: dict[str, str]) -> None:
        # a few records per app, through the apps' own public create APIs
        self._must(
            "phone.add_contact",
            {
                "access_token": t["phone"],
                "first_name": CONTACT["first_name"],
                "last_name": CONTACT["last_name"],
                "phone_number": CONTACT["phone_number"],
                "email": CONTACT["email"],
            },
        )
        self._must("phone.create_alarm", {"access_token": t["phone"], "time": "07:30", "label": "Wake up"})
        self._must(
            "phone.send_text_message",
            {"access_token": t["phone"], "phone_number": CONTACT["phone_number"], "message": "Lunch on Friday?"},
        )
        self._must(
            "gmail.send_email",
            {
                "access_token": t["gmail"],
                "email_addresses": [CONTACT["email"]],
                "subject": "Trip plans",
                "body": "Shall we book the cabin for June?",
            },
        )
        self._must(
            "simple_note.create_note",
            {"access_token": t["simple_note"], "title": "Groceries", "content": "eggs, oat milk, basil"},
        )
        project = self._must("todoist.create_project", {"access_token": t["todoist"], "name": "Home"})
        self._must(
            "todoist.create_task",
            {"access_token": t["todoist"], "project_id": project["project_id"], "title": "Fix the porch light"},
        )
        self._must(
            "file_system.create_directory",
            {"access_token": t["file_system"], "directory_path": "~/documents/", "recursive": True},
        )
        self._must(
            "file_system.create_file",
            {"access_token": t["file_system"], "file_path": "~/documents/todo.txt", "content": "renew passport"},
        )
        self._must(
            "splitwise.create_group",
            {"access_token": t["splitwise"], "name": "Roommates", "member_emails": [CONTACT["email"]]},
        )
        self._must("venmo.add_friend", {"access_token": t["venmo"], "user_email": CONTACT["email"]})

    def _seed_payment(self) -> None:
        from appworld.apps.api_lib import import_models_module  # type: ignore[attr-defined]

        # One payment received, so the transaction APIs have something to show. Money enters Venmo only through a
        # bank card the operator's admin recognises, so the contact's starting balance is set through the app's
        # models (as AppWorld's own data generation does); the payment itself goes through the public API.
        venmo = import_models_module("venmo")
        payer = venmo.User.find_one(email=CONTACT["email"])
        payer.venmo_balance = 50.0
        payer.save()
        jordan = self._must("venmo.login", {"username": CONTACT["email"], "password": _password("venmo", "contact")})[
            "access_token"
        ]
        self._must(
            "venmo.create_transaction",
            {
                "access_token": jordan,
                "receiver_email": SUPERVISOR["email"],
                "amount": 12.0,
                "description": "Pizza night",
            },
        )

    def _seed_music_and_shop(self, t: dict[str, str]) -> None:
        playlist = self._must("spotify.create_playlist", {"access_token": t["spotify"], "title": "Morning run"})
        music = self._music_catalogue()
        for song_id in music["playlist_songs"]:
            self._must(
                "spotify.add_song_to_playlist",
                {"access_token": t["spotify"], "playlist_id": playlist["playlist_id"], "song_id": song_id},
            )
        # the account's own library, likes and follows, so the APIs that list them have something to show
        self._must("spotify.add_song_to_library", {"access_token": t["spotify"], "song_id": music["song"]})
        self._must("spotify.like_song", {"access_token": t["spotify"], "song_id": music["playlist_songs"][0]})
        self._must("spotify.add_album_to_library", {"access_token": t["spotify"], "album_id": music["album"]})
        self._must("spotify.follow_artist", {"access_token": t["spotify"], "artist_id": music["artist"]})
        self._store_catalogue()
        self._must(
            "amazon.add_address",
            {
                "access_token": t["amazon"],
                "name": "Home",
                "street_address": "12 Alder Lane",
                "city": "Springfield",
                "state": "Oregon",
                "country": "United States",
                "zip_code": 97477,
            },
        )

    def fresh(self) -> list[tuple[str, str, bytes]]:
        if self._fresh is None:
            random.seed(self.seed)
            self._build_fresh()
            self._remember_all()
            self._fresh = self._parts()
        return self._fresh

    def catalog(self) -> list[dict[str, Any]]:
        return public_api_docs()


def make_backend(options: dict[str, Any]) -> AppWorldBackend:
    return AppWorldBackend(options)


# ---------------------------------------------------------------------------------------------------------------
# script mode
# ---------------------------------------------------------------------------------------------------------------
def _bench(n: int) -> dict[str, float]:
    t0 = _CLOCK[0]()
    backend = AppWorldBackend({})
    t1 = _CLOCK[0]()
    fresh = backend.fresh()
    t2 = _CLOCK[0]()
    token = None
    pw = _password("phone", "supervisor")
    r = backend.invoke(fresh, "phone.login", {"username": SUPERVISOR["phone_number"], "password": pw})
    token = r["output"]["access_token"]
    logged = r["parts"]
    t3 = _CLOCK[0]()
    for _ in range(n):
        backend.invoke(logged, "phone.show_alarms", {"access_token": token})
    t4 = _CLOCK[0]()
    r = backend.invoke(logged, "phone.create_alarm", {"access_token": token, "time": "09:00"})
    changed = r["parts"]
    t5 = _CLOCK[0]()
    for i in range(n):
        backend.invoke(changed if i % 2 else fresh, "phone.show_alarms", {"access_token": token})
    t6 = _CLOCK[0]()
    for _ in range(n):
        backend.current.clear()  # forget what is loaded: every app is copied back
        backend._restore(fresh)
    t7 = _CLOCK[0]()
    return {
        "start_s": t1 - t0,
        "fresh_s": t2 - t1,
        "read_call_ms": (t4 - t3) / n * 1000,
        "write_call_ms": (t5 - t4) * 1000,
        "read_call_with_reset_ms": (t6 - t5) / n * 1000,
        "full_reset_ms": (t7 - t6) / n * 1000,
        "state_bytes": sum(len(d) for _, _, d in fresh),
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["catalog"] and len(argv) == 2:
        docs = public_api_docs()
        tmp = argv[1] + ".tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(docs, fh, ensure_ascii=False)
        os.replace(tmp, argv[1])
        return 0
    if argv[:1] == ["decrypt"] and len(argv) == 3:
        decrypt(argv[1], argv[2])
        return 0
    if argv[:1] == ["bench"]:
        print(json.dumps(_bench(int(argv[1]) if len(argv) > 1 else 50)))
        return 0
    print("usage: appworld_server.py catalog OUT.json | decrypt BUNDLE DEST | bench [N]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
