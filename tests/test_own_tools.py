"""Your own tools without adapter code: ``build --tools``, ``@libra.tool``, project files, ``eval --tasks``.

Every build here is real: the tools in ``tests/fixtures/shop_tools.py`` and ``shop_factory.py`` are ordinary code
(a sign-in that gates a cart, a search whose ids the cart takes) and every relation asserted was found by
executing them. The CLI runs in-process through :func:`libra.cli.main.main`, as the ``libra`` script does.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from libra import tool
from libra.cli.main import main
from libra.errors import ConfigError
from libra.library.artifact import Library
from libra.sources.python import PythonSource, parse_spec
from tests.fixtures import shop_tools

ROOT = Path(__file__).resolve().parents[1]
FACTORY_FILE = "tests/fixtures/shop_factory.py"


@pytest.fixture(autouse=True)
def _cwd_and_cache(tmp_path, monkeypatch):
    """Sources are named relative to the checkout, as a user names them relative to their project."""
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("LIBRA_CACHE_DIR", str(tmp_path / "cache"))


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(argv)
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def _edges(path: Path) -> set[tuple[str, str, str, str | None]]:
    lib = Library.load(path)
    return {(r.provider, r.consumer, r.kind, r.consumer_input) for r in lib.relations}


def _build(capsys, *args: str, out: Path) -> Library:
    code, _, err = _run(["build", *args, "--out", str(out), "--quiet"], capsys)
    assert code == 0, err
    return Library.load(out)


# -- sources and names ----------------------------------------------------------------------------------------
def test_module_of_functions_builds_in_isolated_workers_with_bare_names(tmp_path, capsys):
    out = tmp_path / "shop.json"
    lib = _build(capsys, "--tools", "tests.fixtures.shop_tools", "--workers", "1", out=out)
    assert lib.catalog.names == ["search_products", "get_product", "login", "add_to_cart", "checkout", "order_status"]
    edges = _edges(out)
    # the sign-in gates the cart (its token, from the module's FIXTURES account), the search gives the product id
    assert ("login", "add_to_cart", "provenance", "access_token") in edges
    assert ("search_products", "add_to_cart", "provenance", "product_id") in edges
    assert ("add_to_cart", "checkout", "state", None) in edges
    assert lib.meta["fixtures"] == ["password", "username"]
    # show / explain / retrieve work on the result like on any library
    code, stdout, err = _run(["explain", str(out), "add_to_cart"], capsys)
    assert code == 0 and "login" in stdout and "search_products" in stdout, err
    code, stdout, err = _run(
        ["retrieve", str(out), "put the blue mug in my cart", "--k", "3", "--json", str(tmp_path / "r.json")], capsys
    )
    assert code == 0, err
    ranked = json.loads((tmp_path / "r.json").read_text())
    assert "add_to_cart" in json.dumps(ranked)


def test_class_source_uses_its_methods_and_the_decorators_examples(tmp_path, capsys):
    out = tmp_path / "warehouse.json"
    lib = _build(capsys, "--tools", "tests.fixtures.shop_tools:Warehouse", "--workers", "0", out=out)
    assert lib.catalog.names == ["restock", "stock_level"]
    assert lib.catalog["stock_level"].metadata == {"annotations": {"readOnlyHint": True}}
    # stock_level("p-100") (its example) fails on the empty warehouse and works once restock ran; the sku restock
    # was given is what stock_level then needs (another sku fails)
    assert _edges(out) == {("restock", "stock_level", "state", None), ("restock", "stock_level", "provenance", "sku")}
    # the example is the value contract checking calls it with first; refused on the empty warehouse by a message
    # naming the sku, the input is then observed (filled with the skus restock was given)
    assert lib.contracts["stock_level"]["templates"][0]["arguments"]["sku"]["kind"] == "observation"


def test_factory_in_a_file_makes_the_instance(tmp_path, capsys):
    out = tmp_path / "priced.json"
    lib = _build(capsys, "--tools", f"{FACTORY_FILE}:make_shop", "--workers", "0", out=out)
    assert lib.catalog.names == ["search_products", "quote"]
    assert ("search_products", "quote", "provenance", "product_id") in _edges(out)
    # the instance came from the factory (quotes in euros), not from calling the class
    state = None
    from libra.sources.python import make_tools_runtime

    runtime = make_tools_runtime((f"{FACTORY_FILE}:make_shop",), str(ROOT))
    state = runtime.fresh()
    record, _ = runtime.invoke(state, "quote", {"product_id": "p-100"})
    assert record.output == {"price": 12.5, "currency": "EUR"}


def test_clashing_names_are_qualified_and_namespaces_prefix():
    both = (
        PythonSource([parse_spec("tests.fixtures.shop_tools"), parse_spec(f"{FACTORY_FILE}:make_shop")]).catalog().names
    )
    assert "shop_tools.search_products" in both and "PricedShop.search_products" in both
    assert "search_products" not in both and "quote" in both and "login" in both  # only the clash is qualified
    spaced = (
        PythonSource([parse_spec("shop=tests.fixtures.shop_tools"), parse_spec(f"{FACTORY_FILE}:make_shop")])
        .catalog()
        .names
    )
    assert {"shop.search_products", "shop.get_product", "shop.login", "search_products", "quote"} <= set(spaced)
    with pytest.raises(ConfigError, match="published twice"):
        PythonSource([parse_spec("x=tests.fixtures.shop_tools"), parse_spec(f"x={FACTORY_FILE}:make_shop")])


def test_decorator_keeps_calling_and_puts_examples_in_the_contract():
    assert shop_tools.search_products("mug") == {"products": [{"product_id": "p-100", "title": "Blue ceramic mug"}]}
    catalog = PythonSource([parse_spec("tests.fixtures.shop_tools")]).catalog()
    search = catalog["search_products"]
    assert search.parameters["properties"]["query"]["examples"] == ["mug", "lamp"]
    assert search.group == "catalog" and catalog["login"].group == "shop_tools"

    def plain(a: int, b: int = 2) -> int:
        return a + b

    assert tool(plain) is plain and tool(group="math")(plain)(1) == 3
    with pytest.raises(TypeError, match="not one of its parameters"):
        tool(examples={"c": [1]})(plain)
    with pytest.raises(TypeError, match="non-empty list"):
        tool(examples={"a": 1})(plain)


# -- project files --------------------------------------------------------------------------------------------
def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_project_file_builds_with_its_options_and_paths_relative_to_it(tmp_path, capsys):
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "pricing.py").write_text((ROOT / FACTORY_FILE).read_text())
    config = _write(
        tmp_path / "libra.toml",
        (
            'name = "mixed"\n'
            '[[python]]\ntools = "tests.fixtures.shop_tools"\nnamespace = "shop"\n'
            '[[python]]\ntools = "tools/pricing.py:make_shop"\n'
            "[build]\nworkers = 0\nmax-depth = 2\ntau = 0.8\n"
        ),
    )
    out = tmp_path / "lib.json"
    lib = _build(capsys, "--config", str(config), out=out)
    assert lib.catalog.name == "mixed"
    assert {"shop.login", "shop.add_to_cart", "search_products", "quote"} <= set(lib.catalog.names)
    assert ("shop.login", "shop.add_to_cart", "provenance", "access_token") in _edges(out)
    assert lib.meta["config"]["max_depth"] == 2 and lib.meta["config"]["tau"] == 0.8
    # an option on the command line wins over the file's
    lib2 = _build(capsys, "--config", str(config), "--max-depth", "1", out=tmp_path / "lib2.json")
    assert lib2.meta["config"]["max_depth"] == 1


def test_pyproject_tool_libra_section(tmp_path, capsys):
    config = _write(
        tmp_path / "pyproject.toml",
        (
            '[project]\nname = "demo"\n'
            '[[tool.libra.python]]\ntools = "tests.fixtures.shop_tools:Warehouse"\n'
            "[tool.libra.build]\nworkers = 0\n"
        ),
    )
    out = tmp_path / "lib.json"
    lib = _build(capsys, "--config", str(config), out=out)
    assert lib.catalog.names == ["restock", "stock_level"]
    assert ("restock", "stock_level", "state", None) in _edges(out)


@pytest.mark.parametrize(
    "text,words",
    [
        (
            '[[python]]\ntools = "tests.fixtures.shop_tools"\n[build]\nmax_calls = 10\n',
            ["unknown key 'max_calls'", "'max-calls'"],
        ),
        ('[[python]]\ntols = "tests.fixtures.shop_tools"\n', ["unknown key 'tols'", "'tools'"]),
        (
            '[[python]]\ntools = "tests.fixtures.shop_tools"\n[build]\nmax-calls = 0\n',
            ["max-calls", "positive integer"],
        ),
        ('[[python]]\ntools = "tests.fixtures.shop_tools"\n[build]\nembedder = "nope"\n', ["embedder"]),
        ('[[mcp]]\nname = "git"\nargs = ["--repository", "{sandbox}"]\n', ["missing key 'command'"]),
        ('[[mcp]]\nname = "git"\ncommand = "mcp-server-git"\nenvv = {}\n', ["unknown key 'envv'", "'env'"]),
        ('[[mcp]]\nname = "web"\nurl = "ftp://host"\n', ["url"]),
        ('[[mcp]]\nname = "web"\nurl = "http://127.0.0.1:9/mcp"\nstate = "memory"\n', ["[[mcp]] web", "'state'"]),
        (
            '[[mcp]]\nname = "git"\ncommand = "mcp-server-git"\nrestart_on_restore = "yes"\n',
            ["'restart_on_restore'", "true or false"],
        ),
        (
            '[[python]]\ntools = "tests.fixtures.shop_tools"\n[sandbox]\ntemplate = "no/such/dir"\n',
            ["template", "not a directory"],
        ),
        ('[[python]]\ntools = "tests.fixtures.nope"\n', ["no module named 'tests.fixtures.nope'"]),
        ('name = "x"\n', ["names no tools"]),
        ("[[python]\n", ["not valid TOML"]),
        (
            '[[python]]\ntools = "tests.fixtures.shop_tools"\n[fixtures]\nusername = "someone"\n',
            ["username", "one value in the tool module"],
        ),
    ],
)
def test_bad_project_files_are_one_line_before_work(tmp_path, capsys, text, words):
    config = _write(tmp_path / "libra.toml", text)
    code, stdout, err = _run(["build", "--config", str(config), "--out", str(tmp_path / "lib.json")], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert all(w in err for w in words), err
    assert not (tmp_path / "lib.json").exists() and not (tmp_path / "cache").exists()


def test_mcp_servers_are_parsed_into_server_specs(tmp_path):
    from libra.sources.project import load_project

    (tmp_path / "template").mkdir()
    config = _write(
        tmp_path / "libra.toml",
        (
            '[sandbox]\ntemplate = "template"\n'
            '[[mcp]]\nname = "git"\ncommand = "mcp-server-git"\nargs = ["--repository", '
            '"{sandbox}/repo"]\nenv = { GIT_AUTHOR_NAME = "a" }\n'
            '[[mcp]]\nname = "web"\nurl = "http://127.0.0.1:9/mcp"\n'
        ),
    )
    project = load_project(config)
    assert [(s.name, s.command, s.args, dict(s.env), s.url) for s in project.mcp] == [
        ("git", "mcp-server-git", ("--repository", "{sandbox}/repo"), {"GIT_AUTHOR_NAME": "a"}, None),
        ("web", None, (), {}, "http://127.0.0.1:9/mcp"),
    ]
    assert project.sandbox.template == (tmp_path / "template").resolve()


def test_a_project_file_builds_over_an_mcp_server(tmp_path, capsys):
    """The stateful sign-in server of the MCP runtime's tests (2.x SDK, session in memory), from a project file."""
    server = ROOT / "tests" / "mcp_servers" / "signin_server.py"
    config = _write(
        tmp_path / "libra.toml",
        (
            'name = "notes"\n'
            f'[[mcp]]\nname = "notes"\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n'
            'env = { NOTES_DIR = "{sandbox}/notes" }\nstate = "process"\n'
            '[fixtures]\nusername = "alice"\npassword = "wonderland"\n'
        ),
    )
    out = tmp_path / "lib.json"
    _build(capsys, "--config", str(config), out=out)
    assert ("notes.sign_in", "notes.add_note", "provenance", "access_token") in _edges(out)


def test_python_sources_and_mcp_servers_build_together(tmp_path, capsys):
    """One project file with [[python]] and [[mcp]]: one catalog, a joint state, relations found on both sides."""
    server = ROOT / "tests" / "mcp_servers" / "signin_server.py"
    config = _write(
        tmp_path / "libra.toml",
        (
            'name = "mixed"\n'
            '[[python]]\ntools = "tests.fixtures.text_tools"\n'
            f'[[mcp]]\nname = "notes"\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n'
            'env = { NOTES_DIR = "{sandbox}/notes" }\nstate = "process"\n'
            '[fixtures]\nusername = "alice"\npassword = "wonderland"\n'
        ),
    )
    out = tmp_path / "lib.json"
    lib = _build(capsys, "--config", str(config), "--workers", "1", out=out)
    assert {"create_note", "notes.sign_in", "notes.add_note"} <= set(lib.catalog.names) and lib.catalog.name == "mixed"
    edges = _edges(out)
    assert ("notes.sign_in", "notes.add_note", "provenance", "access_token") in edges
    assert ("create_note", "read_note", "provenance", "note_id") in edges


def test_a_mixed_build_refuses_a_tool_name_on_both_sides(tmp_path, capsys):
    server = ROOT / "tests" / "mcp_servers" / "signin_server.py"
    (tmp_path / "clash_tools.py").write_text(
        'def sign_in(username: str) -> str:\n    """Sign in."""\n    return username\n'
    )
    config = _write(
        tmp_path / "libra.toml",
        (
            '[[python]]\ntools = "clash_tools"\nnamespace = "notes"\n'
            f'[[mcp]]\nname = "notes"\ncommand = {json.dumps(sys.executable)}\nargs = [{json.dumps(str(server))}]\n'
            'env = { NOTES_DIR = "{sandbox}/notes" }\n'
        ),
    )
    code, stdout, err = _run(["build", "--config", str(config), "--out", str(tmp_path / "m.json")], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1 and "notes.sign_in" in err, err


# -- bad sources ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "source,words",
    [
        ("tests.fixtures.nope_tools", ["no module named"]),
        ("tests.fixtures.shop_tools:Nope", ["has no 'Nope'"]),
        ("tests.fixtures.shop_tools:Warehous", ["did you mean 'Warehouse'"]),
        ("tests/fixtures/missing.py", ["no Python file"]),
        ("{no_tools}", ["no public functions"]),
        ("{untyped}", ["no type hint", "'item'"]),
        (f"{FACTORY_FILE}:PricedShop", ["needs constructor arguments", "factory"]),
        ("tests.fixtures.shop_tools:PRODUCTS", ["not a class or a factory"]),
        ("{broken}", ["cannot import", "ZeroDivisionError"]),
    ],
)
def test_bad_sources_are_one_line_before_work(tmp_path, capsys, source, words):
    (tmp_path / "no_tools_mod.py").write_text("LIMIT = 3\n\nclass Helper:\n    pass\n")
    (tmp_path / "untyped_mod.py").write_text("def add_item(item, count: int = 1):\n    '''Add.'''\n    return {}\n")
    (tmp_path / "broken_mod.py").write_text("RATE = 1 / 0\n")
    source = source.format(
        no_tools=tmp_path / "no_tools_mod.py", untyped=tmp_path / "untyped_mod.py", broken=tmp_path / "broken_mod.py"
    )
    code, stdout, err = _run(["build", "--tools", source, "--out", str(tmp_path / "lib.json")], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert "'--tools'" in err and all(w in err for w in words), err
    assert not (tmp_path / "lib.json").exists() and not (tmp_path / "cache").exists()


def test_build_needs_exactly_one_target(tmp_path, capsys):
    for argv in (["build"], ["build", "bfcl", "--tools", "tests.fixtures.shop_tools"]):
        code, stdout, err = _run([*argv, "--out", str(tmp_path / "lib.json")], capsys)
        assert code == 2 and stdout == "" and err.count("\n") == 1 and "give one of a benchmark name, --tools" in err, (
            err
        )


# -- your own tasks -------------------------------------------------------------------------------------------
TASKS = [
    {"id": "cart", "query": "put the blue ceramic mug in my cart", "gold": ["search_products", "login", "add_to_cart"]},
    {
        "id": "order",
        "query": "order the brass desk lamp",
        "gold": ["search_products", "login", "add_to_cart", "checkout"],
    },
    {"id": "price", "query": "how much does the linen notebook cost", "gold": ["search_products", "get_product"]},
]


@pytest.fixture(scope="module")
def shop_library(tmp_path_factory) -> Path:
    from libra.induction.build import BuildOptions, build_library

    path = tmp_path_factory.mktemp("own") / "shop.json"
    build_library(
        PythonSource([parse_spec("tests.fixtures.shop_tools")]), path, BuildOptions(workers=0, progress=False)
    )
    return path


def test_eval_on_the_librarys_own_catalog_with_a_tasks_file(shop_library, tmp_path, capsys):
    tasks = _write(tmp_path / "tasks.jsonl", "\n".join(json.dumps(t) for t in TASKS) + "\n\n")
    out = tmp_path / "res.json"
    code, stdout, err = _run(
        [
            "eval",
            "--library",
            str(shop_library),
            "--tasks",
            str(tasks),
            "--method",
            "dense",
            "--method",
            "libra",
            "--k",
            "3",
            "--json",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["n_tasks"] == 3 and data["k"] == 3 and [r["method"] for r in data["results"]] == ["dense", "libra"]
    for row in data["results"]:
        assert 0 <= row["recall"] <= 100 and 0 <= row["precision"] <= 100 and 0 <= row["ndcg"] <= 100
    assert "paper" not in stdout and "dense" in stdout and "libra" in stdout  # no published figures for your own tasks


@pytest.mark.parametrize(
    "lines,words",
    [
        (['{"id": "a", "query": "x", "gold": ["login"]}', "not json"], ["line 2", "not JSON"]),
        (['{"id": "a", "query": "x"}'], ["line 1", "missing gold"]),
        (['{"id": "a", "query": "", "gold": ["login"]}'], ["line 1", "query"]),
        (['{"id": "a", "query": "x", "gold": []}'], ["line 1", "gold"]),
        (
            ['{"id": "a", "query": "x", "gold": ["login"]}', '{"id": "a", "query": "y", "gold": ["login"]}'],
            ["line 2", "'a'"],
        ),
        (['["a", "x"]'], ["line 1", "JSON object"]),
    ],
)
def test_bad_task_lines_name_the_line(shop_library, tmp_path, capsys, lines, words):
    tasks = _write(tmp_path / "tasks.jsonl", "\n".join(lines) + "\n")
    code, stdout, err = _run(["eval", "--library", str(shop_library), "--tasks", str(tasks)], capsys)
    assert code == 2 and stdout == "" and err.count("\n") == 1 and all(w in err for w in words), err


def test_unknown_gold_names_are_refused_with_close_matches(shop_library, tmp_path, capsys):
    tasks = _write(
        tmp_path / "tasks.jsonl",
        json.dumps({"id": "a", "query": "sign in", "gold": ["log_in", "add_to_cart", "teleport"]}) + "\n",
    )
    code, stdout, err = _run(
        ["eval", "--library", str(shop_library), "--tasks", str(tasks), "--method", "dense"], capsys
    )
    assert code == 2 and stdout == "" and err.count("\n") == 1, err
    assert "log_in (did you mean login?)" in err and "teleport" in err and "add_to_cart" not in err


def test_tasks_without_a_benchmark_need_a_library(tmp_path, capsys):
    tasks = _write(tmp_path / "tasks.jsonl", json.dumps(TASKS[0]) + "\n")
    code, stdout, err = _run(["eval", "--tasks", str(tasks)], capsys)
    assert code == 2 and stdout == "" and "needs --library" in err
    code, stdout, err = _run(["eval"], capsys)
    assert code == 2 and stdout == "" and "give a benchmark name" in err


def test_tasks_file_on_a_named_benchmark_keeps_its_catalog(tmp_path, capsys):
    from libra.induction.build import BuildOptions, build_library

    from . import cli_toys  # noqa: F401 - registers shop-tasks
    from .induction_toys import ShopBenchmark

    lib = tmp_path / "toy.json"
    build_library(ShopBenchmark(), lib, BuildOptions(workers=0, progress=False))
    tasks = _write(
        tmp_path / "tasks.jsonl",
        json.dumps({"id": "x", "query": "sign in and add an item", "gold": ["Shop.login", "Shop.add_item"]}) + "\n",
    )
    out = tmp_path / "res.json"
    code, _, err = _run(
        [
            "eval",
            "shop-tasks",
            "--tasks",
            str(tasks),
            "--library",
            str(lib),
            "--method",
            "libra",
            "--k",
            "2",
            "--json",
            str(out),
        ],
        capsys,
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["benchmark"] == "shop-tasks" and data["n_tasks"] == 1
    bad = _write(tmp_path / "bad.jsonl", json.dumps({"id": "x", "query": "q", "gold": ["login"]}) + "\n")
    code, _, err = _run(["eval", "shop-tasks", "--tasks", str(bad), "--library", str(lib)], capsys)
    assert code == 2 and "login (did you mean Shop.login?)" in err, err


def test_the_readme_example_builds_from_its_file_and_its_project_file(tmp_path, capsys):
    """examples/shop is what the README builds: every tool is reached and the chains an agent needs are found."""
    out = tmp_path / "shop.json"
    lib = _build(capsys, "--tools", "examples/shop/tools.py", "--workers", "0", out=out)
    assert lib.stats["health"]["tools_never_succeeded"] == []
    edges = _edges(out)
    for edge in (
        ("login", "add_to_cart", "provenance", "access_token"),
        ("search_products", "add_to_cart", "provenance", "product_id"),
        ("add_to_cart", "checkout", "state", None),
        ("checkout", "order_status", "provenance", "order_id"),
        ("checkout", "cancel_order", "provenance", "order_id"),
    ):
        assert edge in edges, edge
    from_config = _build(capsys, "--config", "examples/shop/libra.toml", "--workers", "0", out=tmp_path / "shop2.json")
    assert from_config.catalog.name == "shop" and from_config.catalog.names == lib.catalog.names
    assert _edges(tmp_path / "shop2.json") == edges
    code, _, err = _run(
        [
            "eval",
            "--library",
            str(out),
            "--tasks",
            "examples/shop/tasks.jsonl",
            "--method",
            "dense",
            "--method",
            "libra",
            "--k",
            "5",
        ],
        capsys,
    )
    assert code == 0, err


def test_analyze_runs_on_the_librarys_catalog_with_a_tasks_file(shop_library, tmp_path, capsys):
    tasks = _write(tmp_path / "tasks.jsonl", "\n".join(json.dumps(t) for t in TASKS) + "\n")
    out = tmp_path / "analysis.json"
    code, _, err = _run(
        ["analyze", "--library", str(shop_library), "--tasks", str(tasks), "--k", "3", "--json", str(out)], capsys
    )
    assert code == 0, err
    data = json.loads(out.read_text())
    assert data["n_tasks"] == 3 and data["paper"] == {} and {r["method"] for r in data["results"]} >= {"dense", "libra"}


def test_a_dotted_module_beside_the_project_file_is_found_by_the_workers(tmp_path, capsys):
    (tmp_path / "pricing_tools.py").write_text((ROOT / FACTORY_FILE).read_text())
    config = _write(
        tmp_path / "libra.toml",
        '[[python]]\ntools = "pricing_tools:make_shop"\n[fixtures]\nregion = "eu"\n[build]\nworkers = 1\n',
    )
    out = tmp_path / "lib.json"
    lib = _build(capsys, "--config", str(config), out=out)
    assert lib.catalog.names == ["search_products", "quote"] and lib.meta["fixtures"] == ["region"]
    assert ("search_products", "quote", "provenance", "product_id") in _edges(out)
