import json

import pytest

from libra import Catalog, Tool
from libra.errors import CatalogError


def _tool(**kw):
    d = {
        "name": "Files.cat",
        "description": "show a file",
        "parameters": {"type": "object", "properties": {"file_name": {"type": "string"}}, "required": ["file_name"]},
    }
    d.update(kw)
    return d


def test_round_trip(tmp_path):
    cat = Catalog.from_dict([_tool(), _tool(name="Files.ls", parameters={"type": "object", "properties": {}})])
    path = tmp_path / "c.json"
    cat.save(path)
    again = Catalog.load(path)
    assert again.names == ["Files.cat", "Files.ls"]
    assert again["Files.cat"].required == ["file_name"]
    assert again.fingerprint() == cat.fingerprint()
    assert again.index("Files.ls") == 1


def test_malformed_schema_names_tool_and_field():
    with pytest.raises(CatalogError, match=r"'Files.cat'.*'parameters'"):
        Catalog.from_dict([_tool(parameters={"type": "object", "properties": {"x": {"type": 12}}})])
    with pytest.raises(CatalogError, match=r"'Files.cat'.*'response'"):
        Catalog.from_dict([_tool(response={"type": "nonsense"})])


def test_duplicate_and_missing_names():
    with pytest.raises(CatalogError, match="appears twice"):
        Catalog.from_dict([_tool(), _tool()])
    with pytest.raises(CatalogError, match="tool #0"):
        Catalog.from_dict([{"description": "no name"}])


def test_unreadable_files(tmp_path):
    with pytest.raises(CatalogError, match="does not exist"):
        Catalog.load(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(CatalogError, match="not valid JSON"):
        Catalog.load(bad)
    bad.write_text(json.dumps({"tools": "x"}))
    with pytest.raises(CatalogError):
        Catalog.load(bad)


def test_tool_text_is_public_metadata_only():
    t = Tool.from_dict(_tool(metadata={"secret": "gold"}))
    assert "gold" not in t.text()
    assert json.loads(t.text())["name"] == "Files.cat"
