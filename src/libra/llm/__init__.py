"""One chat call to an OpenAI-compatible endpoint, with retries, a reply cache and counters."""

from libra._util.lazy import exports

__all__ = ["ChatClient", "ChatConfig", "ChatStats", "LLMEndpointError"]
__getattr__, __dir__ = exports(__name__, {name: ".client" for name in __all__})
