"""Text embedders (the default all-MiniLM-L6-v2 int8 ONNX model, sentence-transformers, OpenAI-compatible endpoints,
feature hashing for tests), the fused ONNX graph the default runs as, and the field-name encoder of the induction."""

from libra._util.lazy import exports

__all__ = ["DEFAULT_EMBEDDER", "Embedder", "get_embedder"]
__getattr__, __dir__ = exports(__name__, {name: ".embedders" for name in __all__})
