"""Default build budgets and the :class:`BuildConfig` that carries them, in a module light enough for the CLI to
import when it renders ``--help``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_MAX_CALLS", "DEFAULT_MAX_DEPTH", "DEFAULT_RETRY_SHARE", "BuildConfig"]

DEFAULT_MAX_CALLS = 400_000  # executed invocations in total (memo hits are free)
DEFAULT_MAX_DEPTH = 3  # longest chain of state-changing calls from the fresh state
# Calls the retries of failed calls may execute, as a share of the build's max_calls, on top of it (see
# libra.induction.explore.retries). Why a hundredth: on a small catalog the retries never come near it; on a large one
# most failed calls fail for the state, not for the value, so retries find far fewer relations per call than the
# exploration, and they run between waves, where no other call overlaps them. A small share keeps what they add
# (the folder-or-file cases of the generalization suite) at a bounded cost; builds report their counters in
# stats.engine (calls_retries, retry_relations) so a user can raise it.
DEFAULT_RETRY_SHARE = 0.01


@dataclass
class BuildConfig:
    """Budgets and thresholds of one build; every field is recorded in the library's metadata."""

    tau: float = 0.75  # field-name alignment needed for a compatibility relation (cosine of name embeddings)
    max_calls_per_tool: int = 400  # candidate-binding work items executed per tool
    # ...of values from another tool group (another app, class or module), on a budget of their own: a separate
    # source's values seldom fit, and must not take the offers a consumer's own group's values need (a build of
    # several unrelated modules then spends on each module's values what its own build would). A quarter of the
    # own budget: the candidates are ranked by name fit, and the few that fit come first.
    cross_group_offers_per_tool: int = 100
    max_probes_per_tool: int = 300  # unbound probes (a template re-run from a new state) executed per tool
    max_calls: int = DEFAULT_MAX_CALLS  # executed invocations in total (memo hits are free)
    # Executed invocations the retries of failed calls may add, on top of max_calls (None: a share of it, see
    # libra.induction.explore.retries.retry_budget; 0: no retries, the exploration alone).
    max_retry_calls: int | None = None
    max_depth: int = DEFAULT_MAX_DEPTH  # longest chain of state-changing calls from the fresh state
    sweeps_per_tool: int = 8  # state-changing calls per provider and depth that get the full before/after sweep
    # ...of which this many also sweep the tools of other groups; the rest sweep the provider's own group. In a
    # catalog of separate apps or classes one group's state change seldom enables another group's calls, yet the
    # cross-group part is most of a large catalog's sweep cost; one sweep per provider and depth still finds a
    # cross-group dependency that any of its state changes creates.
    cross_group_sweeps_per_tool: int = 1
    tests_per_pair: int = 3  # counterfactual tests per (provider, field, consumer, input) before giving up
    offers_per_pair: int = 8  # values offered per (provider field, consumer input) before the pair is left alone
    state_offers_per_pair: int = 4  # offers beyond that per (state creator, consumer input), as state tests only
    values_per_export: int = 3  # values one call contributes per export (list elements beyond are alike)
    # Offers to numbers the template fills with a literal, per consumer tool: numbers are everywhere (prices,
    # temperatures, counts) and most numeric inputs take any of them, so these tests queue behind the other
    # offers and have their own budget instead of spending the consumer's budget of id and name offers.
    number_offers_per_tool: int = 40
    fill_alignment: float = 0.5  # name similarity an incidental fill needs (candidate tests themselves need none)
    # Who provides a value: "export" credits every successful call that exports it, arguments included (the
    # paper's Algorithm 1, line 24); "origin" credits only the call that put it into the state, so a read that
    # hands back its input, or an action that re-states a known value, provides nothing.
    credit: str = "origin"
    seed: int = 0
    batch_size: int = 512
    checkpoint_every_s: float = 20.0

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)
