"""A music player: search the library, then play or queue exactly one track, album or playlist.

Written as module functions over module globals, the way a small service is. ``play`` and ``enqueue`` take three
optional inputs of which a call must give exactly one, checked in code with the message a developer writes
("Exactly one of track_id, album_id or playlist_id must be given, found 3"). What it exercises (an engine rule,
generic):

- A template that fills every optional input (or none) is refused by the tool's own validation, which names the
  inputs that exclude one another; revision keeps exactly one of them per template
  (:mod:`libra.contracts.exclusive`). Without it neither tool ever succeeds, so no id reaches them and nothing
  plays, and ``pause`` and ``skip`` (which need something playing or queued) never succeed either.

Designed relations: the ids each listing shows are what ``play`` and ``enqueue`` take (``search_tracks ->
play.track_id``, and so on), ``play`` is what lets ``pause`` succeed, and a queue of several tracks (``play`` an
album, ``enqueue`` anything) what lets ``skip`` succeed (state).
"""

from __future__ import annotations

from . import VALUE

_TRACKS = {
    501: {"track_id": 501, "title": "Morning Light", "artist": "Ana Ruiz"},
    502: {"track_id": 502, "title": "Harbour Lights", "artist": "The Quays"},
    503: {"track_id": 503, "title": "Slow River", "artist": "Ana Ruiz"},
    504: {"track_id": 504, "title": "Paper Boats", "artist": "Milo Hart"},
}
_ALBUMS = {
    71: {"album_id": 71, "title": "Coastline", "tracks": [502, 504]},
    72: {"album_id": 72, "title": "Rivers", "tracks": [501, 503]},
}
_PLAYLISTS = {
    9001: {"playlist_id": 9001, "name": "Road trip", "tracks": [504, 501]},
}
_PLAYER: dict = {"queue": [], "position": 0, "playing": False}


def _one_of(track_id: int | None, album_id: int | None, playlist_id: int | None) -> list[int]:
    given = [x for x in (track_id, album_id, playlist_id) if x is not None]
    if len(given) != 1:
        raise ValueError(f"Exactly one of track_id, album_id or playlist_id must be given, found {len(given)}.")
    if track_id is not None:
        if track_id not in _TRACKS:
            raise KeyError(f"no track {track_id}")
        return [track_id]
    if album_id is not None:
        if album_id not in _ALBUMS:
            raise KeyError(f"no album {album_id}")
        return list(_ALBUMS[album_id]["tracks"])
    if playlist_id not in _PLAYLISTS:
        raise KeyError(f"no playlist {playlist_id}")
    return list(_PLAYLISTS[playlist_id]["tracks"])


def search_tracks(query: str = "") -> list[dict]:
    """Find tracks whose title or artist contains the query.

    :param query: Words to look for; empty lists every track.
    :returns: The matching tracks.
    """
    q = query.strip().lower()
    return [dict(t) for t in _TRACKS.values() if q in t["title"].lower() or q in t["artist"].lower()]


def list_albums() -> list[dict]:
    """Every album in the library.

    :returns: The albums, with their ids and titles.
    """
    return [{"album_id": a["album_id"], "title": a["title"]} for a in _ALBUMS.values()]


def list_playlists() -> list[dict]:
    """Every playlist of the user.

    :returns: The playlists, with their ids and names.
    """
    return [{"playlist_id": p["playlist_id"], "name": p["name"]} for p in _PLAYLISTS.values()]


def play(track_id: int | None = None, album_id: int | None = None, playlist_id: int | None = None) -> dict:
    """Play a track, an album or a playlist now (it replaces the queue).

    :param track_id: ID of the track to play.
    :param album_id: ID of the album to play.
    :param playlist_id: ID of the playlist to play.
    :returns: What is playing.
    """
    _PLAYER["queue"] = _one_of(track_id, album_id, playlist_id)
    _PLAYER["position"], _PLAYER["playing"] = 0, True
    return {"now_playing": _TRACKS[_PLAYER["queue"][0]]["title"], "queue_length": len(_PLAYER["queue"])}


def enqueue(track_id: int | None = None, album_id: int | None = None, playlist_id: int | None = None) -> dict:
    """Add a track, an album or a playlist to the end of the queue.

    :param track_id: ID of the track to add.
    :param album_id: ID of the album to add.
    :param playlist_id: ID of the playlist to add.
    :returns: How long the queue is now.
    """
    _PLAYER["queue"] = _PLAYER["queue"] + _one_of(track_id, album_id, playlist_id)
    return {"queue_length": len(_PLAYER["queue"])}


def pause() -> dict:
    """Pause the music.

    :returns: The title of the paused track.
    """
    if not _PLAYER["playing"]:
        raise RuntimeError("Nothing is playing.")
    _PLAYER["playing"] = False
    return {"paused": _TRACKS[_PLAYER["queue"][_PLAYER["position"]]]["title"]}


def skip() -> dict:
    """Skip to the next track in the queue.

    :returns: The title of the next track.
    """
    if _PLAYER["position"] + 1 >= len(_PLAYER["queue"]):
        raise RuntimeError("There is no next track in the queue.")
    _PLAYER["position"] += 1
    return {"now_playing": _TRACKS[_PLAYER["queue"][_PLAYER["position"]]]["title"]}


DESIGNED = [
    # The ids each listing shows are the ones play takes, one kind per input.
    ("player.search_tracks", "player.play", VALUE, "track_id", "track_id"),
    ("player.list_albums", "player.play", VALUE, "album_id", "album_id"),
    ("player.list_playlists", "player.play", VALUE, "playlist_id", "playlist_id"),
    ("player.search_tracks", "player.enqueue", VALUE, "track_id", "track_id"),
    ("player.list_albums", "player.enqueue", VALUE, "album_id", "album_id"),
    ("player.list_playlists", "player.enqueue", VALUE, "playlist_id", "playlist_id"),
    # Nothing can be paused until something plays, nor skipped until the queue holds a next track.
    ("player.play", "player.pause", "state", None, None),
    ("player.play", "player.skip", "state", None, None),
    ("player.enqueue", "player.skip", "state", None, None),
]

EXCLUDED = [
    # A track id is no album or playlist id, and the reverse.
    ("player.search_tracks", None, None, None, "album_id"),
    ("player.search_tracks", None, None, None, "playlist_id"),
    ("player.list_albums", None, None, None, "track_id"),
    ("player.list_playlists", None, None, None, "track_id"),
    # The listings take nothing another tool gives.
    (None, "player.list_albums", None, None, None),
    (None, "player.list_playlists", None, None, None),
]
