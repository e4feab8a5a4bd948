"""Artifact writes (``libra._util.io``): permissions, killed writers, streams, symlinks, one-line failures, and writers
of the same artifact taking turns, in real processes."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from libra._util.io import (
    atomic_open,
    atomic_write_text,
    lock_path,
    path_lock,
    write_problem,
)
from libra.errors import LibraError, OutputError

from .cli_toys import ROOT, cli_env


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_new_files_follow_the_umask(tmp_path, umask):
    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "a.json", "{}\n")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "a.json") == 0o666 & ~umask


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "a.json"
    path.write_text("old\n")
    path.chmod(0o640)
    atomic_write_text(path, "new\n")
    assert path.read_text() == "new\n" and _mode(path) == 0o640


def _writer(path: Path, cache: Path) -> subprocess.Popen[str]:
    """A process stopped in the middle of writing ``path`` (it says so on stdout)."""
    code = (
        "import sys, time\nfrom libra._util.io import atomic_open\n"
        f"with atomic_open({str(path)!r}) as fh:\n"
        "    fh.write(b'half')\n    fh.flush()\n    print('writing', flush=True)\n    time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=cli_env(cache), cwd=ROOT
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "writing"
    return proc


def _temps(folder: Path) -> list[str]:
    """The writers' PIDs in the temporary files beside ``lib.json.ckpt``."""
    return sorted(p.name.split(".")[4] for p in folder.glob(".lib.json.ckpt.*.tmp"))


def test_a_killed_writer_leaves_a_temp_file_that_the_next_write_removes(tmp_path):
    path = tmp_path / "lib.json.ckpt"
    killed = _writer(path, tmp_path / "cache")
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    assert _temps(tmp_path) == [str(killed.pid)]  # SIGKILL: nothing could clean up
    live = _writer(path, tmp_path / "cache")
    try:
        assert _temps(tmp_path) == [str(live.pid)]  # the next writer removed the dead one's
        atomic_write_text(path, "done\n")
        assert path.read_text() == "done\n"
        assert _temps(tmp_path) == [str(live.pid)]  # a write in progress is left alone
    finally:
        live.kill()
        live.wait()


def test_a_symlink_stays_a_link_to_the_new_content(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old\n")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    atomic_write_text(link, "new\n")
    assert link.is_symlink() and target.read_text() == "new\n"


def test_a_pipe_is_written_in_place(tmp_path):
    fifo = tmp_path / "results"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    atomic_write_text(fifo, "through the pipe\n")
    reader.join()
    assert got == [b"through the pipe\n"] and stat.S_ISFIFO(fifo.stat().st_mode)
    assert write_problem(fifo) is None


def test_a_failed_write_is_one_line_naming_the_path(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(OutputError) as info:
        atomic_write_text(blocker / "out.json", "{}")
    assert isinstance(info.value, OSError) and isinstance(
        info.value, LibraError
    )  # callers catching either keep working
    assert str(blocker / "out.json") in str(info.value) and "\n" not in str(info.value)
    # A device is written in place, and this one is always full.
    with pytest.raises(OutputError, match="No space left"), atomic_open("/dev/full") as fh:
        fh.write(b"x" * 65536)


def test_write_problem_names_what_is_wrong(tmp_path):
    (tmp_path / "file").write_text("x")
    assert "is a directory" in write_problem(tmp_path)
    assert "not a directory" in write_problem(tmp_path / "file" / "x.json")
    assert "cannot create files in /proc" in write_problem("/proc/libra-test/x.json")
    assert write_problem(tmp_path / "new" / "dir" / "x.json") is None  # writers create missing directories
    assert "is a file" in write_problem(tmp_path / "file", directory=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # the probe leaves nothing


def test_path_lock_makes_a_second_writer_wait(tmp_path):
    path = tmp_path / "lib.json"
    code = (
        "import sys\nfrom libra._util.io import path_lock\n"
        f"with path_lock({str(path)!r}):\n    print('locked', flush=True)\n    sys.stdin.read()\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=cli_env(tmp_path / "cache"),
        cwd=ROOT,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
    waited = []

    def release() -> None:  # we are about to block: let the holder finish
        waited.append(True)
        assert holder.stdin is not None
        holder.stdin.close()

    with path_lock(path, on_wait=release), path_lock(path):  # the second: re-entrant in one thread
        assert holder.wait(timeout=60) == 0
    assert waited == [True] and lock_path(path).name == ".lib.json.lock"


def _blocked_on_a_lock(pid: int) -> bool:
    """Whether process ``pid`` waits for a file lock (``/proc/locks`` lists waiters with ``->``)."""
    return any(
        line.split()[1] == "->" and line.split()[5] == str(pid)
        for line in Path("/proc/locks").read_text().splitlines()
        if len(line.split()) > 5
    )


def test_a_second_build_of_a_cached_library_waits_and_reuses_it(tmp_path, monkeypatch):
    from libra.eval.libraries import default_library_path
    from libra.induction.build import BuildOptions, build_library

    from .induction_toys import ShopBenchmark

    cache = tmp_path / "cache"
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(cache))
    bench = ShopBenchmark()
    options = BuildOptions(workers=0, progress=False)
    path = default_library_path(bench, bench.catalog(), options=options)
    code = (
        "import json\nfrom libra.induction.build import BuildOptions\nfrom libra.eval.libraries import cached_library\n"
        "from tests.induction_toys import ShopBenchmark\nb = ShopBenchmark()\n"
        "lib = cached_library(b, b.catalog(), BuildOptions(workers=0, progress=False))\n"
        "print(json.dumps(lib.stats['wall_seconds']))\n"
    )
    with path_lock(path):
        other = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_env(cache),
            cwd=ROOT,
        )
        while not _blocked_on_a_lock(other.pid):  # it looked for the library, found none, and now waits for us
            assert other.poll() is None, other.communicate()
            threading.Event().wait(0.05)
        ours = build_library(bench, path, options)
    out, err = other.communicate(timeout=300)
    assert other.returncode == 0, err
    assert json.loads(out) == ours.stats["wall_seconds"]  # it loaded our library instead of building its own
    assert not list(path.parent.glob("*.ckpt"))
