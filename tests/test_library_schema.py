"""The library file format has a JSON Schema, every library libra writes passes it, and a broken library is refused
in one line naming its first bad field (rather than crashing the loader, as a hand-edited library once did).

The broken libraries are mutations of a real library built from the toy shop (real executions), loaded by
``Library.load`` and by the commands that take a library (``show``, ``explain``, ``retrieve``, ``eval --library``).
"""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
import tomllib
from collections.abc import Callable
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from libra.catalog import Catalog, Tool
from libra.cli.main import main
from libra.errors import LibraryFormatError
from libra.induction.build import BuildOptions, build_library
from libra.library.artifact import Library, Relation
from libra.library.check import (
    check_library,
    library_schema,
    library_validator,
    schema_registry,
)

from .conftest import needs_bfcl
from .induction_toys import ShopBenchmark

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def shop_doc(tmp_path_factory) -> dict[str, Any]:
    """A real library (the toy shop, built by executing its tools), as the document ``save`` writes."""
    path = tmp_path_factory.mktemp("shop") / "shop.json"
    build_library(ShopBenchmark(), path, BuildOptions(workers=0, progress=False))
    return json.loads(path.read_text())


def _shipped_errors(doc: Any) -> list[jsonschema.ValidationError]:
    """Errors of the shipped schema file, as any outside tool would validate (references resolved, not inlined)."""
    validator = jsonschema.Draft202012Validator(library_schema(), registry=schema_registry())
    return list(validator.iter_errors(doc))


def _index(doc: dict[str, Any], kind: str) -> int:
    return next(i for i, r in enumerate(doc["relations"]) if r["kind"] == kind)


def _v1(doc: dict[str, Any]) -> dict[str, Any]:
    """The same library as format version 1 wrote it: one row per candidate."""
    c = doc["candidates"]
    rows = [
        [p, c["fields"][f], q, c["inputs"][i], s]
        for p, f, q, i, s in zip(c["provider"], c["field"], c["consumer"], c["input"], c["similarity"])
    ]
    return {**copy.deepcopy(doc), "format_version": 1, "candidates": rows}


# ---------------------------------------------------------------------------------------------------------------
# The schema describes what libra writes
# ---------------------------------------------------------------------------------------------------------------


def test_the_schema_is_a_valid_draft_2020_12_schema_shipped_as_package_data() -> None:
    jsonschema.Draft202012Validator.check_schema(library_schema())
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["libra"]
    assert any(fnmatch("library/library.schema.json", p) for p in patterns), "the schema must be in the wheel"
    assert (ROOT / "src" / "libra" / "library" / "library.schema.json").is_file()


def test_every_library_libra_writes_validates(shop_doc, tmp_path) -> None:
    assert _shipped_errors(shop_doc) == []
    assert {r["kind"] for r in shop_doc["relations"]} >= {"provenance", "state"} and shop_doc["contracts"]
    assert _shipped_errors(_v1(shop_doc)) == []
    # a library made through the Python API with the least it can hold (no contracts, no evidence, few stats)
    catalog = Catalog(
        [
            Tool("Phone.a"),
            Tool("Phone.b", response={"type": "object"}, group="phone", executable=False, metadata={"k": 1}),
        ],
        name="phone",
    )
    small = Library(
        catalog, relations=[Relation("Phone.a", "Phone.b", "state")], stats={"tools": 2}, meta={"benchmark": "phone"}
    )
    small.save(tmp_path / "small.json.gz")
    written = json.loads(gzip.decompress((tmp_path / "small.json.gz").read_bytes()))
    assert _shipped_errors(written) == []
    assert Library.load(tmp_path / "small.json.gz").relations == small.relations


def test_the_open_parts_take_new_keys(shop_doc) -> None:
    """Statistics, build metadata and evidence records grow over time: a newer build's extra keys still load."""
    doc = copy.deepcopy(shop_doc)
    doc["stats"]["isolation"] = {"network": "namespace"}
    doc["stats"]["engine"]["calls_new_kind"] = 3
    doc["meta"]["host"] = "ci"
    record = doc["relations"][0]["evidence"]["provider_call"]["record"]
    record["stdout"] = "captured"
    doc["relations"][0]["evidence"]["notes"] = ["kept"]
    assert _shipped_errors(doc) == []
    check_library(doc, "lib.json")


# ---------------------------------------------------------------------------------------------------------------
# Broken libraries: one line naming the field
# ---------------------------------------------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], Any]


def _set(path: list[Any], value: Any) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key(doc) if callable(key) else key]
        last = path[-1]
        target[last(doc) if callable(last) else last] = value

    return mutate


def _drop(path: list[Any]) -> Mutation:
    def mutate(doc: dict[str, Any]) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key(doc) if callable(key) else key]
        del target[path[-1]]

    return mutate


def _value(doc: dict[str, Any]) -> int:
    return _index(doc, "provenance")


def _state(doc: dict[str, Any]) -> int:
    return _index(doc, "state")


# (case, mutation of the document, the field the message must name, what it must say); the message's field is
# checked with the relation's real index substituted for {v} (a value relation) and {s} (a state relation).
SCHEMA_CASES: list[tuple[str, Mutation, str]] = [
    ("missing catalog", _drop(["catalog"]), "catalog: required property missing"),
    (
        "relation without provider",
        _drop(["relations", 3, "provider"]),
        "relations[3].provider: required property missing",
    ),
    ("relations is a number", _set(["relations"], 5), "relations: expected array, found integer 5"),
    (
        "edge field of the wrong type",
        _set(["relations", _value, "consumer_input"], 7),
        "relations[{v}].consumer_input: expected string",
    ),
    (
        "similarity of the wrong type",
        _set(["relations", _value, "similarity"], "high"),
        "relations[{v}].similarity: expected number or null",
    ),
    (
        "unknown kind",
        _set(["relations", 0, "kind"], "friendship"),
        'relations[0].kind: "friendship" is not one of "provenance", "compatibility", "state"',
    ),
    (
        "value relation without its input",
        _drop(["relations", _value, "consumer_input"]),
        "relations[{v}].consumer_input: required property missing",
    ),
    (
        "state relation naming a field",
        _set(["relations", _state, "provider_field"], "token"),
        "relations[{s}].provider_field: expected null",
    ),
    (
        "evidence record status",
        _set(["relations", 0, "evidence", "provider_call", "record", "status"], "maybe"),
        "relations[0].evidence.provider_call.record.status:",
    ),
    (
        "evidence call is a string",
        _set(["relations", 0, "evidence", "provider_call"], "login()"),
        "relations[0].evidence.provider_call: expected object",
    ),
    ("unknown top-level key", _set(["extras"], {}), "extras: unknown property"),
    ("unknown relation key", _set(["relations", 0, "weight"], 1), "relations[0].weight: unknown property"),
    ("unknown tool field", _set(["catalog", "tools", 0, "colour"], "red"), "catalog.tools[0].colour: unknown property"),
    ("tool without a name", _drop(["catalog", "tools", 1, "name"]), "catalog.tools[1].name: required property missing"),
    (
        "contract template",
        _set(["contracts", "Shop.login", "templates", 0, "expected"], "sometimes"),
        'contracts["Shop.login"].templates[0].expected:',
    ),
    (
        "contract argument",
        _set(["contracts", "Shop.login", "templates", 0, "arguments", "username"], {"kind": "guess"}),
        'contracts["Shop.login"].templates[0].arguments.username: {"kind": "guess"} matches none',
    ),
    (
        "statistic of the wrong type",
        _set(["stats", "candidate_compositions"], "many"),
        "stats.candidate_compositions: expected integer",
    ),
    (
        "health pair cut short",
        _set(["stats", "health", "top_rejections"], [["not signed in"]]),
        "stats.health.top_rejections[0]: expected at least 2 entries",
    ),
    (
        "candidate column of the wrong type",
        _set(["candidates", "provider", 2], "Shop.login"),
        'candidates.provider[2]: expected an index (an integer from 0), found string "Shop.login"',
    ),
    ("negative candidate index", _set(["candidates", "consumer", 4], -1), "candidates.consumer[4]: expected an index"),
    (
        "candidate similarity of the wrong type",
        _set(["candidates", "similarity", 1], "x"),
        "candidates.similarity[1]: expected number or null",
    ),
    ("candidate column missing", _drop(["candidates", "input"]), "candidates.input: required property missing"),
    (
        "candidate column not a list",
        _set(["candidates", "field"], {"0": 1}),
        "candidates.field: expected array, found object",
    ),
]

SEMANTIC_CASES: list[tuple[str, Mutation, str]] = [
    (
        "relation naming a tool not in the catalog",
        _set(["relations", 0, "consumer"], "Shop.nope"),
        'relations[0].consumer: tool "Shop.nope" is not in the library\'s catalog',
    ),
    (
        "contract filed under another tool",
        _set(["contracts", "Shop.login", "tool"], "Shop.logout"),
        'contracts["Shop.login"].tool: names "Shop.logout"',
    ),
    (
        "candidate index beyond its table",
        _set(["candidates", "field", 2], 999),
        "candidates.field[2]: index 999 is beyond candidates.fields",
    ),
    (
        "candidate columns of different lengths",
        lambda d: d["candidates"]["input"].pop(),
        "candidates: the per-candidate columns differ in length",
    ),
    (
        "tool listed twice",
        lambda d: d["catalog"]["tools"].append(d["catalog"]["tools"][0]),
        "catalog: tool 'Shop.signup' appears twice",
    ),
    (
        "malformed parameter schema",
        _set(["catalog", "tools", 0, "parameters", "properties"], {"x": {"type": 12}}),
        "catalog: tool 'Shop.signup': field 'parameters' is not a valid JSON Schema",
    ),
    (
        "unknown format version",
        _set(["format_version"], 0),
        "format_version: library format version 0 is not one this libra reads (1, 2)",
    ),
    (
        "a newer libra's format",
        _set(["format_version"], 3),
        "format_version: the library was written by a newer libra (library format version 3; this libra reads up "
        "to 2): upgrade libra with `pip install --upgrade libra-tools`",
    ),
    (
        "format version as a string",
        _set(["format_version"], "2"),
        'format_version: library format version "2" is not one',
    ),
    ("not a library", _drop(["format"]), "format: not a libra library file"),
]

FILE_CASES: list[tuple[str, bytes, str]] = [
    ("not JSON at all", b"this is no library\n", "is not JSON (line 1, column 1"),
    ("an empty file", b"", "is empty"),
    ("only whitespace", b"\n  \n", "is empty"),
    ("a JSON array", b"[1, 2]", "not a libra library file (the file holds a JSON array"),
    ("a truncated gzip file", gzip.compress(b'{"format": "libra-library"}')[:12], "corrupt or truncated gzip"),
    ("an integer beyond Python's digit limit", b'{"format": ' + b"1" * 5000 + b"}", "cannot be parsed (ValueError"),
    ("nesting beyond the parser's depth", b"[" * 200_000 + b"]" * 200_000, "cannot be parsed (RecursionError"),
]


def _expected(doc: dict[str, Any], text: str) -> str:
    return text.replace("{v}", str(_value(doc))).replace("{s}", str(_state(doc)))


def _broken(shop_doc: dict[str, Any], mutate: Mutation, path: Path) -> None:
    doc = copy.deepcopy(shop_doc)
    mutate(doc)
    path.write_text(json.dumps(doc))


def _show(path: Path, capsys) -> tuple[int, str]:
    """``libra show PATH`` in this process: exit status and stderr."""
    with pytest.raises(SystemExit) as exc:
        main(["show", str(path)])
    return int(exc.value.code), capsys.readouterr().err


@pytest.mark.parametrize(
    "case,mutate,field", SCHEMA_CASES + SEMANTIC_CASES, ids=[c[0] for c in SCHEMA_CASES + SEMANTIC_CASES]
)
def test_a_broken_library_is_refused_naming_the_field(shop_doc, tmp_path, capsys, case, mutate, field) -> None:
    path = tmp_path / "library.json"
    _broken(shop_doc, mutate, path)
    expected = f"{path}: {_expected(shop_doc, field)}"
    with pytest.raises(LibraryFormatError) as exc:
        Library.load(path)
    assert str(exc.value).startswith(expected), str(exc.value)
    code, err = _show(path, capsys)
    assert code == 2 and err == f"error: {exc.value}\n"
    assert "\n" not in str(exc.value) and len(str(exc.value)) < 400


@pytest.mark.parametrize("case,mutate,field", SCHEMA_CASES, ids=[c[0] for c in SCHEMA_CASES])
def test_the_shipped_schema_refuses_the_same_documents(shop_doc, case, mutate, field) -> None:
    """The loader's fast path (references inlined, candidate columns checked in bulk) agrees with the schema file."""
    doc = copy.deepcopy(shop_doc)
    mutate(doc)
    assert _shipped_errors(doc), f"the shipped schema accepts: {case}"
    assert not library_validator().is_valid(doc)


@pytest.mark.parametrize("case,raw,message", FILE_CASES, ids=[c[0] for c in FILE_CASES])
def test_a_file_that_holds_no_library_is_refused_in_one_line(tmp_path, capsys, case, raw, message) -> None:
    path = tmp_path / "library.json"
    path.write_bytes(raw)
    with pytest.raises(LibraryFormatError, match=message.replace("(", r"\(")):
        Library.load(path)
    code, err = _show(path, capsys)
    assert code == 2 and err.startswith("error: ") and err.count("\n") == 1 and message in err, err


def test_a_version_1_library_is_checked_too(shop_doc, tmp_path) -> None:
    v1 = _v1(shop_doc)
    (tmp_path / "v1.json").write_text(json.dumps(v1))
    assert len(Library.load(tmp_path / "v1.json").candidates) == len(shop_doc["candidates"]["provider"])
    v1["candidates"][3][2] = 99
    (tmp_path / "v1.json").write_text(json.dumps(v1))
    with pytest.raises(LibraryFormatError, match=r"v1.json: candidates\[3\]: expected \[provider index"):
        Library.load(tmp_path / "v1.json")
    assert _shipped_errors({**v1, "candidates": [[0, "x", 1, "y"]]}), "a short row breaks the schema too"


def test_an_edit_after_a_successful_load_is_caught(shop_doc, tmp_path, monkeypatch) -> None:
    """A file that passed once is not checked again, but any edit to it is (the skip is keyed by its bytes)."""
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))
    markers = tmp_path / "cache" / "checked-libraries"
    path = tmp_path / "library.json"
    path.write_text(json.dumps(shop_doc))
    Library.load(path)
    assert len(list(markers.iterdir())) == 1  # the bytes that passed
    Library.load(path)
    assert len(list(markers.iterdir())) == 1
    doc = copy.deepcopy(shop_doc)
    del doc["relations"][0]["provider"]
    path.write_text(json.dumps(doc))
    with pytest.raises(LibraryFormatError, match=r"relations\[0\]\.provider: required property missing"):
        Library.load(path)
    with pytest.raises(LibraryFormatError, match=r"relations\[0\]\.provider"):
        Library.from_dict(doc, source="doc")  # the Python API checks every document it is given
    assert len(list(markers.iterdir())) == 1  # nothing is remembered for a file that failed


# ---------------------------------------------------------------------------------------------------------------
# Every command that takes a library
# ---------------------------------------------------------------------------------------------------------------


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "libra.cli", *args], capture_output=True, text=True, timeout=300, cwd=ROOT, check=False
    )


def _one_error_line(out: subprocess.CompletedProcess[str], field: str) -> None:
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert out.stderr.startswith("error: ") and out.stderr.count("\n") == 1 and "Traceback" not in out.stderr, (
        out.stderr
    )
    assert field in out.stderr, out.stderr


def test_show_explain_and_retrieve_refuse_a_broken_library(shop_doc, tmp_path) -> None:
    path = tmp_path / "library.json"
    _broken(shop_doc, _drop(["relations", 3, "provider"]), path)
    for args in (("show", str(path)), ("explain", str(path), "Shop.login"), ("retrieve", str(path), "add an item")):
        _one_error_line(_cli(*args), "relations[3].provider: required property missing")
    _broken(shop_doc, _set(["relations"], 5), path)
    _one_error_line(_cli("retrieve", str(path), "add an item"), "relations: expected array, found integer 5")


@needs_bfcl
def test_eval_refuses_a_broken_library_before_any_method_runs(shop_doc, tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "library.json"
    _broken(shop_doc, _drop(["catalog"]), path)
    out = _cli("eval", "bfcl", "--method", "bm25", "--method", "libra", "--library", str(path))
    _one_error_line(out, "catalog: required property missing")
    # in this process, recording which methods start (each still runs for real)
    from libra.eval import runner

    started: list[str] = []
    real = runner.run_method
    monkeypatch.setattr(runner, "run_method", lambda m, *a, **kw: started.append(m) or real(m, *a, **kw))
    with pytest.raises(SystemExit) as exc:
        main(["eval", "bfcl", "--method", "bm25", "--method", "libra", "--library", str(path)])
    assert exc.value.code == 2 and "catalog: required property missing" in capsys.readouterr().err
    assert started == [], "a method ran before the library was checked"
