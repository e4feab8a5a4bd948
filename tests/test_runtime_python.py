"""The generic Python-object runtime on toy classes: introspected schemas, states, diffs and statuses (in-process)."""

from __future__ import annotations

import json
import random
from typing import Annotated, Literal, Optional

import jsonschema
import pytest

from libra.errors import CatalogError, LibraError
from libra.runtime import INVOCATION_RECORD_SCHEMA, PythonRuntime, Runtime, ToolRuntimeError, UnknownToolError
from libra.runtime.diff import diff_views, object_view
from libra.runtime.python.introspect import parse_docstring, type_schema
from tests.toy_tools import Blog, make_blog_runtime

LOGIN = {"username": "alice", "password": "secret"}


@pytest.fixture()
def rt() -> PythonRuntime:
    return make_blog_runtime(trusted=True)


def test_catalog_by_introspection(rt: PythonRuntime) -> None:
    assert isinstance(rt, Runtime)
    names = rt.catalog.names
    assert names[:4] == ["Blog.login", "Blog.post", "Blog.count", "Blog.explode"]
    assert "toy_hazards.segfault" in names and "toy_hazards.add" in names
    assert not any(n.rsplit(".", 1)[1].startswith("_") for n in names)
    assert "toy_hazards.time" not in names  # imported names are not tools
    login = rt.catalog["Blog.login"]
    assert login.group == "Blog"
    assert login.description == "Log in and get a session token."
    assert login.parameters == {
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "The account name."},
            "password": {"type": "string", "description": "The account password, checked against the user table."},
        },
        "required": ["username", "password"],
    }
    post = rt.catalog["Blog.post"].parameters
    assert post["required"] == ["token", "text"]
    assert post["properties"]["visibility"] == {
        "enum": ["public", "private"],
        "type": "string",
        "description": "Who can see it.",
        "default": "public",
    }
    assert post["properties"]["tags"]["type"] == ["array", "null"] and post["properties"]["tags"]["items"] == {
        "type": "string"
    }
    assert post["properties"]["token"]["description"] == "Session token from login."
    explode = rt.catalog["Blog.explode"].parameters["properties"]
    assert explode == {"ratio": {"type": "number", "default": 1.5}, "flag": {"type": "boolean", "default": False}}
    assert rt.catalog["toy_hazards.add"].parameters["required"] == ["a"]


def test_type_schema_and_docstrings() -> None:
    assert type_schema(int | None) == ({"type": ["integer", "null"]}, True)
    assert type_schema(Optional[dict])[0] == {"type": ["object", "null"]}
    assert type_schema(list[list[float]])[0] == {
        "type": "array",
        "items": {"type": "array", "items": {"type": "number"}},
    }
    assert type_schema(dict[str, int])[0] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert type_schema(Literal[1, 2])[0] == {"enum": [1, 2], "type": "integer"}
    assert type_schema(int | str)[0] == {"type": ["integer", "string"]}
    # dict metadata adds JSON Schema keywords; other metadata is not the schema's business
    assert type_schema(Annotated[str, {"format": "email"}, "note"])[0] == {"type": "string", "format": "email"}
    assert type_schema(Annotated[Optional[int], {"minimum": 1}]) == ({"type": ["integer", "null"], "minimum": 1}, True)
    desc, params = parse_docstring(
        """Move a file.

        Details nobody indexes.

        Args:
            source (str): Where from.
            destination (str, optional): Where to,
                relative to cwd.
        Returns:
            result (dict): nothing.
        """
    )
    assert desc == "Move a file."
    assert params == {"source": "Where from.", "destination": "Where to, relative to cwd."}
    desc, params = parse_docstring("Do it\nnow.\n\n:param int x: The x.\n    More x.\n:param y: The y.\n:returns: z")
    assert desc == "Do it now." and params == {"x": "The x. More x.", "y": "The y."}


def test_login_gate_states_and_diffs(rt: PythonRuntime) -> None:
    s0 = rt.fresh()
    view0 = rt.view(s0)
    rec, s_same = rt.invoke(s0, "Blog.post", {"token": "tok-alice", "text": "hi"})
    assert rec.status == "rejected" and rec.error == "not logged in" and rec.output == {"error": "not logged in"}
    assert s_same == s0 and rec.state_changes == {}

    rec, s1 = rt.invoke(s0, "Blog.login", LOGIN)
    assert rec.status == "success" and rec.output == {"token": "tok-alice"} and rec.error is None
    assert s1.fingerprint != s0.fingerprint
    assert rec.state_changes == {
        "Blog": {"changed": {"session": {"before": None, "after": "tok-alice"}}, "added": {}, "removed": {}}
    }
    # the given state is never mutated: s0 still behaves as logged out
    assert rt.view(s0) == view0
    assert rt.invoke(s0, "Blog.post", {"token": "tok-alice", "text": "hi"})[0].status == "rejected"

    rec, s2 = rt.invoke(s1, "Blog.post", {"token": "tok-alice", "text": "hi", "tags": ["b", "a"]})
    assert rec.status == "success" and rec.output == {"id": 0}
    assert rec.state_changes["Blog"]["added"] == {
        "posts[0]": {"text": "hi", "visibility": "public"},
        "tags[0]": "a",
        "tags[1]": "b",
    }
    assert rt.invoke(s2, "Blog.count", {})[0].output == 1
    assert rt.invoke(s1, "Blog.count", {})[0].output == 0
    # same call from the same state: same record and same state
    rec_again, s2_again = rt.invoke(s1, "Blog.post", {"token": "tok-alice", "text": "hi", "tags": ["b", "a"]})
    assert rec_again.to_dict() | {"duration_ms": 0} == rec.to_dict() | {"duration_ms": 0}
    assert s2_again == s2
    for r in (rec, rec_again):
        jsonschema.validate(json.loads(json.dumps(r.to_dict())), INVOCATION_RECORD_SCHEMA)


def test_error_statuses(rt: PythonRuntime) -> None:
    s0 = rt.fresh()
    rec, s = rt.invoke(s0, "Blog.explode", {})
    assert rec.status == "error" and rec.error == "ValueError: bad ratio 1.5" and rec.output is None and s == s0
    rec, _ = rt.invoke(s0, "Blog.login", {"username": "alice"})
    assert rec.status == "error" and rec.error.startswith("TypeError:") and "password" in rec.error
    rec, _ = rt.invoke(s0, "toy_hazards.add", {"a": 1})
    assert (rec.status, rec.output) == ("success", 3)
    with pytest.raises(UnknownToolError, match="unknown tool 'Blog.nope'"):
        rt.invoke(s0, "Blog.nope", {})
    with pytest.raises(ToolRuntimeError, match="must be a JSON object"):
        rt.invoke(s0, "Blog.count", ["x"])  # type: ignore[arg-type]
    other = PythonRuntime(classes=[Blog, _Dice])
    with pytest.raises(LibraError, match="not made by this runtime"):
        other.invoke(s0, "Blog.count", {})


def test_initial_configuration_and_docs_override() -> None:
    def load(inst: object, config: dict) -> None:
        if isinstance(inst, Blog) and config:
            inst.session = config["session"]

    rt = PythonRuntime(classes=[Blog], init_kwargs={"Blog": {"users": {"bob": "pw"}}}, load=load)
    s0 = rt.fresh()
    assert rt.invoke(s0, "Blog.login", LOGIN)[0].status == "rejected"
    assert rt.invoke(s0, "Blog.login", {"username": "bob", "password": "pw"})[0].status == "success"
    s_cfg = rt.load_state({"Blog": {"session": "tok-x"}})
    assert s_cfg != s0 and rt.invoke(s_cfg, "Blog.post", {"token": "tok-x", "text": "t"})[0].ok
    with pytest.raises(ToolRuntimeError, match="unknown class"):
        rt.load_state({"Nope": {}})
    with pytest.raises(ToolRuntimeError, match="init_kwargs"):
        PythonRuntime(classes=[Blog], init_kwargs={"Nope": {}})

    docs = [
        {"name": "Blog.login", "description": "Official login doc.", "parameters": {"type": "object", "properties": {}}}
    ]
    rt2 = PythonRuntime(classes=[Blog], docs=docs)
    assert rt2.catalog.names == ["Blog.login"] and rt2.catalog["Blog.login"].description == "Official login doc."
    assert rt2.invoke(rt2.fresh(), "Blog.login", LOGIN)[0].ok
    with pytest.raises(UnknownToolError):
        rt2.invoke(rt2.fresh(), "Blog.count", {})
    with pytest.raises(CatalogError, match="no executable"):
        PythonRuntime(classes=[Blog], docs=[{"name": "Blog.fly"}])


class _Dice:
    def __init__(self) -> None:
        self._random = random.Random(7)
        self.rolls: list[int] = []

    def peek(self) -> int:
        """A read that draws a random number."""
        return self._random.randint(1, 6)

    def roll(self) -> int:
        self.rolls.append(self._random.randint(1, 1000))
        return self.rolls[-1]


def test_random_generators_are_deterministic_and_not_state() -> None:
    rt = PythonRuntime(classes=[_Dice])
    s0 = rt.fresh()
    a, sa = rt.invoke(s0, "_Dice.peek", {})
    b, sb = rt.invoke(s0, "_Dice.peek", {})
    assert a.output == b.output and sa == sb == s0 and a.state_changes == {}
    r1, s1 = rt.invoke(s0, "_Dice.roll", {})
    r2, s2 = rt.invoke(s0, "_Dice.roll", {})
    assert r1.output == r2.output and s1 == s2 != s0
    r3, s3 = rt.invoke(s1, "_Dice.roll", {})
    assert s3 != s1 and list(r3.state_changes["_Dice"]["added"]) == ["rolls[1]"]


def test_diff_paths_are_readable() -> None:
    class Node:
        def __init__(self, name: str, parent: Node | None = None) -> None:
            self.name, self.parent, self.children = name, parent, {}

    class FS:
        def __init__(self) -> None:
            self.root = Node("/")
            self.cwd = self.root

    fs = FS()
    before = object_view(fs)
    fs.root.children["a.txt"] = Node("a.txt", fs.root)
    fs.cwd = fs.root.children["a.txt"]
    after = object_view(fs)
    d = diff_views(before, after)
    assert d["added"] == {'root.children["a.txt"]': {"name": "a.txt", "parent": {"$ref": "root"}, "children": {}}}
    assert d["changed"] == {"cwd": {"before": {"$ref": "root"}, "after": {"$ref": 'root.children["a.txt"]'}}}
    assert d["removed"] == {}
    assert diff_views(after, after) == {"changed": {}, "added": {}, "removed": {}}


_SENTINEL_SOURCE = '''
class _Missing:
    def __repr__(self):
        return "MISSING"


_MISSING = _Missing()
_BARE = object()
_notes = []


def add_note(text: str) -> int:
    """Add a note."""
    _notes.append(text)
    return len(_notes)


def find(author: str = _MISSING, tag: str = _BARE) -> list:
    """Notes, filtered by author if given."""
    if author is not _MISSING:
        author.lower()
    if tag is not _BARE:
        tag.lower()
    return list(_notes)
'''


def test_sentinel_globals_keep_their_identity_across_restores() -> None:
    """Module globals are state, and restoring them must not replace a sentinel with an unpickled copy."""
    import sys
    import types

    from libra.runtime.python.runtime import is_identity_constant

    module = types.ModuleType("libra_sentinel_toy")
    sys.modules[module.__name__] = module
    try:
        exec(compile(_SENTINEL_SOURCE, module.__name__, "exec"), module.__dict__)
        missing, bare = module._MISSING, module._BARE
        assert is_identity_constant(missing) and is_identity_constant(bare) and not is_identity_constant(module._notes)
        for _ in range(2):  # a second runtime restores the module's baseline globals
            rt = PythonRuntime(modules=[module], trusted=True)
            fresh = rt.fresh()
            rec, written = rt.invoke(fresh, "libra_sentinel_toy.add_note", {"text": "hi"})
            assert rec.status == "success" and written.fingerprint != fresh.fingerprint
            for state, expected in ((fresh, []), (written, ["hi"]), (fresh, [])):
                rec, _ = rt.invoke(state, "libra_sentinel_toy.find", {})
                assert rec.status == "success", rec.error
                assert rec.output == expected
            assert module._MISSING is missing and module._BARE is bare
    finally:
        sys.modules.pop(module.__name__, None)
