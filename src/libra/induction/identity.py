"""What names a build's output beside its catalog: which configuration fields only pace its bookkeeping, and what
identifies the proposer whose contracts it starts from. The build's cache key and the library's fingerprints
(:mod:`.fingerprints`) both read it, so an update refuses evidence exactly when a new build would not reuse it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from libra.contracts.registry import Proposer

__all__ = ["BOOKKEEPING_FIELDS", "PROPOSER_SETTINGS", "proposer_identity"]


#: BuildConfig fields that only pace the build's own bookkeeping: no value of them changes the library built.
BOOKKEEPING_FIELDS: tuple[str, ...] = ("checkpoint_every_s",)
#: Settings of a model-backed proposer (its ``config``) that decide what the model answers: the endpoint, the
#: model and the sampling and prompt settings. Keys, reply caches, timeouts, retries and concurrency only change
#: how the same replies are fetched, so they stay out of a build's key (a rotated API key must not rebuild).
PROPOSER_SETTINGS: tuple[str, ...] = (
    "base_url",
    "model",
    "temperature",
    "max_tokens",
    "json_mode",
    "rules",
    "calling_convention",
)


def proposer_identity(proposer: str | Proposer) -> dict[str, Any]:
    """What names a proposer's output: its name plus, for a model-backed one, the :data:`PROPOSER_SETTINGS` of
    its ``config``. A registered name and an instance of the same proposer get the same identity."""
    if isinstance(proposer, str):
        return {"name": proposer}
    kind = type(proposer)
    out: dict[str, Any] = {"name": getattr(proposer, "name", None) or f"{kind.__module__}.{kind.__qualname__}"}
    config = getattr(proposer, "config", None)
    for key in PROPOSER_SETTINGS:
        if hasattr(config, key):
            out[key] = getattr(config, key)
    return out
