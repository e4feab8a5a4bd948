"""The generalization suite: small catalogs written as ordinary Python apps, built with the defaults and no hints.

Why it exists: an engine tuned on three benchmarks can look good on them and find nothing on a catalog nobody
tuned it for. Each module of this package is a catalog shaped like a common app and written the way a
developer writes one: type annotations, docstrings, validation in code that raises or returns error payloads. None
of them declares a format, a pattern, an example or a response schema beyond that.

What a catalog module declares, besides its tools:

- ``DESIGNED``: the relations its author designed, as tuples
  ``(provider, consumer, kind, provider_field, consumer_input)``. ``kind`` is ``"provenance"``,
  ``"compatibility"`` or ``"state"``, or a tuple of kinds (``VALUE``) where the counterfactual could legitimately
  go either way (the module says why). ``provider_field`` names the provider's field in words (``"phone_number"``
  matches an export whose name contains those words in order, e.g. ``contacts_phone_number``), since export names
  are the proposer's; ``None`` accepts any field. ``consumer_input`` is the consumer's parameter, ``None`` any.
- ``EXCLUDED``: relations the build must not have, same shape, where ``None`` in any position means "any".
- ``FIXTURES`` (optional): facts about the fresh sandbox a caller knows (a test account).
- ``CLASSES`` (optional): the classes whose methods are the tools (one instance each); without it the module's own
  public functions are the tools, and the module's globals are their state.
- ``EXPECT_HEALTH_WARNING`` (optional): the build cannot succeed and must say so.

Tool names follow :class:`libra.runtime.python.runtime.PythonRuntime`: ``Class.method`` or ``module.function``.
"""

from __future__ import annotations

import functools
import importlib
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog

#: A designed value relation that either counterfactual outcome supports (see each use for why).
VALUE = ("provenance", "compatibility")

#: The suite's catalogs, by module name under this package.
CATALOGS = (
    "phone",
    "contacts",
    "files",
    "account",
    "clock",
    "records",
    "orders",
    "units",
    "weather",
    "notebook",
    "drafts",
    "folders",
    "workdir",
    "tickets",
    "lab",
    "player",
    "archive",
    "desk",
    "board",
)

#: Which catalog (and, in tests/test_generalization.py, which direct test) exercises each behaviour a catalog nobody
#: tuned the engine for needs, keyed by a short name of the behaviour.
COVERAGE: dict[str, str] = {
    "any valid value works": (
        "units (any valid date/timestamp works: provenance from a malformed control is excluded); contacts, files"
    ),
    "empty results are no evidence": (
        "contacts (search_messages: an empty result against a control that omits the query is excluded)"
    ),
    "booleans are tried both ways": "phone (switches start on: gates are found only from off -> on)",
    "returned values are taken": "units (timestamps and coordinates one tool returns and another takes)",
    "searches reveal records": (
        "contacts, orders, records (searches must reveal records, not conjoin invented criteria); archive (a "
        "listing's folders come first: the few elements offered are spread over it)"
    ),
    "rejections repair literals": (
        "contacts ('+' prefix), units (unit set, ISO date, >= 1980 in messages; 'e.g. Paris or Tokyo'), drafts "
        "('could not find' a piece of text; a refusal quoting two inputs blames neither), folders ('could not "
        "find' is seen only once checking and the exploration retry the equally named file after the folder), "
        "lab (a sequence's letters, two values packed into one string, a missing packed part), player ('exactly "
        "one of track_id, album_id or playlist_id': one template per input)"
    ),
    "annotations and docstrings give schemas": (
        "records (TypedDict/dataclass returns, sentinel default), units (NumPy docstrings); test_introspected_schemas"
    ),
    "entropy is fixed": (
        "files, clock, account (uuid4, datetime.now, time.time, secrets); test_identical_calls_give_identical_results"
    ),
    "module globals are state": (
        "phone, contacts, account, clock, records (module globals); test_module_globals_are_state"
    ),
    "parameters keep their $defs": "records (add_book takes a pydantic model: parameters with $defs)",
    "fixtures are known facts": "account (the test account is in FIXTURES only)",
    "literals fit their input": (
        "orders (list of TypedDict items, reasons named in the description, address1/zip exclusions); contacts; "
        "drafts (quoted alternatives without a cue); workdir (a comparison takes two different files)"
    ),
    "echoed inputs are not provided": (
        "files, clock, records, orders (reads and updates that echo their input are excluded as providers)"
    ),
    "large states stay cheap": "orders (a few-MB database); test_large_state_calls_stay_cheap, test_build_time",
    "declared response types may be wrong": "records (book_summary is annotated -> dict and returns a str)",
    "refusals reported as data": (
        "orders (error string in a list, error object in a list, verified flag, 'Database error: ...' text)"
    ),
    "builds report their health": "weather (every call needs a key nobody gave the build); test_build_health",
    "refusals met late revise literals": (
        "board (an API key the refusal sends the caller to sign_in for, a post id no post has, a reaction of the "
        "wrong form refused only once a post exists, a write's undeclared reply read on its first success)"
    ),
    "identifiers only look alike": (
        "desk (messages, meetings and documents numbered by counters of their own: another kind's number often "
        "names some record, and only the other numbers of its field show it is not the consumer's kind)"
    ),
}

RelationKey = tuple[str, str, str, "str | None", "str | None"]


def load(name: str) -> ModuleType:
    """The catalog module ``name`` of this package (imported once)."""
    return importlib.import_module(f"{__name__}.{name}")


def make_runtime(module_name: str) -> Any:
    """An in-process, trusted :class:`PythonRuntime` over one catalog module (its ``CLASSES``, or its functions)."""
    from libra.runtime.python.runtime import PythonRuntime

    module = importlib.import_module(module_name)
    short = module_name.rsplit(".", 1)[-1]
    classes = getattr(module, "CLASSES", None)
    if classes:
        return PythonRuntime(classes=list(classes), trusted=True, name=f"gen-{short}")
    return PythonRuntime(modules=[module], trusted=True, name=f"gen-{short}")


class CatalogBenchmark(Benchmark):
    """One catalog module as a :class:`Benchmark` with no tasks, so ``build_library`` drives it like any catalog."""

    def __init__(self, module: ModuleType) -> None:
        self.module = module
        self.name = "gen-" + module.__name__.rsplit(".", 1)[-1]
        self._catalog: Catalog | None = None

    def catalog(self) -> Catalog:
        if self._catalog is None:
            rt = make_runtime(self.module.__name__)
            self._catalog = rt.catalog
            rt.close()
        return self._catalog

    def tasks(self) -> list:
        return []

    def fixtures(self) -> dict[str, Any]:
        return dict(getattr(self.module, "FIXTURES", {}) or {})

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw: Any) -> Any:
        if not isolated:
            return make_runtime(self.module.__name__)
        from libra.runtime.workers.isolation import IsolatedRuntime

        return IsolatedRuntime(functools.partial(make_runtime, self.module.__name__), n_workers=n_workers, **kw)


# -- matching relations against a catalog's declarations ------------------------------------------------------


def _words(name: str) -> list[str]:
    return [w.lower() for w in re.findall(r"[A-Za-z0-9]+", name.replace("_", " "))]


def field_matches(expected: str | None, actual: str | None) -> bool:
    """``expected`` (words) occurs, in order and contiguously, among the words of the export name ``actual``."""
    if expected is None:
        return True
    if actual is None:
        return False
    want, have = _words(expected), _words(actual)
    return any(have[i : i + len(want)] == want for i in range(len(have) - len(want) + 1))


def _kinds(kind: str | Iterable[str] | None) -> tuple[str, ...] | None:
    if kind is None:
        return None
    return (kind,) if isinstance(kind, str) else tuple(kind)


def satisfies(found: RelationKey, spec: tuple) -> bool:
    """Whether the found relation ``found`` is the one ``spec`` describes (``None`` in ``spec`` matches anything)."""
    provider, consumer, kind, pfield, cinput = spec
    kinds = _kinds(kind)
    return (
        (provider is None or found[0] == provider)
        and (consumer is None or found[1] == consumer)
        and (kinds is None or found[2] in kinds)
        and field_matches(pfield, found[3])
        and (cinput is None or found[4] == cinput)
    )


def missing_relations(found: Iterable[RelationKey], designed: Iterable[tuple]) -> list[tuple]:
    """The designed relations no found relation satisfies."""
    found = list(found)
    return [spec for spec in designed if not any(satisfies(f, spec) for f in found)]


def excluded_hits(found: Iterable[RelationKey], excluded: Iterable[tuple]) -> list[tuple[tuple, RelationKey]]:
    """(excluded spec, found relation) for every found relation an exclusion describes."""
    return [(spec, f) for f in found for spec in excluded if satisfies(f, spec)]


@dataclass
class Outcome:
    """One catalog's build, matched against its declarations."""

    name: str
    library: Any
    build_s: float
    found: list[RelationKey] = field(default_factory=list)
    missing: list[tuple] = field(default_factory=list)
    hits: list[tuple[tuple, RelationKey]] = field(default_factory=list)

    @property
    def designed(self) -> int:
        return len(getattr(load(self.name), "DESIGNED", ()))

    def summary(self) -> dict[str, Any]:
        """The per-catalog figures the benchmark reports."""
        stats = getattr(self.library, "stats", {}) or {}
        return {
            "designed": self.designed,
            "found": self.designed - len(self.missing),
            "excluded_hit": len(self.hits),
            "relations_total": len(self.found),
            "build_s": round(self.build_s, 2),
            "health": stats.get("health"),
            "missing": [list(m) for m in self.missing],
            "excluded_relations_found": [list(f) for _, f in self.hits],
        }


def build(name: str, config: Any = None) -> Outcome:
    """Build catalog ``name`` with the default options and no hints, from a freshly imported module
    (``config``, a :class:`~libra.induction.config.BuildConfig`, replaces the default one for ablations).

    The module is re-imported first so that its globals are the ones its source defines, whatever earlier tests
    (or an earlier in-process build) did to them.
    """
    from libra.induction.build import BuildOptions, build_library

    module = importlib.reload(load(name))
    t0 = time.perf_counter()
    options = (
        BuildOptions(workers=0, progress=False)
        if config is None
        else BuildOptions(workers=0, progress=False, config=config)
    )
    lib = build_library(CatalogBenchmark(module), None, options)
    build_s = time.perf_counter() - t0
    found = sorted({r.key for r in lib.relations}, key=repr)
    return Outcome(
        name,
        lib,
        build_s,
        found,
        missing_relations(found, getattr(module, "DESIGNED", ())),
        excluded_hits(found, getattr(module, "EXCLUDED", ())),
    )
