"""Inputs that exclude one another, read from the tool's rejection message.

Tools often take several optional inputs of which a call must give exactly one: a player's ``play`` takes a
track, an album or a playlist id; a lookup takes an email or a phone number; a move takes a position or a relative
offset. The proposer fills every optional input in one template (and none in another), so both are refused, and
the refusal says why in the words a developer writes: "Exactly one of track_id, album_id or playlist_id must be
given, found 3", "Either none or exactly one of a, b or c should be passed", "Only one of `email` and `phone` may be
set", "either email or phone is required", "a and b are mutually exclusive". These helpers read which inputs such a
message names and whether giving none of them is allowed, and build the argument sets the message asks for: one
per named input, keeping exactly that one -- the paper's feedback loop applied to which inputs a call gives rather
than to their values. Without it such a tool is never seen succeeding, no value is ever offered to any of those
inputs, and whatever the tool's success enables (something playing, for a pause) never happens either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: Phrases that say a set of inputs excludes one another. "at most one", "only one", "none or exactly one",
#: "mutually exclusive", "not both" allow giving none; "exactly one", "one and only one", "one of ... is
#: required" and "either A or B" (see :data:`_EITHER`) do not.
_EXACT = re.compile(
    r"\b(?:exactly one|one and only one|precisely one)\b|\bone of\b.*\b(?:required|must|should|needs?)\b", re.IGNORECASE
)
#: "either A or B": only when A and B are both words right beside "either" and "or" (checked against the inputs),
#: since "either ... or ..." also joins whole clauses ("either the file is missing or it is locked").
_EITHER = re.compile(
    r"\beither\s+[`'\"]?([A-Za-z_][A-Za-z0-9_]*)[`'\"]?\s*(?:,|\bor\b)\s*[`'\"]?([A-Za-z_][A-Za-z0-9_]*)", re.IGNORECASE
)
_AT_MOST = re.compile(
    (
        r"\b(?:at most one|only one|none or (?:exactly )?one|mutually exclusive|cannot be "
        r"(?:given|passed|used|set|combined) together|not both|no more than one)\b"
    ),
    re.IGNORECASE,
)
#: A sentence: the part of a message a cue and the inputs it names share.
_SENTENCE = re.compile(r"[^.;\n]+")


@dataclass(frozen=True)
class Exclusive:
    """A set of inputs of which a call gives exactly one (``none_ok``: or none), in the message's order."""

    inputs: tuple[str, ...]
    none_ok: bool


def _named(sentence: str, params: Sequence[str]) -> list[str]:
    """The inputs of ``params`` a sentence names as whole words (quoted or not), in the order it names them."""
    found: list[tuple[int, str]] = []
    for p in params:
        m = re.search(rf"(?<![A-Za-z0-9_]){re.escape(p)}(?![A-Za-z0-9_])", sentence)
        if m is not None:
            found.append((m.start(), p))
    return [p for _, p in sorted(found)]


def exclusive_inputs(message: str, params: Sequence[str]) -> Exclusive | None:
    """The inputs a rejection says exclude one another, or None when the message is not about that.

    A sentence of the message must carry a cue (:data:`_EXACT`, :data:`_AT_MOST`) and name at least two of the
    tool's ``params``; a sentence naming only one input ("either a valid id or none") says nothing about a set.
    ``none_ok`` is whether the message allows giving none of them ("none or exactly one", "at most one").
    """
    for sentence in _SENTENCE.findall(message or ""):
        either = _EITHER.search(sentence)
        exact = _EXACT.search(sentence) or (
            either if either is not None and {either.group(1), either.group(2)} <= set(params) else None
        )
        at_most = _AT_MOST.search(sentence)
        if exact is None and at_most is None:
            continue
        named = _named(sentence, params)
        if len(named) >= 2:
            return Exclusive(tuple(named), none_ok=at_most is not None)
    return None


def exclusive_choices(
    given: Mapping[str, Any], group: Exclusive, offered: Mapping[str, Any]
) -> list[dict[str, Any]] | None:
    """Argument sets that give exactly one input of ``group``, one per input, or None when ``given`` is fine.

    ``given`` maps the inputs a refused call gave to their arguments; ``offered`` maps the group's inputs to the
    argument to use for one the call did not give (the proposer's own, from another template). A call giving
    several of the group keeps each of those in turn and drops the rest ("track and album and playlist" becomes
    "track", "album", "playlist"); a call giving none, where none is not allowed, adds each offered one in turn.
    Every other input stays as it was.
    """
    chosen = [p for p in group.inputs if p in given]
    if len(chosen) >= 2:
        keep_each = chosen
    elif not chosen and not group.none_ok:
        keep_each = [p for p in group.inputs if p in offered]
    else:
        return None
    rest = {p: v for p, v in given.items() if p not in group.inputs}
    out = [{**rest, p: given[p] if p in given else offered[p]} for p in keep_each]
    return out or None


def one_of(given: Mapping[str, Any], group: Exclusive, preferred: Sequence[str] = (), turn: int = 0) -> str | None:
    """The one input of ``group`` a call giving several of them keeps, or None when it gives fewer than two.

    The first of ``preferred`` the call gives (the input a tested value is offered to: dropping it would leave
    nothing to test), else the given inputs take turns by ``turn`` (successive calls keep each in turn).
    """
    chosen = [p for p in group.inputs if p in given]
    if len(chosen) < 2:
        return None
    return next((p for p in preferred if p in chosen), chosen[turn % len(chosen)])


__all__ = ["Exclusive", "exclusive_choices", "exclusive_inputs", "one_of"]
