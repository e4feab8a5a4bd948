"""A remote server answers a repeat of a call that changed nothing from its record, when the backend said which
parts the call read and the new state agrees on them (``ReadMemo`` in :mod:`libra.runtime.workers.remote_server`).

The backend below counts, in the server process, how often each tool really ran; ``kv.runs`` reports the count
(it declares no reads, so it always runs). A real server under another interpreter, no mocks.
"""

from __future__ import annotations

import textwrap

import pytest

from libra.runtime.workers import remote_server
from libra.runtime.workers.remote import RemoteRuntime
from tests.test_remote_runtime import _foreign_python

BACKEND = textwrap.dedent(
    '''
    """Two parts, "counter" and "notes" (JSON bytes); every tool but kv.runs says what it read."""
    import hashlib, json

    RUNS = {}

    def enc(obj):
        return json.dumps(obj, sort_keys=True).encode()

    def part(name, value):
        data = enc(value)
        return (name, hashlib.sha256(data).hexdigest(), data)

    class Backend:
        def catalog(self):
            return [{"name": t, "description": t} for t in ("kv.peek", "kv.note", "kv.bump", "kv.shout", "kv.runs")]

        def fresh(self):
            return [part("counter", 0), part("notes", [])]

        def invoke(self, parts, tool, args):
            RUNS[tool] = RUNS.get(tool, 0) + 1
            state = {name: json.loads(data) for name, _, data in parts}
            result = {"status": "success", "error": None, "state_changes": {}, "parts": parts}
            if tool == "kv.peek":  # reads the counter only
                result.update(output=state["counter"] + args.get("plus", 0), reads=["counter"])
            elif tool == "kv.note":  # a write: says what it read, but changes a part
                state["notes"].append(args["text"])
                new = [part("counter", state["counter"]), part("notes", state["notes"])]
                result.update(output=len(state["notes"]), reads=["notes"], parts=new)
            elif tool == "kv.bump":  # changes the counter, declares nothing
                state["counter"] += 1
                result.update(output=state["counter"], parts=[part("counter", state["counter"]), parts[1]])
            elif tool == "kv.shout":  # prints: its record carries diagnostics
                print("loud")
                result.update(output="ok", reads=[])
            elif tool == "kv.runs":
                result.update(output=dict(RUNS))
            return result

    def make_backend(options):
        return Backend()
    '''
)


@pytest.fixture()
def rt(tmp_path):
    path = tmp_path / "reads_backend.py"
    path.write_text(BACKEND, encoding="utf-8")
    runtime = RemoteRuntime(_foreign_python(), str(path), n_servers=1, timeout_s=5.0, memory_mb=256, name="toy")
    yield runtime
    runtime.close()


def _runs(rt, state, tool):
    return rt.invoke(state, "kv.runs", {})[0].output.get(tool, 0)


def test_a_repeat_from_a_state_that_agrees_on_the_parts_read_is_not_run_again(rt):
    s0 = rt.fresh()
    _, s1 = rt.invoke(s0, "kv.note", {"text": "a"})  # differs from s0 in "notes" only
    first, _ = rt.invoke(s0, "kv.peek", {"plus": 2})
    again, same = rt.invoke(s1, "kv.peek", {"plus": 2})
    assert (first.status, first.output) == (again.status, again.output) == ("success", 2)
    assert again.state_changes == {} and same is s1
    assert _runs(rt, s0, "kv.peek") == 1
    # other arguments, or arguments of another type, are another call
    assert rt.invoke(s1, "kv.peek", {"plus": 3})[0].output == 3
    assert rt.invoke(s1, "kv.peek", {"plus": 2.0})[0].output == 2.0
    assert _runs(rt, s0, "kv.peek") == 3


def test_a_state_that_differs_in_a_part_read_runs_the_call(rt):
    s0 = rt.fresh()
    assert rt.invoke(s0, "kv.peek", {})[0].output == 0
    _, s1 = rt.invoke(s0, "kv.bump", {})
    assert rt.invoke(s1, "kv.peek", {})[0].output == 1
    assert _runs(rt, s0, "kv.peek") == 2
    # the first counter again: answered from the first record
    assert rt.invoke(s0, "kv.peek", {})[0].output == 0
    assert _runs(rt, s0, "kv.peek") == 2


def test_calls_that_change_parts_or_print_always_run(rt):
    s0 = rt.fresh()
    for _ in range(2):
        rec, s1 = rt.invoke(s0, "kv.note", {"text": "a"})
        assert rec.output == 1 and s1 != s0
    assert _runs(rt, s0, "kv.note") == 2
    for _ in range(2):
        rec, _ = rt.invoke(s0, "kv.shout", {})
        assert rec.diagnostics.get("stdout", "").startswith("loud")
    assert _runs(rt, s0, "kv.shout") == 2


def test_the_memo_is_keyed_by_exact_arguments_and_the_keys_read():
    memo = remote_server.ReadMemo(1 << 20)
    call = memo.call_key("t", {"a": 1, "b": [1, 2]})
    memo.add(call, ["x"], {"x": "k1", "y": "k2"}, {"status": "success", "output": [1]})
    found = memo.find(call, {"x": "k1", "y": "other"})
    assert found == {"status": "success", "output": [1]}
    found["output"].append(2)  # a hit is a fresh copy: changing it changes no later hit
    assert memo.find(call, {"x": "k1", "y": "k3"})["output"] == [1]
    assert memo.find(call, {"x": "k9", "y": "k2"}) is None
    assert memo.find(memo.call_key("t", {"b": [1, 2], "a": 1}), {"x": "k1"}) is None  # another order
    assert memo.find(memo.call_key("t", {"a": True, "b": [1, 2]}), {"x": "k1"}) is None  # another type
    assert memo.find(call, {"y": "k2"}) is None  # a state without the part read
    memo.add(call, ["z"], {"x": "k1"}, {"status": "success"})  # a part the state lacks: not kept
    assert memo.reads[call] == [("x",)]
    assert memo.hits == 2
