"""The paper's LLM-built retrieval methods (Table 2 baselines and the agentic setting of Figure 2).

- ``toolrex`` (:mod:`.toolrex`): an LLM writes a profile per tool, a second call checks it against the metadata,
  a rejected profile is rewritten once; the tool document plus profile is embedded like ``dense``.
- ``tgr-adapt`` (:mod:`.tgr`): an LLM labels the dependency of tool pairs; TGR's parameter-free graph convolution
  mixes the frozen tool embeddings along the labelled edges.
- ``ego-trip`` (:mod:`.egotrip`): an LLM extracts head-relation-tail triples per tool; a dense search over the
  graph picks entry points and returns the tools of their one-hop ego graphs.
- ``toolreagt`` (:mod:`.toolreagt`): a ReAct agent with one tool, ``tool_retriever(input)``, backed by any other
  method (``--base``, default ``libra``), for up to ten iterations.

They all need an OpenAI-compatible endpoint; :data:`ENABLE_HINT` is the line that says how to give one. Every call
goes through :class:`libra.llm.client.ChatClient` (cache, retries, counters); what is built once per catalog
(profiles, pair labels, triples) is stored beside the reply cache (:mod:`.common`).
"""

from __future__ import annotations

LLM_METHODS: tuple[str, ...] = ("ego-trip", "tgr-adapt", "toolreagt", "toolrex")
AGENTIC_METHODS: tuple[str, ...] = ("toolreagt",)
ENABLE_HINT = (
    "needs an OpenAI-compatible endpoint: add --llm-base-url URL --llm-model MODEL [--llm-cache DIR] (API key "
    "from $LIBRA_LLM_API_KEY or $OPENAI_API_KEY)"
)

__all__ = ["AGENTIC_METHODS", "ENABLE_HINT", "LLM_METHODS"]
