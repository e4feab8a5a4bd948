"""Toy tools for the runtime tests: a login-gated stateful class (the misbehaving functions are in
fixtures/toy_hazards.py).

Nothing here is BFCL-specific: the generic runtime must handle it by introspection alone.
"""

from __future__ import annotations

from typing import Literal, Optional


class Blog:
    """A tiny blog whose posting needs a login token."""

    def __init__(self, users: dict[str, str] | None = None) -> None:
        self.users = dict(users or {"alice": "secret"})
        self.session: str | None = None
        self.posts: list[dict[str, str]] = []
        self.tags: set[str] = set()

    def login(self, username: str, password: str) -> dict:
        """Log in and get a session token.

        Later paragraphs are not part of the description.

        Args:
            username: The account name.
            password (str): The account password,
                checked against the user table.
        """
        if self.users.get(username) != password:
            return {"error": "invalid credentials"}
        self.session = f"tok-{username}"
        return {"token": self.session}

    def post(
        self,
        token: str,
        text: str,
        visibility: Literal["public", "private"] = "public",
        tags: Optional[list[str]] = None,
    ) -> dict:
        """Publish a post.

        :param token: Session token from login.
        :param text: Body of the post.
        :param visibility: Who can see it.
        """
        if token != self.session or self.session is None:
            return {"error": "not logged in"}
        self.posts.append({"text": text, "visibility": visibility})
        self.tags.update(tags or [])
        return {"id": len(self.posts) - 1}

    def count(self) -> int:
        """Number of posts."""
        return len(self.posts)

    def explode(self, ratio: float = 1.5, flag: bool = False) -> None:
        """Always raises."""
        raise ValueError(f"bad ratio {ratio}")

    def _helper(self) -> None:
        """Private: not a tool."""


def make_blog_runtime(trusted: bool = False):
    """Picklable factory for worker processes."""
    from libra.runtime.python.runtime import PythonRuntime
    from tests.fixtures import toy_hazards

    return PythonRuntime(classes=[Blog], modules=[toy_hazards], trusted=trusted, name="toy")


def make_hostile_runtime():
    """Picklable factory of the hostile catalog (tests/fixtures/hostile_tools.py) for worker processes."""
    from libra.runtime.python.runtime import PythonRuntime
    from tests.fixtures import hostile_tools

    return PythonRuntime(modules=[hostile_tools], name="hostile")


class CounterRuntime:
    """A hand-written runtime whose state payload is a plain int (not split into parts)."""

    trusted = False

    def __init__(self) -> None:
        from libra.catalog import Catalog, Tool

        self.catalog = Catalog([Tool("counter.inc"), Tool("counter.get")], name="counter")

    def fresh(self):
        from libra.runtime.base import State

        return State("n=0", 0)

    def invoke(self, state, tool, args):
        from libra.runtime.base import InvocationRecord, State

        if tool == "counter.inc":
            n = state.payload + 1
            changes = {"counter": {"changed": {"$": {"before": state.payload, "after": n}}, "added": {}, "removed": {}}}
            return InvocationRecord("success", n, changes), State(f"n={n}", n)
        return InvocationRecord("success", state.payload), state

    def close(self) -> None:
        pass


class PidCounterRuntime(CounterRuntime):
    """:class:`CounterRuntime` with ``counter.pid``, a read that answers the process id of the worker running it."""

    def __init__(self) -> None:
        from libra.catalog import Catalog, Tool

        super().__init__()
        self.catalog = Catalog([Tool("counter.inc"), Tool("counter.get"), Tool("counter.pid")], name="counter")

    def invoke(self, state, tool, args):
        import os

        from libra.runtime.base import InvocationRecord

        if tool == "counter.pid":
            return InvocationRecord("success", os.getpid()), state
        return super().invoke(state, tool, args)


def make_leaky_runtime():
    """Picklable factory of tests/fixtures/leaky_tools.py (a tool with an unbounded cache) for worker processes."""
    from libra.runtime.python.runtime import PythonRuntime
    from tests.fixtures import leaky_tools

    return PythonRuntime(modules=[leaky_tools], name="leaky")
