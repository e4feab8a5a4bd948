"""Fuse a BERT-style encoder's attention and GELU blocks into onnxruntime's own kernels, once, cached on disk.

Why: the default embedder's ONNX file (an export of PyTorch's ``scaled_dot_product_attention``) spells each
attention block as some twenty small nodes (three projections with their bias adds, reshapes and transposes of
the heads, a scaled product, a masked softmax with a NaN guard, the weighted sum) and each GELU as five. For a
query of a few dozen word pieces the matrix products are a small part of a run; the rest is node dispatch and
thread wake-ups. onnxruntime's own graph optimizer does not recognise this export's attention pattern, nor do the
fusions of ``onnxruntime.transformers``. This module rewrites each block into onnxruntime's ``Attention`` (one
packed QKV product, the heads computed in one kernel) and ``BiasGelu`` contrib operators: the same arithmetic on
the same float32 weights, so embeddings change only at float rounding level.

Each rule is stated on the graph's structure (which tensors feed which operators), not on node names, and a
block that does not match is left as it was. Fusing needs the ``onnx`` package; the result is cached under
``$LIBRA_CACHE_DIR/models`` keyed by the source model's SHA-256 and this module's code, written atomically, so
later starts read the fused file directly (no ``onnx`` import).
"""

from __future__ import annotations

import hashlib
import math
from pathlib import Path
from typing import Any

from libra._util.io import atomic_write_bytes

#: ONNX Runtime's contrib operator domain (``Attention``, ``BiasGelu``).
MS_DOMAIN = "com.microsoft"
#: The GELU's divisor inside erf (``erf(x / sqrt(2))``).
SQRT2 = math.sqrt(2.0)


def fusion_revision() -> str:
    """A short hash of this module's code: a fused model, and the vectors it gives, are named by it, so a change
    to any rule here is never mixed with files the old rules wrote."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]


def fused_model(source: Path, source_sha256: str, cache: Path, rebuild: bool = False) -> Path | bytes:
    """The fused model of ``source`` (whose SHA-256 is ``source_sha256``): its file under ``cache/models``,
    built and written atomically on first use (or when ``rebuild``), or its bytes when the cache cannot be
    written. The name holds the source's hash and :func:`fusion_revision`, so a stale file is never read."""
    path = cache / "models" / f"{source.stem}-{source_sha256[:16]}-fused-{fusion_revision()}.onnx"
    if path.is_file() and not rebuild:
        return path
    data = fuse(source.read_bytes())
    try:
        atomic_write_bytes(path, data)
    except OSError:
        return data  # a read-only cache costs each start the fusion, never the fused model
    return path


def fuse(model_bytes: bytes) -> bytes:
    """``model_bytes`` with its attention and GELU blocks fused (see the module docstring)."""
    import tempfile

    import onnx
    import onnxruntime as ort

    # onnxruntime's basic level first: it folds the export's weight dequantisation (int8 initializers cast and
    # scaled) into float32 constants, which the fusions below need to read as plain weights.
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    opts.log_severity_level = 3
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "basic.onnx"
        opts.optimized_model_filepath = str(folded)
        ort.InferenceSession(model_bytes, opts, providers=["CPUExecutionProvider"])
        model = onnx.load(str(folded))
    graph = _Graph(model)
    graph.fuse_attention()
    graph.fuse_gelu()
    graph.prune()
    if not any(op.domain == MS_DOMAIN for op in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid(MS_DOMAIN, 1))
    fused = model.SerializeToString()
    check_same_outputs(model_bytes, fused)
    return fused


#: How far the fused graph's outputs may be from the source's on the probe (float32 rounding is about 1e-7 of
#: the values; a wrong rewrite is off by whole units).
OUTPUT_TOLERANCE = 1e-4


def check_same_outputs(source: bytes, fused: bytes) -> None:
    """Run both graphs on a probe batch (two texts of different lengths, so one is padded) and raise
    ``ValueError`` unless every output agrees within :data:`OUTPUT_TOLERANCE`. The rules match structure, not
    meaning: this is what makes a rewrite that matched the wrong thing fail here rather than change vectors."""
    import numpy as np
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    a, b = (ort.InferenceSession(m, opts, providers=["CPUExecutionProvider"]) for m in (source, fused))
    lengths = (12, 7)
    mask = np.array([[1] * n + [0] * (max(lengths) - n) for n in lengths], dtype=np.int64)
    feeds = {}
    for spec in a.get_inputs():
        if "mask" in spec.name:
            feeds[spec.name] = mask
        elif "type" in spec.name:
            feeds[spec.name] = np.zeros_like(mask)
        else:  # token ids: small ones exist in any vocabulary
            feeds[spec.name] = (np.arange(mask.size, dtype=np.int64).reshape(mask.shape) % 90 + 5) * mask
    for x, y in zip(a.run(None, feeds), b.run(None, feeds)):
        gap = float(np.abs(np.asarray(x) - np.asarray(y)).max())
        if not gap <= OUTPUT_TOLERANCE:
            raise ValueError(f"the fused graph's outputs differ from the source's by {gap:.3g}")


class _Graph:
    """The graph being rewritten, with its producers, consumers and constants indexed."""

    def __init__(self, model: Any) -> None:
        from onnx import numpy_helper

        self.model = model
        self.g = model.graph
        self.consts = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        self.reindex()

    def reindex(self) -> None:
        self.producer = {o: n for n in self.g.node for o in n.output}
        self.consumers: dict[str, list[Any]] = {}
        for n in self.g.node:
            for i in n.input:
                self.consumers.setdefault(i, []).append(n)

    def const(self, name: str) -> Any:
        return self.consts.get(name)

    def scalar(self, name: str) -> float | None:
        c = self.const(name)
        return float(c.reshape(-1)[0]) if c is not None and c.size == 1 else None

    def add_const(self, name: str, value: Any) -> str:
        from onnx import numpy_helper

        self.g.initializer.append(numpy_helper.from_array(value, name))
        self.consts[name] = value
        return name

    # -- attention ------------------------------------------------------------------------------------------
    def projection(self, tensor: str) -> tuple[str, str, str, float] | None:
        """Walk up from ``tensor`` through reshapes, transposes and scalar scalings to ``X @ W + b``: returns
        (X, W, b, product of the scalings), or None when the path holds anything else."""
        scale = 1.0
        node = self.producer.get(tensor)
        while node is not None and node.op_type in ("Reshape", "Transpose", "Mul"):
            if node.op_type == "Mul":
                data = [i for i in node.input if self.scalar(i) is None]
                consts = [self.scalar(i) for i in node.input if self.scalar(i) is not None]
                if len(data) != 1 or len(consts) != 1:
                    return None
                scale *= consts[0]  # type: ignore[operator]
                node = self.producer.get(data[0])
            else:
                node = self.producer.get(node.input[0])
        if node is None or node.op_type != "Add":
            return None
        bias = next((i for i in node.input if self.const(i) is not None and self.const(i).ndim == 1), None)
        other = next((i for i in node.input if i != bias), None)
        mm = self.producer.get(other) if other else None
        if bias is None or mm is None or mm.op_type != "MatMul" or self.const(mm.input[1]) is None:
            return None
        return mm.input[0], mm.input[1], bias, scale

    def heads(self, tensor: str, hidden: int) -> int | None:
        """The number of heads the value projection (``hidden`` wide) is split into, from the head size: the
        constant last dimension of the first reshape on its way up (``[batch, seq, heads, head_size]``)."""
        node = self.producer.get(tensor)
        while node is not None and node.op_type in ("Transpose", "Reshape"):
            if node.op_type == "Reshape":
                shape = self.producer.get(node.input[1])
                dims = list(shape.input) if shape is not None and shape.op_type == "Concat" else []
                last = self.const(dims[-1]) if len(dims) == 4 else None
                if (
                    last is not None
                    and last.size == 1
                    and int(last.reshape(-1)[0]) > 0
                    and hidden % int(last.reshape(-1)[0]) == 0
                ):
                    return hidden // int(last.reshape(-1)[0])
            node = self.producer.get(node.input[0])
        return None

    def key_mask(self) -> str | None:
        """The model's ``attention_mask`` input as int32 (what ``Attention`` takes as a per-key mask)."""
        names = [i.name for i in self.g.input]
        if "attention_mask" not in names:
            return None
        from onnx import TensorProto, helper

        out = "attention_mask_int32"
        if out not in self.producer:
            self.g.node.append(
                helper.make_node("Cast", ["attention_mask"], [out], to=TensorProto.INT32, name="fused_mask_cast")
            )
            self.reindex()
        return out

    def fuse_attention(self) -> int:
        """Each ``softmax(Q Kᵀ * s + mask) V`` block whose Q, K and V are projections of one tensor, as one
        ``Attention`` node. The export masks padded keys with the float minimum and guards the softmax of a
        fully masked row against NaN; ``Attention`` masks with -10000, which underflows to the same zero
        weights, and no row is fully masked (every text keeps its first token)."""
        import numpy as np
        from onnx import helper

        fused = 0
        for soft in [n for n in self.g.node if n.op_type == "Softmax"]:
            add = self.producer.get(soft.input[0])
            if add is None or add.op_type != "Add":
                continue
            scores = next(
                (
                    self.producer.get(i)
                    for i in add.input
                    if self.producer.get(i) is not None and self.producer[i].op_type == "MatMul"
                ),
                None,
            )
            if scores is None:
                continue
            probs = soft.output[0]
            isnan = [n for n in self.consumers.get(probs, []) if n.op_type == "IsNaN"]
            if isnan:  # the NaN guard: Where(IsNaN(probs), 0, probs)
                guard = [
                    n
                    for n in self.consumers.get(isnan[0].output[0], [])
                    if n.op_type == "Where" and n.input[2] == probs
                ]
                if len(isnan) != 1 or len(guard) != 1 or self.scalar(guard[0].input[1]) != 0.0:
                    continue
                probs = guard[0].output[0]
            weighted = [n for n in self.consumers.get(probs, []) if n.op_type == "MatMul" and n.input[0] == probs]
            if len(weighted) != 1:
                continue
            out_t = self.consumers.get(weighted[0].output[0], [])
            if len(out_t) != 1 or out_t[0].op_type != "Transpose":
                continue
            out_r = self.consumers.get(out_t[0].output[0], [])
            if len(out_r) != 1 or out_r[0].op_type != "Reshape":
                continue
            q, k, v = (
                self.projection(scores.input[0]),
                self.projection(scores.input[1]),
                self.projection(weighted[0].input[1]),
            )
            if q is None or k is None or v is None or not q[0] == k[0] == v[0]:
                continue
            heads = self.heads(weighted[0].input[1], int(self.const(v[1]).shape[1]))
            mask = self.key_mask()
            if heads is None or mask is None:
                continue
            w = np.concatenate([self.const(p[1]) for p in (q, k, v)], axis=1).astype(np.float32)
            b = np.concatenate([self.const(p[2]) for p in (q, k, v)]).astype(np.float32)
            tag = f"fused_attention_{fused}"
            node = helper.make_node(
                "Attention",
                [q[0], self.add_const(f"{tag}_qkv_weight", w), self.add_const(f"{tag}_qkv_bias", b), mask],
                [out_r[0].output[0]],
                domain=MS_DOMAIN,
                name=tag,
                num_heads=heads,
                scale=float(q[3] * k[3]),
            )
            self.g.node.remove(out_r[0])
            self.g.node.append(node)
            self.reindex()
            fused += 1
        return fused

    # -- GELU -----------------------------------------------------------------------------------------------
    def fuse_gelu(self) -> int:
        """Each ``x * 0.5 * (1 + erf(x / sqrt 2))`` with ``x = y + b`` (b a constant vector) as ``BiasGelu(y, b)``."""
        from onnx import helper

        fused = 0
        for erf in [n for n in self.g.node if n.op_type == "Erf"]:
            div = self.producer.get(erf.input[0])
            if div is None or div.op_type != "Div" or not _close(self.scalar(div.input[1]), SQRT2):
                continue
            x = div.input[0]
            plus = self.consumers.get(erf.output[0], [])
            if (
                len(plus) != 1
                or plus[0].op_type != "Add"
                or not any(_close(self.scalar(i), 1.0) for i in plus[0].input)
            ):
                continue
            half = self.consumers.get(plus[0].output[0], [])
            if (
                len(half) != 1
                or half[0].op_type != "Mul"
                or not any(_close(self.scalar(i), 0.5) for i in half[0].input)
            ):
                continue
            last = self.consumers.get(half[0].output[0], [])
            if len(last) != 1 or last[0].op_type != "Mul" or x not in last[0].input:
                continue
            bias_add = self.producer.get(x)
            if bias_add is None or bias_add.op_type != "Add":
                continue
            bias = next((i for i in bias_add.input if self.const(i) is not None and self.const(i).ndim == 1), None)
            if bias is None or len(self.consumers.get(x, [])) != 2:  # x feeds the Div and the last Mul only
                continue
            y = next(i for i in bias_add.input if i != bias)
            self.g.node.remove(last[0])
            self.g.node.append(
                helper.make_node(
                    "BiasGelu", [y, bias], [last[0].output[0]], domain=MS_DOMAIN, name=f"fused_gelu_{fused}"
                )
            )
            self.reindex()
            fused += 1
        return fused

    # -- clean-up -------------------------------------------------------------------------------------------
    def prune(self) -> None:
        """Drop the nodes and constants nothing reads any more, and put the nodes in dependency order."""
        needed = {o.name for o in self.g.output}
        keep = []
        for node in reversed(_topological(self.g)):
            if any(o in needed for o in node.output):
                keep.append(node)
                needed.update(i for i in node.input if i)
        keep.reverse()
        del self.g.node[:]
        self.g.node.extend(keep)
        unused = [t for t in self.g.initializer if t.name not in needed]
        for t in unused:
            self.g.initializer.remove(t)
        kept = [v for v in self.g.value_info if v.name in needed]  # shapes of removed tensors go
        del self.g.value_info[:]
        self.g.value_info.extend(kept)
        self.reindex()


def _topological(graph: Any) -> list[Any]:
    """The graph's nodes with every node after the producers of its inputs (fused nodes were appended last)."""
    produced = {i.name for i in graph.input} | {t.name for t in graph.initializer} | {""}
    pending, order = list(graph.node), []
    while pending:
        ready = [n for n in pending if all(i in produced for i in n.input)]
        if not ready:
            raise ValueError("the graph has a cycle or an input nothing produces")
        for n in ready:
            order.append(n)
            produced.update(n.output)
        ids = {id(n) for n in ready}
        pending = [n for n in pending if id(n) not in ids]
    return order


def _close(value: float | None, target: float) -> bool:
    return value is not None and abs(value - target) <= 1e-4 * max(1.0, abs(target))
