"""Builds on Ray: the same library as a local build, resumable, and a clear error without Ray.

One local Ray instance (2 CPUs on 127.0.0.1) serves the whole module: starting Ray is the slow part. Builds in
this process reuse it (``--executor ray`` inside an initialised Ray); builds in subprocesses connect to it by its
address, as a build does to an existing cluster. Ray's workers inherit PYTHONPATH from this process, so they import
the same ``libra`` and ``tests`` packages.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
import ray

import libra
from libra.induction.build import BuildOptions, build_library
from libra.induction.config import BuildConfig
from libra.library.artifact import Library
from tests import generalization as gen
from tests.conftest import needs_bfcl
from tests.induction_toys import kill_after_checkpoint

ROOT = Path(__file__).resolve().parents[1]
SRC = Path(libra.__file__).resolve().parents[1]


def _env() -> dict[str, str]:
    """This process's environment with our ``libra`` and the ``tests`` package first on the path."""
    paths = [str(SRC), str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


@pytest.fixture(scope="module")
def ray_address():
    """A local Ray with 2 CPUs on 127.0.0.1 for the module; its address, for drivers in other processes."""
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = _env()["PYTHONPATH"]  # the raylet, and so every Ray worker, starts with it
    try:
        ray.init(
            address="local",
            num_cpus=2,
            _node_ip_address="127.0.0.1",
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


HAZARDS = [
    ("toy_hazards.segfault", "worker crashed (signal SIGSEGV)"),
    ("toy_hazards.hang", "timeout after 10.0s"),
    ("toy_hazards.hog_memory", "MemoryError"),
    ("toy_hazards.connect", "PermissionError: network disabled during library construction"),
    ("toy_hazards.raw_connect", "PermissionError: network disabled during library construction"),
]


def test_the_sandbox_holds_inside_ray_actors(ray_address) -> None:
    """Crashes, hangs, memory blow-ups and network access give the local pool's error records, in call order,
    and the lost actors are replaced so the next calls run."""
    from libra.runtime import IsolatedRuntime
    from libra.runtime.workers.ray import RayTransport, on_ray
    from tests.toy_tools import make_blog_runtime

    with on_ray(), IsolatedRuntime(make_blog_runtime, n_workers=2, timeout_s=10.0, memory_mb=128) as rt:
        assert isinstance(rt.pool.transport, RayTransport)
        assert rt.network_isolation == "namespace" and rt.pids == []  # workers on the actors' node, not ours
        fresh = rt.fresh()
        calls = [(fresh, "toy_hazards.add", {"a": i}) for i in range(6)]
        for k, (tool, _) in enumerate(HAZARDS):
            calls.insert(2 * k + 1, (fresh, tool, {}))
        results = rt.invoke_many(calls)
        errors = iter(expected for _, expected in HAZARDS)
        adds = iter(range(6))
        for (_, tool, _), (record, state) in zip(calls, results):
            if tool == "toy_hazards.add":
                assert (record.status, record.output) == ("success", next(adds) + 2), record.error
            else:
                assert record.status == "error" and record.error.startswith(next(errors)), record.error
            assert state == fresh
        assert rt.pool.restarts >= 2  # the crashed and the timed-out worker were replaced
        assert rt.invoke(fresh, "toy_hazards.add", {"a": 40})[0].output == 42


def _timeless(value):
    """``value`` without the calls' measured durations (they differ between any two runs, local ones too)."""
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _relations(lib: Library) -> list[dict]:
    """Relations in library order, with their evidence: two equal lists mean the same library."""
    return [_timeless(r.to_dict()) for r in lib.relations]


def _same_library(local: Library, on_ray: Library, same_work: bool = False) -> None:
    """Same relations (with their evidence) and contracts; with ``same_work``, the engine's counters too.

    Counters are compared only between builds on one worker each: with several, a worker's part layout of a
    state depends on the states it held before, so the same state can get another content key on another
    worker and the memo sees it twice (more calls, never other relations) -- local builds do that too.
    """
    assert _relations(on_ray) == _relations(local)
    assert on_ray.contracts == local.contracts
    if same_work:
        assert on_ray.stats["engine"] == local.stats["engine"]
    assert on_ray.stats["executor"] == "ray" and local.stats["executor"] == "local"


@pytest.mark.parametrize("name", ["contacts", "phone"])
def test_a_toy_catalog_builds_the_same_library_on_ray(ray_address, name) -> None:
    bench = gen.CatalogBenchmark(gen.load(name))
    local = build_library(bench, None, BuildOptions(workers=1, progress=False))
    one = build_library(bench, None, BuildOptions(workers=1, executor="ray", progress=False))
    two = build_library(bench, None, BuildOptions(workers=2, executor="ray", progress=False))
    assert local.relations, "the toy catalog must have relations for the comparison to mean something"
    _same_library(local, one, same_work=True)
    _same_library(local, two)
    assert two.stats["workers"] == 2
    assert two.stats["network_isolation"] == local.stats["network_isolation"]  # the sandbox holds inside the actors


@needs_bfcl
def test_bfcl_builds_the_same_library_on_ray(ray_address) -> None:
    from libra.benchmarks.bfcl.adapter import BFCLBenchmark

    cfg = BuildConfig(max_calls=4000)  # checked between waves, so both builds stop at the same wave
    local = build_library(BFCLBenchmark(), None, BuildOptions(workers=2, config=cfg, progress=False))
    on_ray = build_library(BFCLBenchmark(), None, BuildOptions(workers=2, executor="ray", config=cfg, progress=False))
    assert len(local.relations) > 20
    _same_library(local, on_ray)


def test_a_ray_build_connects_by_address_and_resumes_after_a_kill(ray_address, tmp_path) -> None:
    reference = tmp_path / "ref.json"
    subprocess.run(
        [sys.executable, "-m", "tests.induction_toys", str(reference), "0"],
        cwd=ROOT,
        env=_env(),
        check=True,
        timeout=300,
    )
    out, ckpt = tmp_path / "lib.json", tmp_path / "lib.json.ckpt"
    cmd = [sys.executable, "-m", "tests.induction_toys", str(out), "0.05", f"ray:{ray_address}", "2"]
    kill_after_checkpoint(subprocess.Popen(cmd, cwd=ROOT, env=_env()), ckpt)
    assert not out.exists()
    subprocess.run(cmd, cwd=ROOT, env=_env(), check=True, timeout=300)
    assert not ckpt.exists()
    a, b = Library.load(out), Library.load(reference)
    assert a.stats["resumed"] is True and a.stats["executor"] == "ray"
    assert _relations(a) == _relations(b)
    assert a.stats["engine"]["executed_calls"] == b.stats["engine"]["executed_calls"]


def _cli(args: list[str], tmp_path: Path, hide_ray: bool = False) -> subprocess.CompletedProcess:
    prelude = "import sys\n" + ("sys.modules['ray'] = None  # as if Ray were not installed\n" if hide_ray else "")
    code = prelude + "from libra.cli.main import main\nsys.argv = ['libra', *sys.argv[1:]]\nmain()\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


SHOP = str(ROOT / "tests" / "fixtures" / "shop_tools.py")


def test_without_ray_the_ray_executor_says_how_to_install_it(tmp_path) -> None:
    out = tmp_path / "lib.json"
    for args in (["--executor", "ray"], ["--executor", "ray:127.0.0.1:6379"]):
        done = _cli(["build", "--tools", SHOP, "--out", str(out), *args], tmp_path, hide_ray=True)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), done.stderr
        assert "pip install 'libra-tools[ray]'" in lines[0]
        assert not out.exists()
    project = tmp_path / "libra.toml"
    project.write_text(f'[[python]]\ntools = "{SHOP}"\n[build]\nexecutor = "ray"\n')
    done = _cli(["build", "--config", str(project), "--out", str(out)], tmp_path, hide_ray=True)
    assert done.returncode == 2 and "pip install 'libra-tools[ray]'" in done.stderr and "Traceback" not in done.stderr
    done = _cli(["build", "--tools", SHOP, "--out", str(out), "--executor", "spark"], tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("error:") and "local, ray or ray:ADDRESS" in done.stderr


def test_the_cli_builds_on_a_private_local_ray_and_on_a_cluster(ray_address, tmp_path) -> None:
    local, private, cluster = tmp_path / "local.json", tmp_path / "private.json", tmp_path / "cluster.json"
    base = ["build", "--tools", SHOP, "--quiet", "--workers", "1"]
    for path, args in ((local, []), (private, ["--executor", "ray"]), (cluster, ["--executor", f"ray:{ray_address}"])):
        done = _cli([*base, "--out", str(path), *args], tmp_path)
        assert done.returncode == 0, done.stderr
    want = _relations(Library.load(local))
    assert want
    assert _relations(Library.load(private)) == want
    assert _relations(Library.load(cluster)) == want
    # the private Ray is gone with its build; the cluster the other build connected to still runs
    assert ray.get(ray.put(1)) == 1


def test_ctrl_c_during_a_ray_build_exits_130_and_stops_its_ray(tmp_path) -> None:
    from tests.test_cli_signals import _assert_interrupted, _interrupt_after

    out = tmp_path / "lib.json"
    proc, _, err = _interrupt_after(
        "proposing and checking contracts",
        ["build", "slow-shop", "--out", str(out), "--workers", "2", "--executor", "ray"],
        tmp_path / "cache",
    )
    _assert_interrupted(proc, err)  # nothing of the process group is left: Ray's own processes included
    assert not out.exists()


def test_ray_needs_sandboxed_workers_and_a_valid_spec() -> None:
    from libra.errors import ConfigError

    bench = gen.CatalogBenchmark(gen.load("phone"))
    with pytest.raises(ConfigError, match="--workers 1 or more"):
        build_library(bench, None, BuildOptions(workers=0, executor="ray", progress=False))
    with pytest.raises(ConfigError, match="local, ray or ray:ADDRESS"):
        build_library(bench, None, BuildOptions(workers=1, executor="dask", progress=False))
