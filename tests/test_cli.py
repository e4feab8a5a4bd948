import json
import subprocess
import sys

from .conftest import needs_bfcl


def run(*args, code=None):
    cmd = [sys.executable, "-c", code or "from libra.cli.main import main; main()", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def test_unknown_benchmark_is_one_line():
    out = run("eval", "nope")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "unknown benchmark 'nope'" in out.stderr and "Traceback" not in out.stderr


@needs_bfcl
def test_unknown_method_is_one_line():
    out = run("eval", "bfcl", "--method", "magic")
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "unknown method 'magic'" in out.stderr


def test_missing_bfcl_eval_says_what_to_do():
    code = "import sys; sys.modules['bfcl_eval'] = None\nfrom libra.cli.main import main; main()"
    out = run("eval", "bfcl", "--method", "bm25", code=code)
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0
    assert "pip install --no-deps" in out.stderr and "Traceback" not in out.stderr


@needs_bfcl
def test_eval_bm25_json_and_runs(tmp_path):
    j, r = tmp_path / "res.json", tmp_path / "runs.trec"
    out = run("eval", "bfcl", "--method", "bm25", "--k", "15", "--json", str(j), "--runs", str(r))
    assert out.returncode == 0, out.stderr
    data = json.loads(j.read_text())
    assert data["benchmark"] == "bfcl" and data["k"] == 15 and data["n_tasks"] == 200
    row = data["results"][0]
    assert row["method"] == "bm25" and set(row) == {"method", "precision", "recall", "ndcg"}
    # the paper's BM25 row (26.2 / 75.5 / 69.5) is reproduced within half a point
    assert abs(row["precision"] - 26.2) <= 0.5 and abs(row["recall"] - 75.5) <= 0.5 and abs(row["ndcg"] - 69.5) <= 0.5
    lines = r.read_text().splitlines()
    assert len(lines) == 200 * 15 and lines[0].split()[1] == "Q0"


def test_bad_k():
    out = run("eval", "bfcl", "--k", "0")
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0


@needs_bfcl
def test_bad_graph_options_are_one_line():
    for opt, value, word in (
        ("--score-space", "cosine", "probability, similarity"),
        ("--temperature", "0", "positive"),
        ("--selection", "best", "both, field"),
    ):
        out = run("eval", "bfcl", "--method", "libra", opt, value)
        assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and word in out.stderr, out.stderr


def test_bad_build_options_are_one_line(tmp_path):
    for opt, value, word in (
        ("--credit", "everyone", "origin"),
        ("--tau", "1.5", "between 0 and 1"),
        ("--max-calls", "0", "positive"),
        ("--max-depth", "-1", "0 or more"),
    ):
        out = run("build", "bfcl", "--out", str(tmp_path / "lib.json"), opt, value)
        assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and word in out.stderr, out.stderr


@needs_bfcl
def test_build_budgets_are_options(tmp_path):
    # A full BFCL build executes about 33,000 calls; the budget stops it after the wave that crosses 300.
    path = tmp_path / "small.json"
    out = run(
        "build",
        "bfcl",
        "--out",
        str(path),
        "--max-calls",
        "300",
        "--max-depth",
        "1",
        "--max-retry-calls",
        "7",
        "--quiet",
    )
    assert out.returncode == 0, out.stderr
    lib = json.loads(path.read_text())
    assert lib["meta"]["config"]["max_calls"] == 300 and lib["meta"]["config"]["max_depth"] == 1
    assert lib["meta"]["config"]["max_retry_calls"] == 7
    assert 300 <= lib["stats"]["engine"]["executed_calls"] < 5000
    assert lib["stats"]["engine"]["calls_retries"] <= 7  # the retries' own budget, on top of --max-calls


def test_show_and_explain_a_library(tmp_path):
    from libra.induction.build import BuildOptions, build_library

    from .induction_toys import ShopBenchmark

    path = tmp_path / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    j = tmp_path / "show.json"
    out = run("show", str(path), "--json", str(j))
    assert out.returncode == 0, out.stderr
    data = json.loads(j.read_text())
    assert set(data) >= {"stats", "edges"}
    edge = next(e for e in data["edges"] if e["consumer"] == "Shop.add_item" and e["kind"] == "provenance")
    assert edge == {
        "provider": "Shop.login",
        "consumer": "Shop.add_item",
        "kind": "provenance",
        "provider_field": "access_token",
        "consumer_input": "access_token",
    }
    out = run("explain", str(path), "Shop.add_item")
    assert out.returncode == 0 and "Shop.login" in out.stdout and "control" in out.stdout
    out = run("explain", str(path), "Shop.nope")
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "no tool named" in out.stderr
    out = run("show", str(tmp_path / "missing.json"))
    assert out.returncode == 2 and "libra build" in out.stderr
    # retrieval with the library: the sign-in the request never names comes in through add_item
    r = tmp_path / "retrieve.json"
    out = run("retrieve", str(path), "put a new item titled lamp in the shop", "--k", "3", "--json", str(r))
    assert out.returncode == 0, out.stderr
    tools = json.loads(r.read_text())["results"][0]["tools"]
    login = next(t for t in tools if t["tool"] == "Shop.login")
    assert login["promoted_by"] == ["Shop.add_item"] and login["rank"] < login["base_rank"]
    out = run("retrieve", str(path), "x", "--base", "magic")
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "--base" in out.stderr


def test_usage_errors_have_no_traceback():
    out = run("no-such-command")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "No such command" in out.stderr
    out = run("build", "bfcl")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "--out" in out.stderr


def test_module_entry_point_has_every_command():
    out = subprocess.run([sys.executable, "-m", "libra.cli", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    for cmd in ("eval", "contracts", "build", "show", "explain", "retrieve", "analyze"):
        assert cmd in out.stdout


# -- checked options and outputs (see also test_cli_options.py) ------------------------------------------------
def _toy_library(tmp_path):
    from libra.induction.build import BuildOptions, build_library

    from .induction_toys import ShopBenchmark

    path = tmp_path / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return path


def test_kc_is_the_candidate_set_eval_scores(tmp_path):
    from .cli_toys import run_cli

    lib = _toy_library(tmp_path)
    recall = {}
    for kc in (None, "1"):
        j, r = tmp_path / f"res-{kc}.json", tmp_path / f"runs-{kc}.jsonl"
        args = [
            "eval",
            "shop-tasks",
            "--method",
            "libra",
            "--embedder",
            "hash",
            "--library",
            str(lib),
            "--json",
            str(j),
            "--runs",
            str(r),
        ]
        out = run_cli(*args, *(["--kc", kc] if kc else []), cache=tmp_path / "cache")
        assert out.returncode == 0, out.stderr
        recall[kc] = json.loads(j.read_text())["results"][0]["recall"]
        rankings = [json.loads(line)["ranking"] for line in r.read_text().splitlines()]
        assert [len(x) for x in rankings] == ([6, 6] if kc is None else [1, 1])  # 6 tools in the toy catalog
    assert recall[None] == 100.0 and recall["1"] < recall[None]


def test_a_write_failing_after_the_work_is_one_line_and_status_1(tmp_path):
    from .cli_toys import run_cli

    lib = _toy_library(tmp_path)
    out = run_cli("show", str(lib), "--json", "/dev/full", cache=tmp_path / "cache")  # a device: always full
    assert out.returncode == 1 and "relations:" in out.stdout
    assert out.stderr.strip() == "error: cannot write /dev/full: No space left on device"


def test_explain_suggests_close_names(tmp_path):
    from .cli_toys import run_cli

    lib = _toy_library(tmp_path)
    for typo, meant in (
        ("Shop.lgoin", "Shop.login"),
        ("shop.add_itme", "Shop.add_item"),
        ("square_rot", "Shop.square_root"),
        ("login", "Shop.login"),
    ):
        out = run_cli("explain", str(lib), typo, cache=tmp_path / "cache")
        assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
        assert "did you mean" in out.stderr and meant in out.stderr.split("did you mean", 1)[1], out.stderr


def test_empty_query_is_refused(tmp_path):
    from .cli_toys import run_cli

    lib = _toy_library(tmp_path)
    for query in ("", "  \t"):
        out = run_cli("retrieve", str(lib), "add an item", query, cache=tmp_path / "cache")
        assert (
            out.returncode == 2
            and out.stderr.strip().startswith("error: ")
            and "'query'" in out.stderr
            and out.stdout == ""
        )
