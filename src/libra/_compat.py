"""Module paths that moved, kept importable under their old names.

Why: code written against an earlier release imports ``libra.tool_sources`` or ``libra.retrieval.graph_methods``;
those modules now live elsewhere (the package layout follows the layers in ``docs/architecture.md``). Rather than
leave a re-export file at every old place, which would put upper layers' code inside lower packages, one import
hook maps each old name to the module that replaced it: ``import libra.tool_sources`` returns the very module
object of ``libra.sources.python`` (so attributes set on it, as tests and ``libra.runtime.snapshot.WATCH = False``
do, reach the real module), with a :class:`DeprecationWarning` naming the new path.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

#: old module name -> the module that holds its names now, or the modules among which its names were shared out
MOVED: dict[str, str | tuple[str, ...]] = {
    "libra._io": "libra._util.io",
    "libra._cachedir": "libra._util.cachedir",
    "libra._interrupts": "libra._util.interrupts",
    "libra.llm_client": "libra.llm.client",
    "libra.retrieval.embedders": "libra.embeddings.embedders",
    "libra.retrieval.onnx_fusion": "libra.embeddings.onnx_fusion",
    "libra.retrieval.fields": "libra.embeddings.fields",
    "libra.library_check": "libra.library.check",
    "libra.retrieval.evidence": "libra.library.evidence",
    "libra.runtime.introspect": "libra.runtime.python.introspect",
    "libra.runtime.snapshot": "libra.runtime.python.snapshot",
    "libra.runtime.watch": "libra.runtime.python.watch",
    "libra.runtime.entropy": "libra.runtime.python.entropy",
    "libra.runtime.executor": "libra.runtime.workers.executor",
    "libra.runtime.worker": "libra.runtime.workers.worker",
    "libra.runtime.guard": "libra.runtime.workers.guard",
    "libra.runtime.sandbox": "libra.runtime.workers.sandbox",
    "libra.runtime.isolation": "libra.runtime.workers.isolation",
    "libra.runtime.remote": "libra.runtime.workers.remote",
    "libra.runtime.remote_server": "libra.runtime.workers.remote_server",
    "libra.runtime.ray_transport": "libra.runtime.workers.ray",
    "libra.runtime.lru": "libra.runtime.workers.lru",
    "libra.runtime.heap": "libra.runtime.workers.heap",
    "libra.runtime.mcp_client": "libra.runtime.mcp.client",
    "libra.runtime.sandbox_dir": "libra.runtime.mcp.sandbox_dir",
    "libra.runtime.mcp_setup": "libra.runtime.mcp.setup",
    "libra.runtime.mcp_source": "libra.sources.mcp",
    "libra.tool_sources": "libra.sources.python",
    "libra.project": "libra.sources.project",
    "libra.benchmarks.user": "libra.sources.user",
    "libra.sources.user": ("libra.sources.python", "libra.sources.mixed", "libra.eval.own_tasks"),
    "libra.induction.memo": "libra.probing.memo",
    "libra.induction.nodes": "libra.probing.nodes",
    "libra.induction.rebind": "libra.probing.rebind",
    "libra.induction.paths": "libra.probing.paths",
    "libra.induction.defaults": "libra.induction.config",
    "libra.induction.engine": "libra.induction.explore.engine",
    "libra.induction.worklist": "libra.induction.explore.worklist",
    "libra.induction.pair_counts": "libra.induction.explore.pair_counts",
    "libra.induction.retries": "libra.induction.explore.retries",
    "libra.contracts.testing_server": "libra.contracts.llm.stub_server",
    "libra.retrieval.bases": "libra.retrieval.named",
    "libra.retrieval.search_index": "libra.search.index",
    "libra.retrieval.index_key": "libra.search.index_key",
    "libra.retrieval.formats": "libra.search.formats",
    "libra.retrieval.explain": "libra.search.explain",
    "libra.retrieval.graph_methods": ("libra.eval.libraries", "libra.retrieval.graph"),
    "libra.retrieval.llm_methods": "libra.eval.baselines",
    "libra.search_options": "libra.search.options",
    "libra.gateway": "libra.serve.gateway",
    "libra.stdio_transport": "libra.serve.stdio",
    "libra.bigtool": "libra.integrations.bigtool",
    "libra.eval.iteration_plot": "libra.eval.plots",
    "libra.benchmarks.bfcl_runtime": "libra.benchmarks.bfcl.runtime",
    "libra.benchmarks.scitooleval_tools": "libra.benchmarks.scitooleval.tools",
    "libra.benchmarks.appworld_env": "libra.benchmarks.appworld.env",
    "libra.benchmarks.appworld_server": "libra.benchmarks.appworld.server",
    "libra.cli_library": "libra.cli.library",
    "libra.cli_options": "libra.cli.options",
    "libra.cli_retrieve": "libra.cli.retrieve",
    "libra.cli_serve": "libra.cli.serve",
}


def new_name(old: str) -> str | tuple[str, ...] | None:
    """Where the module once named ``old`` lives now (``None`` if it did not move); submodules of a moved package
    move with it (``libra.retrieval.llm_methods.tgr`` -> ``libra.eval.baselines.tgr``)."""
    if old in MOVED:
        return MOVED[old]
    head, _, _ = old.rpartition(".")
    while head:
        target = MOVED.get(head)
        if isinstance(target, str):
            return f"{target}.{old[len(head) + 1 :]}"
        head, _, _ = head.rpartition(".")
    return None


class _Shared(ModuleType):
    """An old module whose names now live in several modules: each name is looked up in them, in order."""

    def __init__(self, name: str, homes: tuple[str, ...]) -> None:
        super().__init__(name, f"moved: its names are in {', '.join(homes)}")
        self._homes = homes

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        for home in self._homes:
            module = importlib.import_module(home)
            if hasattr(module, attr):
                return getattr(module, attr)
        raise AttributeError(f"module {self.__name__!r} has no attribute {attr!r} (moved to {', '.join(self._homes)})")


class _Alias(importlib.abc.Loader):
    def __init__(self, target: str | tuple[str, ...]) -> None:
        self.target = target
        self._own_spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        where = self.target if isinstance(self.target, str) else " and ".join(self.target)
        warnings.warn(f"{spec.name} moved to {where}; import it from there", DeprecationWarning, stacklevel=4)
        if not isinstance(self.target, str):
            return _Shared(spec.name, self.target)
        module = importlib.import_module(self.target)
        self._own_spec = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run (the module is the target's, already imported); the import system has just given it the
        alias's spec, which would misname it to ``importlib.reload`` and pickling: it gets its own back."""
        if self._own_spec is not None:
            module.__spec__ = self._own_spec


class _MovedFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("libra."):
            return None
        to = new_name(fullname)
        if to is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(to))


def install() -> None:
    """Put the finder of moved modules on ``sys.meta_path`` (once)."""
    if not any(isinstance(f, _MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(_MovedFinder())
