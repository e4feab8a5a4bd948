"""BM25 must be the paper's variant: checked against an independent direct implementation of the formula."""

import math
import re
from collections import Counter

import numpy as np

from libra import Catalog, Tool
from libra.retrieval.bm25 import BM25Retriever, tokenize

from .conftest import needs_bfcl


def reference_bm25(docs, query, k1=1.5, b=0.75):
    toks = [re.findall(r"[A-Za-z0-9_]+", d.lower()) for d in docs]
    n = len(docs)
    avgdl = sum(map(len, toks)) / n
    df = Counter(t for d in toks for t in set(d))
    out = []
    for d in toks:
        tf = Counter(d)
        s = 0.0
        for q in re.findall(r"[A-Za-z0-9_]+", query.lower()):
            if q not in tf:
                continue
            idf = math.log(1 + (n - df[q] + 0.5) / (df[q] + 0.5))
            s += idf * tf[q] * (k1 + 1) / (tf[q] + k1 * (1 - b + b * len(d) / avgdl))
        out.append(s)
    return np.array(out)


def test_tokenizer():
    assert tokenize("Post_Tweet(User-ID 42)!") == ["post_tweet", "user", "id", "42"]


def _check(catalog, queries):
    r = BM25Retriever().fit(catalog)
    ours = r.score(queries)
    docs = [t.text() for t in catalog]
    for qi, q in enumerate(queries):
        np.testing.assert_allclose(ours[qi], reference_bm25(docs, q), rtol=1e-5, atol=1e-6)


def test_matches_reference_small():
    cat = Catalog(
        [
            Tool(name=f"A.t{i}", description=d)
            for i, d in enumerate(
                ["sign in to the phone", "update the alarm alarm", "list files in a folder", "post a tweet"]
            )
        ]
    )
    _check(cat, ["update my alarm", "sign in", "nothing matches xyz", "tweet tweet files"])


@needs_bfcl
def test_matches_reference_on_bfcl():
    from libra.benchmarks.bfcl.adapter import load_catalog, load_tasks

    tasks = load_tasks()[:25]
    _check(load_catalog(), [t.query for t in tasks])
