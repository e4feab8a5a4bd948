import json
import subprocess
import sys

from .conftest import needs_bfcl


def run(*args, code=None):
    cmd = [sys.executable, "-c", code or "from libra.cli import main; main()", *args]
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
    code = "import sys; sys.modules['bfcl_eval'] = None\nfrom libra.cli import main; main()"
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
