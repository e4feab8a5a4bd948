"""``toolreagt``: a ReAct agent that searches with one tool, ``tool_retriever(input)`` (paper Figures 2, 15, 16).

Why it looks like this (prompts rewritten in libra's words):

- The agent sees the task and a single tool whose description names the retrieval backend (``--base``: any other
  method, ``libra`` by default -- the paper's agentic LIBRA row). Each turn is one *iteration*: the model writes a
  Thought and either an Action on ``tool_retriever`` with a JSON ``{"input": query}`` or a final Answer. The
  retriever's top tools (name and description) come back as the next Observation, appended to the same
  conversation as LlamaIndex's ReAct agent does. The loop ends at an Answer or after ``max_iterations`` (10).
- The candidate set is what the agent retrieved, nothing else (its Answer is not parsed for tools): the union of
  every retrieval so far, ranked by the best rank a tool reached in any retrieval, ties going to the earlier
  retrieval. This interleaves the agent's searches (every search's first tool, then every second...), so a
  later, more specific query can still place its best tool near the top; the paper does not spell the merge out
  and this is libra's reading. The set is cut to the method's candidate depth, like every other method.
- Figure 2 / 17 curves: the candidate set after each iteration is kept (:attr:`ToolReAGtRetriever.by_iteration`);
  an episode that stopped early keeps its final set for the remaining iterations.
- Any reply is survived and recorded: no Action and no Answer, unreadable Action Input, a tool other than
  ``tool_retriever`` (for instance a catalog tool's name) each get an error Observation and cost the iteration;
  a call whose retries ran out ends the episode with what was retrieved. An agent that never searched gets the
  base retriever's ranking for the task text itself, recorded as a fallback.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from libra.catalog import Catalog
from libra.eval.baselines.common import LLMRun, strip_reasoning
from libra.llm.client import ReplyError, parse_json_object

TOOL_NAME = "tool_retriever"
MAX_ITERATIONS = 10
#: How the retriever is described to the agent, by kind of backend (Figure 16, libra's words).
DESCRIPTIONS = {
    "catalog": (
        "Searches the whole tool catalog with a short natural-language query and returns the best-matching tools "
        "with their descriptions."
    ),
    "graph": (
        "Searches a knowledge graph of the tools with a short natural-language query and returns the tools found "
        "in the ego graphs it matches."
    ),
    "library": (
        "Searches a library of tool dependencies that were checked by execution, with a short natural-language "
        "query, and returns a ranked list of tools."
    ),
}
BACKEND_KIND = {
    "ego-trip": "graph",
    "libra": "library",
    "libra-dense": "library",
    "libra-hybrid": "library",
    "schema-only": "library",
}
SYSTEM = """You help with many kinds of tasks and may call tools to do so.

## Tools
You may use the tools below in whatever order the task needs, splitting the task into smaller steps and using a tool for each step when that helps.

{tool_desc}

## Format
Write every turn like this:

Thought: what you need to do next.
Action: the tool to call (one of {tool_names}).
Action Input: the tool's arguments as a JSON object, for example {{"input": "find flights from Paris"}}

Always begin with a Thought and never wrap the turn in code fences. The Action Input must be valid JSON with double quotes. The tool's reply comes back as

Observation: the tool's output

Repeat this until you need no more tools, then finish with one of

Thought: I have what I need.
Answer: your answer

Thought: the tools I can reach cannot solve this.
Answer: your answer"""  # noqa: E501 - the prompt is text the model reads, with its own line breaks
USER = (
    'Here is a complex task: "{task}". Choose the tools best suited to solve it. You only learn which tools '
    'exist by calling "{tool}" with a well-chosen search query, so call it before you choose.'
)
_ACTION = re.compile(r"^\s*Action\s*:\s*(.+?)\s*$", re.M)
_INPUT = re.compile(r"Action\s*Input\s*:\s*(.*)", re.S)
_ANSWER = re.compile(r"^\s*Answer\s*:", re.M)


def tool_description(base: str) -> str:
    desc = DESCRIPTIONS[BACKEND_KIND.get(base, "catalog")]
    args = json.dumps({"type": "object", "properties": {"input": {"type": "string"}}, "required": ["input"]})
    return f"> Tool Name: {TOOL_NAME}\nTool Description: {desc}\nTool Args: {args}"


def first_messages(task: str, base: str) -> list[dict[str, str]]:
    system = SYSTEM.format(tool_desc=tool_description(base), tool_names=TOOL_NAME)
    return [{"role": "system", "content": system}, {"role": "user", "content": USER.format(task=task, tool=TOOL_NAME)}]


class Step:
    """One parsed agent turn: a search query, a final answer, or a problem to report back."""

    def __init__(
        self, query: str | None = None, answer: bool = False, problem: str | None = None, kind: str = ""
    ) -> None:
        self.query, self.answer, self.problem, self.kind = query, answer, problem, kind


def parse_step(text: str | None) -> Step:
    body = strip_reasoning(text)
    body = body.split("Observation:", 1)[0]  # a model that writes its own Observation is cut there
    action = _ACTION.search(body)
    answer = _ANSWER.search(body)
    if action is None or (answer is not None and answer.start() < action.start()):
        if answer is not None:
            return Step(answer=True)
        return Step(problem="the turn has neither an Action nor an Answer", kind="format")
    name = action.group(1).strip().strip("`'\"")
    if name != TOOL_NAME:
        return Step(problem=f"there is no tool {name!r}: the only tool is {TOOL_NAME}", kind="unknown_tool")
    m = _INPUT.search(body, action.end())
    if m is None:
        return Step(problem="the Action has no Action Input", kind="format")
    try:
        args = parse_json_object(m.group(1))
    except ReplyError as exc:
        return Step(problem=f"the Action Input is not a JSON object ({exc})", kind="input")
    query = args.get("input")
    if not isinstance(query, str):
        strings = [v for v in args.values() if isinstance(v, str)]
        query = strings[0] if len(strings) == 1 else None
    if not query or not query.strip():
        return Step(problem='the Action Input needs a string "input"', kind="input")
    return Step(query=query.strip())


def merge(retrievals: Sequence[Sequence[str]], depth: int) -> list[str]:
    """Union of the retrievals, by best rank reached, ties to the earlier retrieval; cut to ``depth``."""
    best: dict[str, tuple[int, int]] = {}
    for call, ranking in enumerate(retrievals):
        for pos, name in enumerate(ranking):
            if name not in best or (pos, call) < best[name]:
                best[name] = (pos, call)
    return sorted(best, key=lambda n: best[n])[:depth]


class ToolReAGtRetriever:
    """The agent over a fitted base retriever; ``retrieve`` runs one episode per query."""

    name = "toolreagt"

    def __init__(
        self,
        run: LLMRun,
        base: Any,
        base_name: str,
        search: Callable[[list[str], int], list[list[str]]],
        max_iterations: int = MAX_ITERATIONS,
        depth: int = 20,
    ) -> None:
        self.run = run
        self.base = base
        self.base_name = base_name
        self._search = search
        self._search_lock = threading.Lock()  # base retrievers are not promised to be thread-safe
        self.max_iterations = max_iterations
        self.depth = depth
        self.catalog: Catalog | None = None
        self.by_iteration: list[list[list[str]]] = []  # per query, per iteration: the candidate set
        self.iterations: list[int] = []  # per query: agent turns taken (LLM calls)
        self.searches: list[int] = []

    def fit(self, catalog: Catalog) -> ToolReAGtRetriever:
        self.catalog = catalog
        return self

    def _retrieve_one(self, depth: int, pos: int, task: str) -> tuple[list[list[str]], int, int]:
        messages = first_messages(task, self.base_name)
        retrievals: list[list[str]] = []
        sets: list[list[str]] = []
        item = f"task {pos + 1}"
        done = False
        turns = 0
        for it in range(self.max_iterations):
            if done:
                sets.append(sets[-1] if sets else [])
                continue
            reply, err = self.run.ask(messages)
            turns += 1
            if err is not None:
                self.run.fallback(item, f"iteration {it + 1}", f"{err}; the episode ends with what was retrieved")
                done = True
                sets.append(merge(retrievals, depth))
                continue
            step = parse_step(reply)
            turn = (reply or "").split("Observation:", 1)[0].rstrip()
            if step.answer:
                done = True
            elif step.problem is not None:
                self.run.unusable()
                self.run.fallback(item, f"iteration {it + 1}", f"{step.kind}: {step.problem}")
                messages = [
                    *messages,
                    {"role": "assistant", "content": turn},
                    {
                        "role": "user",
                        "content": (
                            f"Observation: Error: {step.problem}. Follow the format: Thought, Action, Action Input."
                        ),
                    },
                ]
            else:
                with self._search_lock:
                    found = self._search([step.query or ""], depth)[0]
                retrievals.append(found)
                assert self.catalog is not None
                observation = [{"name": n, "description": self.catalog[n].description} for n in found]
                messages = [
                    *messages,
                    {"role": "assistant", "content": turn},
                    {"role": "user", "content": "Observation: " + json.dumps(observation, ensure_ascii=False)},
                ]
            sets.append(merge(retrievals, depth))
        if not retrievals:
            self.run.fallback(
                item, "episode", "the agent never called tool_retriever: the base ranking of the task text is used"
            )
            with self._search_lock:
                fallback = self._search([task], depth)[0]
            sets = [fallback for _ in sets] or [fallback]
        return sets, turns, len(retrievals)

    def retrieve(self, queries: Sequence[str], depth: int | None = None) -> list[list[str]]:
        d = depth or self.depth
        results = self.run.map(lambda pair: self._retrieve_one(d, pair[0], pair[1]), list(enumerate(queries)))
        self.by_iteration = [r[0] for r in results]
        self.iterations = [r[1] for r in results]
        self.searches = [r[2] for r in results]
        return [sets[-1] for sets in self.by_iteration]

    def report(self) -> dict[str, Any]:
        n = max(len(self.searches), 1)
        return {
            **self.run.report(),
            "base": self.base_name,
            "max_iterations": self.max_iterations,
            "turns_per_task": round(sum(self.iterations) / n, 3),
            "searches_per_task": round(sum(self.searches) / n, 3),
        }
