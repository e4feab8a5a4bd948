"""AgentDojo's task suites, loaded from the ``agentdojo`` package with only what the suites need.

AgentDojo (``agentdojo==0.1.35``, MIT) declares the clients of every LLM vendor as dependencies (anthropic,
cohere, google-genai, langchain, openai...), but its four task suites, their tools and their environments need
none of them: only pydantic (with e-mail validation), PyYAML, docstring-parser, deepdiff and rich. What stands in
the way is one import chain: ``agentdojo.task_suite.task_suite`` imports three modules of
``agentdojo.agent_pipeline`` (the base pipeline element, the abort error and the ground-truth pipeline), whose
package ``__init__`` imports every LLM client, and the ground-truth pipeline's tool executor imports one constant
from the Google client module. :func:`_load_without_llm_clients` therefore registers the two packages
(``agentdojo.agent_pipeline`` and its ``llms``) without running their ``__init__`` (their modules still load from
AgentDojo's own files, on demand), and, when ``google-genai`` is not installed, stands in for the Google client
module with the constants that module's source defines (the tool executor needs ``EMPTY_FUNCTION_NAME``). No tool,
environment or task code is replaced: everything this benchmark reads is AgentDojo's own.

The suites are those of AgentDojo's benchmark version :data:`BENCHMARK_VERSION` (its latest, and the default of
its own benchmark script). Each suite gives:

- tools: its function registry (``TaskSuite.tools``, :class:`agentdojo.functions_runtime.Function`): name,
  description and the JSON Schema of the parameter model (``Function.parameters.model_json_schema()``, what
  AgentDojo sends to a model), nothing else;
- state: its default environment (``load_and_inject_default_environment({})``: the suite's YAML environment
  with every injection vector at its default, benign text);
- tasks: its user tasks, query = ``PROMPT``, gold = the distinct function names of
  ``ground_truth(pre_environment)`` in call order, where ``pre_environment`` is the task's
  ``init_environment`` of the default environment (as AgentDojo's own runs compute it).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from functools import cache
from typing import Any

from libra.benchmarks.base import Task
from libra.catalog import Catalog, Tool
from libra.errors import CatalogError, MissingDependencyError

AGENTDOJO_REQUIREMENT = "agentdojo==0.1.35"
INSTALL_HINT = (
    "pip install --no-deps 'agentdojo==0.1.35' && pip install 'deepdiff>=8.6.1,<10' 'pyyaml>=6.0.1' "
    "'pydantic[email]>=2.7.1'  (or run: make setup)"
)
BENCHMARK_VERSION = "v1.2.2"
SUITES: tuple[str, ...] = ("workspace", "travel", "banking", "slack")
#: import name -> distribution, for the modules the suites import (the package itself first)
REQUIRED_MODULES: dict[str, str] = {
    "agentdojo": "agentdojo",
    "deepdiff": "deepdiff",
    "yaml": "pyyaml",
    "email_validator": "email-validator",
    "docstring_parser": "docstring-parser",
    "rich": "rich",
}
_PIPELINE = "agentdojo.agent_pipeline"
_GOOGLE_CLIENT = f"{_PIPELINE}.llms.google_llm"


def require_agentdojo() -> None:
    """Raise a one-line :class:`MissingDependencyError` naming what is missing, before anything is imported."""
    missing = [dist for module, dist in REQUIRED_MODULES.items() if not _installed(module)]
    if missing:
        raise MissingDependencyError(
            f"the AgentDojo benchmarks need {', '.join(missing)} (not installed): {INSTALL_HINT}"
        )


def _installed(module: str) -> bool:
    """Whether ``module`` can be imported (a dotted name whose parent package is missing is not)."""
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def _bare_package(name: str) -> None:
    """Register package ``name`` with its search path but without running its ``__init__``."""
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.submodule_search_locations is None:
        raise MissingDependencyError(f"{name} is not a package of the installed agentdojo: {INSTALL_HINT}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)


def _module_constants(name: str) -> dict[str, Any]:
    """The top-level ``NAME = <literal>`` assignments of module ``name``'s source, without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise MissingDependencyError(f"{name} is missing from the installed agentdojo: {INSTALL_HINT}")
    with open(spec.origin, encoding="utf-8") as handle:
        tree = ast.parse(handle.read())
    constants: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError):  # not a literal (a call, a name): not a constant
                continue
    return constants


def _load_without_llm_clients() -> None:
    """Make ``agentdojo.task_suite`` importable without the LLM clients (see the module docstring)."""
    if _PIPELINE in sys.modules:
        return
    _bare_package(_PIPELINE)
    _bare_package(f"{_PIPELINE}.llms")
    if _GOOGLE_CLIENT not in sys.modules and not _installed("google.genai"):
        stand_in = types.ModuleType(
            _GOOGLE_CLIENT, "Constants of AgentDojo's Google client (the client is not installed)"
        )
        stand_in.__dict__.update(_module_constants(_GOOGLE_CLIENT))
        sys.modules[_GOOGLE_CLIENT] = stand_in


@cache
def get_suite(name: str) -> Any:
    """AgentDojo's ``TaskSuite`` called ``name`` at :data:`BENCHMARK_VERSION`."""
    if name not in SUITES:
        raise CatalogError(f"unknown AgentDojo suite {name!r}: choose one of {', '.join(SUITES)}")
    require_agentdojo()
    try:
        _load_without_llm_clients()
        load_suites = importlib.import_module("agentdojo.task_suite.load_suites")
    except ModuleNotFoundError as exc:
        raise MissingDependencyError(
            f"the AgentDojo suites cannot be loaded ({exc.name} is missing): {INSTALL_HINT}"
        ) from None
    return load_suites.get_suite(BENCHMARK_VERSION, name)


@cache
def _default_environment(name: str) -> Any:
    return get_suite(name).load_and_inject_default_environment({})


def default_environment(name: str) -> Any:
    """A new copy of the suite's default environment (its YAML environment, injection vectors at their defaults).

    The YAML is parsed and validated once per process (a third of a second for the workspace suite); callers get
    deep copies, since AgentDojo's tools and tasks change the environment they are given in place.
    """
    return _default_environment(name).model_copy(deep=True)


def function_tool(function: Any) -> Tool:
    """One AgentDojo ``Function`` as a tool: its name, description and parameter schema, as AgentDojo gives them."""
    return Tool(
        name=function.name,
        description=function.description,
        parameters=function.parameters.model_json_schema(),
    )


@cache
def load_catalog(name: str) -> Catalog:
    """The suite's tools in the order of its function registry."""
    return Catalog([function_tool(f) for f in get_suite(name).tools], name=f"agentdojo-{name}")


def load_tasks(name: str) -> list[Task]:
    """The suite's user tasks, in AgentDojo's order (see the module docstring for query and gold)."""
    suite = get_suite(name)
    names = set(load_catalog(name).names)
    tasks: list[Task] = []
    for task_id, task in suite.user_tasks.items():
        pre_environment = task.init_environment(default_environment(name))
        gold = tuple(call.function for call in task.ground_truth(pre_environment))
        unknown = [g for g in gold if g not in names]
        if unknown:
            raise CatalogError(
                f"AgentDojo {name} task {task_id} calls {unknown[0]!r}, which is not in the suite's tools: "
                f"reinstall {AGENTDOJO_REQUIREMENT}"
            )
        tasks.append(
            Task(
                id=task_id,
                query=task.PROMPT,
                gold=gold,
                metadata={"suite": name, "version": BENCHMARK_VERSION},
            )
        )
    return tasks
