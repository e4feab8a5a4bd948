"""Contracts proposed by an LLM (paper Appendix A), the prompt templates it is given, and a stub OpenAI-compatible
server that answers like one, for tests and cost benchmarks."""

from libra._util.lazy import exports

__all__ = ["LLMConfig", "LLMProposer", "LLMProposerError", "make_llm_proposer"]
__getattr__, __dir__ = exports(__name__, {name: ".proposer" for name in __all__})
