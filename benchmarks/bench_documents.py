"""What the dense retriever embeds per tool: the metadata as prose (default) or the paper's JSON serialization.

For each benchmark and document style: how many tool documents exceed the default encoder's 256-token window,
and dense and LIBRA P/R/NDCG@K over the benchmark's cached library (built first if missing). Both methods use
the same documents in each row, so the LIBRA-minus-dense margin is like for like.

Writes benchmarks/results/documents.json. Run: make bench-documents [RETRIEVAL_BENCHES="bfcl scitooleval"]
"""

from __future__ import annotations

import statistics
import sys

from _common import save
from libra.benchmarks.registry import get_benchmark
from libra.embeddings.embedders import MiniLMEmbedder, get_embedder
from libra.eval.methods import EvalOptions
from libra.eval.runner import run_method
from libra.retrieval.documents import DOCUMENT_STYLES, tool_document


def main(benches: list[str]) -> None:
    emb = get_embedder("minilm")
    assert isinstance(emb, MiniLMEmbedder)
    window = emb.max_tokens
    rows = []
    for name in benches:
        bench = get_benchmark(name)
        catalog, tasks = bench.catalog(), bench.tasks()
        for style in DOCUMENT_STYLES:
            # The tokenizer truncates at the window, so a document that fills it exactly was cut (or fits to the token).
            lengths = [len(e.ids) for e in emb._tok.encode_batch([tool_document(t, style) for t in catalog])]
            opts = EvalOptions(k=bench.default_k, document=style)
            scores = {m: run_method(m, bench, catalog, tasks, opts).scores.as_dict() for m in ("dense", "libra")}
            row = {
                "benchmark": name,
                "k": bench.default_k,
                "document": style,
                "tools": len(catalog),
                "median_tokens": statistics.median(lengths),
                "tools_at_window": sum(n >= window for n in lengths),
                "dense": scores["dense"],
                "libra": scores["libra"],
            }
            rows.append(row)
            d, g = row["dense"], row["libra"]
            print(
                f"{name}@{row['k']} {style:<4} at window {row['tools_at_window']:>3}/{row['tools']}  dense R "
                f"{d['recall']:.1f} NDCG {d['ndcg']:.1f}  "
                f"libra R {g['recall']:.1f} NDCG {g['ndcg']:.1f}  margin {g['recall'] - d['recall']:+.1f} / "
                f"{g['ndcg'] - d['ndcg']:+.1f}",
                flush=True,
            )
    path = save("documents", {"embedder": emb.model_id, "window_tokens": window, "rows": rows})
    print(f"-> {path}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["bfcl", "scitooleval", "appworld"])
