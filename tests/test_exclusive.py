"""Inputs that exclude one another: the set read from the tool's rejection (:mod:`libra.contracts.exclusive`)
and the revision that splits a refused template into one per input (:func:`libra.contracts.offline.revision.revise`)."""

from __future__ import annotations

import pytest

from libra.catalog import Tool
from libra.contracts.exclusive import Exclusive, exclusive_choices, exclusive_inputs, one_of
from libra.contracts.offline.feedback import exclusive_repairs
from libra.contracts.offline.proposer import propose
from libra.contracts.offline.revision import revise

PARAMS = ["access_token", "track_id", "album_id", "playlist_id", "position", "email", "phone"]


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        (
            "Exactly one of track_id, album_id or playlist_id must be given, found 3.",
            Exclusive(("track_id", "album_id", "playlist_id"), False),
        ),
        (
            "Either none or exactly one of position, track_id or album_id should be passed, found 2.",
            Exclusive(("position", "track_id", "album_id"), True),
        ),
        ("Only one of `email` and `phone` may be set", Exclusive(("email", "phone"), True)),
        ("either email or phone is required", Exclusive(("email", "phone"), False)),
        ("'email' or 'phone': one of them is required", Exclusive(("email", "phone"), False)),
        ("Bad request. track_id and album_id are mutually exclusive.", Exclusive(("track_id", "album_id"), True)),
        ("At most one of album_id, playlist_id can be given", Exclusive(("album_id", "playlist_id"), True)),
        # a cue with only one input named, or inputs named without a cue, or a clause joined by either/or
        ("Exactly one track_id must be given", None),
        ("track_id 5 and album_id 7 do not exist", None),
        ("either the track_id is unknown or the album_id is private", None),
        ("Invalid access token", None),
        # names of the tool's inputs only, as whole words
        ("Exactly one of track_ids or album_ids must be given", None),
    ],
)
def test_exclusive_inputs(message, expected) -> None:
    assert exclusive_inputs(message, PARAMS) == expected


def test_exclusive_choices() -> None:
    group = Exclusive(("track_id", "album_id", "playlist_id"), False)
    given = {"access_token": "t", "track_id": 1, "album_id": 2, "playlist_id": 3}
    assert exclusive_choices(given, group, {}) == [
        {"access_token": "t", "track_id": 1},
        {"access_token": "t", "album_id": 2},
        {"access_token": "t", "playlist_id": 3},
    ]
    # none given and none not allowed: each offered input in turn
    assert exclusive_choices({"access_token": "t"}, group, {"album_id": 9, "track_id": 8}) == [
        {"access_token": "t", "track_id": 8},
        {"access_token": "t", "album_id": 9},
    ]
    # exactly one given, or none where none is allowed: nothing to change
    assert exclusive_choices({"track_id": 1}, group, {"album_id": 9}) is None
    assert exclusive_choices({}, Exclusive(("track_id", "album_id"), True), {"album_id": 9}) is None


def test_one_of() -> None:
    group = Exclusive(("track_id", "album_id", "playlist_id"), False)
    given = {"access_token": "t", "track_id": 1, "album_id": 2, "playlist_id": 3}
    assert one_of(given, group, ["album_id"]) == "album_id"  # the input on offer is kept
    assert [one_of(given, group, [], turn) for turn in range(4)] == ["track_id", "album_id", "playlist_id", "track_id"]
    assert one_of({"track_id": 1}, group) is None
    assert one_of({"access_token": "t", "album_id": 2}, group, ["access_token"]) is None


def _play() -> Tool:
    props = {
        "access_token": {"type": "string", "description": "Access token from login."},
        "track_id": {"type": "integer", "description": "ID of the track to play."},
        "album_id": {"type": "integer", "description": "ID of the album to play."},
        "playlist_id": {"type": "integer", "description": "ID of the playlist to play."},
    }
    return Tool(
        "player.play",
        "Play a track, an album or a playlist.",
        {"type": "object", "properties": props, "required": ["access_token"]},
    )


def _refused(template: str, args: dict, message: str) -> dict:
    return {
        "template": template,
        "expected": "success",
        "arguments": args,
        "record": {"status": "error", "output": None, "state_changes": {}, "error": message},
    }


def test_revision_splits_a_refused_template_over_the_set() -> None:
    tool = _play()
    contract = propose(tool)
    assert {"complete", "required_only"} <= {t.name for t in contract.templates}
    full = {"access_token": "tok", "track_id": 1, "album_id": 2, "playlist_id": 3}
    feedback = [
        _refused("complete", full, "Exactly one of track_id, album_id or playlist_id must be given, found 3."),
        _refused(
            "required_only",
            {"access_token": "tok"},
            "Exactly one of track_id, album_id or playlist_id must be given, found 0.",
        ),
    ]
    assert [name for name, *_ in exclusive_repairs(contract, tool, feedback)] == ["complete", "required_only"]
    new = revise(contract, tool, feedback)
    assert new is not None and new.revision == contract.revision + 1
    names = [t.name for t in new.templates]
    assert "complete" not in names and "required_only" not in names
    # one template per input, each giving exactly one of the set; the none-given template adds nothing new
    only = [t for t in new.templates if t.name.startswith("only_")]
    assert [t.name for t in only] == ["only_track_id", "only_album_id", "only_playlist_id"]
    for t in only:
        given = [p for p in ("track_id", "album_id", "playlist_id") if t.arguments[p].kind != "omit"]
        assert given == [t.name.removeprefix("only_")]
        assert t.arguments[given[0]].kind == "observation" and t.arguments["access_token"].kind == "observation"
    assert any("exclude one another" in n for n in new.notes)
    # the split templates are not split again
    assert (
        exclusive_repairs(new, tool, [_refused("only_track_id", {"access_token": "tok", "track_id": 1}, "no track 1")])
        == []
    )


def test_a_message_about_other_inputs_changes_nothing() -> None:
    tool = _play()
    contract = propose(tool)
    feedback = [
        _refused(
            "complete", {"access_token": "tok", "track_id": 1, "album_id": 2, "playlist_id": 3}, "Invalid access token"
        )
    ]
    assert exclusive_repairs(contract, tool, feedback) == []


def test_the_exploration_alone_learns_the_set(monkeypatch) -> None:
    """A tool behind a sign-in is often first called by the exploration, after checking: with checking's split
    switched off, the exploration learns the set from its own refused call, keeps one input per call from then
    on, and still finds every designed relation of the player catalog."""
    import libra.contracts.checking.checker as checker
    import libra.contracts.offline.revision as revision
    from tests import generalization as gen

    monkeypatch.setattr(revision, "exclusive_repairs", lambda *a, **k: [])
    monkeypatch.setattr(checker, "exclusive_repairs", lambda *a, **k: [])
    outcome = gen.build("player")
    assert [t["name"] for t in outcome.library.contracts["player.play"]["templates"]] == ["complete", "required_only"]
    assert not outcome.missing and not outcome.hits, (outcome.missing, outcome.hits)
    assert outcome.library.stats["health"]["tools_never_succeeded"] == []
