import json

import numpy as np
import pytest

from libra.catalog import Catalog, Tool
from libra.embeddings.embedders import get_embedder
from libra.errors import ConfigError
from libra.retrieval.dense import DenseRetriever
from libra.retrieval.documents import text_document, tool_document

from .test_cli import run


def _tool(**kw):
    d = {
        "name": "Notes.search_notes",
        "description": "Find the notes whose text contains a phrase.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "phrase to look for"},
                "limit": {"type": ["integer", "null"]},
                "order": {"enum": ["asc", "desc"]},
            },
            "required": ["query"],
        },
        "response": {"type": "object", "properties": {"note_ids": {"type": "array"}}},
    }
    d.update(kw)
    return Tool.from_dict(d)


def test_text_document_renders_the_public_metadata_as_prose():
    doc = text_document(_tool())
    assert doc.splitlines() == [
        "Notes.search_notes: Find the notes whose text contains a phrase.",
        "Parameters: query (string): phrase to look for; limit (integer or null); order (one of asc, desc)",
        "Returns: note_ids (array)",
    ]
    assert "{" not in doc and "properties" not in doc


def test_text_document_lists_the_fields_of_listed_records_and_a_described_scalar():
    listed = {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "note_id": {"type": "integer", "description": "id of the note"},
                "title": {"type": "string"},
            },
        },
    }
    assert (
        text_document(_tool(response=listed)).splitlines()[-1]
        == "Returns: note_id (integer): id of the note; title (string)"
    )
    scalar = {"type": "string", "description": "the first matching note as Markdown"}
    assert (
        text_document(_tool(response=scalar)).splitlines()[-1] == "Returns: string: the first matching note as Markdown"
    )
    assert not any(line.startswith("Returns") for line in text_document(_tool(response=None)).splitlines())


def test_text_document_without_parameters_or_description():
    t = _tool(description="", parameters={"type": "object", "properties": {}}, response=None)
    assert text_document(t) == "Notes.search_notes"


def test_json_style_is_the_papers_serialization_and_unknown_styles_fail():
    t = _tool()
    assert tool_document(t, "json") == t.text() and json.loads(tool_document(t, "json"))["name"] == t.name
    with pytest.raises(ConfigError, match="text or json"):
        tool_document(t, "xml")
    with pytest.raises(ConfigError, match="text or json"):
        DenseRetriever("hash", document="xml")


def test_text_documents_fit_the_encoder_window_where_json_does_not():
    # Twelve described parameters: the JSON serialization passes MiniLM's 256-token window, so the end of it
    # is never read; the prose rendering of the same metadata fits.
    props = {
        f"field_{i}": {"type": "string", "description": f"the {i}th attribute of the stored record"} for i in range(12)
    }
    t = _tool(parameters={"type": "object", "properties": props, "required": list(props)})
    tok = get_embedder("minilm")._tok
    n = lambda s: len(tok.encode(s).ids)  # noqa: E731  (the tokenizer truncates at 256)
    assert n(tool_document(t, "json")) == 256 and n(tool_document(t, "text")) < 256


def test_dense_retriever_embeds_the_chosen_document():
    cat = Catalog(
        [
            _tool(),
            _tool(
                name="Files.remove",
                description="Delete a file from the disk.",
                parameters={"type": "object", "properties": {"path": {"type": "string"}}},
            ),
        ]
    )
    text = DenseRetriever("minilm", cache=False).fit(cat)
    raw = DenseRetriever("minilm", cache=False, document="json").fit(cat)
    assert not np.allclose(text.tool_vectors, raw.tool_vectors)
    emb = get_embedder("minilm")
    np.testing.assert_allclose(text.tool_vectors, emb.embed([text_document(t) for t in cat]), atol=1e-5)
    s = text.score(["delete the file old.txt"])[0]
    assert s[1] > s[0]


def test_eval_rejects_an_unknown_document_style_in_one_line():
    out = run("eval", "bfcl", "--document", "xml")
    assert out.returncode == 2 and out.stderr.strip().count("\n") == 0 and "text or json" in out.stderr, out.stderr
