"""The stdio transport ``libra serve`` uses on pipes (:mod:`libra.serve.stdio`): lines read and responses
written on the event loop, on real pipes, and the wire kept off the standard descriptors while serving (checked
in a child process whose stdin and stdout are pipes, as an MCP client starts a server). The whole server over
it, with the official client, is in ``test_serve.py``."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import anyio

from libra.serve.stdio import PipeLines, PipeWriter

from .cli_toys import ROOT, cli_env


def _pipe() -> tuple[int, int]:
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    return r, w


def test_lines_arrive_whole_however_the_writer_splits_them():
    """Requests split anywhere (inside a line, inside a UTF-8 character), several in one write, and a last line
    without its newline: each comes out as one line, decoded."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    data = '{"a": "caf\u00e9"}\n{"b": 1}\n{"c": "\u2192"}\n{"d": 2}'.encode()
    assert data[10:12] == "\u00e9".encode()
    pieces = [data[:5], data[5:11], data[11:13], data[13:30], data[30:]]  # the é is split between two writes

    def writer() -> None:
        for piece in pieces:
            os.write(w, piece)
            time.sleep(0.02)  # the reader waits on the loop between pieces
        os.close(w)

    async def read() -> list[str]:
        return [line async for line in PipeLines(r)]

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        lines = anyio.run(read)
    finally:
        thread.join()
        os.close(r)
    assert lines == ['{"a": "caf\u00e9"}\n', '{"b": 1}\n', '{"c": "\u2192"}\n', '{"d": 2}']


def test_a_response_larger_than_the_pipe_is_written_whole():
    """A response bigger than the pipe's buffer waits on the loop for the reader to make room, and arrives intact
    and in order."""
    r, w = _pipe()
    text = "".join(f"{i:07d}\u00e9" for i in range(200_000)) + "\n"  # ~1.8 MB, far beyond a pipe's 64 KB
    received = bytearray()

    async def main() -> None:
        async def drain() -> None:
            while True:
                await anyio.wait_readable(r)
                chunk = os.read(r, 1 << 16)
                received.extend(chunk)
                if received.endswith(b"\n"):
                    return
                await anyio.sleep(0.001)  # a slow reader: the writer finds the pipe full

        async with anyio.create_task_group() as tg:
            tg.start_soon(drain)
            writer = PipeWriter(w)
            assert await writer.write(text) == len(text)
            await writer.flush()

    try:
        anyio.run(main)
    finally:
        os.close(r)
        os.close(w)
    assert received.decode() == text


CLAIM = """
import os, select
from libra.serve.stdio import claimed_stdio, loop_served
print("served on the loop:", loop_served(), flush=True)
with claimed_stdio() as (wire_in, wire_out):
    print("stray output", flush=True)  # a library's print while serving: must not reach the wire
    os.system("echo child output")     # nor a child process's
    line = b""
    while not line.endswith(b"\\n"):
        select.select([wire_in], [], [])
        line += os.read(wire_in, 100)
    os.set_blocking(wire_out, True)
    os.write(wire_out, b"answer to " + line)
    os.set_blocking(wire_out, False)
    assert os.read(0, 10) == b""  # fd 0 reads the null device meanwhile
print("after serving", flush=True)
"""


def test_the_wire_is_claimed_while_serving_and_given_back(tmp_path):
    """While serving, a stray print and a child's output go to stderr and fd 0 reads nothing; the wire carries
    only what the transport writes; afterwards stdout is the wire again."""
    out = subprocess.run(
        [sys.executable, "-c", CLAIM],
        input="request\n",
        capture_output=True,
        text=True,
        env=cli_env(tmp_path / "cache"),
        cwd=ROOT,
        timeout=120,
        check=True,
    )
    assert out.stdout == "served on the loop: True\nanswer to request\nafter serving\n"
    assert "stray output" in out.stderr and "child output" in out.stderr


def test_stdin_from_a_file_is_left_to_the_sdk(tmp_path):
    """A file or a terminal cannot be waited on by the event loop: the SDK's own transport serves it."""
    requests = tmp_path / "requests.jsonl"
    requests.write_text("")
    with requests.open() as stdin:
        out = subprocess.run(
            [sys.executable, "-c", "from libra.serve.stdio import loop_served; print(loop_served())"],
            stdin=stdin,
            capture_output=True,
            text=True,
            env=cli_env(tmp_path / "cache"),
            cwd=ROOT,
            timeout=120,
            check=True,
        )
    assert out.stdout == "False\n"
