"""Restoring an owner's live object to a state, patching only the sub-parts that differ from what it holds.

Why a module of its own: the runtime keeps one live object per owner and, before a call, makes it hold the state
asked for; doing so cheaply (keeping what is equal, patching a watched container in place, keeping shadows for
the next call's check) is a job apart from taking snapshots (:mod:`libra.runtime.python.snapshot`).
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

from libra.runtime.base import StatePart
from libra.runtime.python.snapshot_common import (
    _CHUNKED,
    CHUNK,
    DefaultDictData,
    FromConstructor,
    Live,
    _chunks,
    _no_gc,
    _shadow_part,
    parse_label,
)
from libra.runtime.python.watch import Unwatchable, WatchedDict, WatchedList, rewatch, settle, watch


class Restorer:
    """The restore side of :class:`~libra.runtime.python.snapshot.Snapshotter`."""

    owner: str
    new_empty: Callable[[], Any]
    prototype: Callable[[], Any] | None

    def _watching(self) -> bool:
        """Whether chunked attributes are watched (the snapshotter's switch)."""
        raise NotImplementedError

    @_no_gc
    def restore(
        self, live: Live | None, parts: tuple[StatePart, ...], tracked: Callable[[Any], Iterable[str]] | None = None
    ) -> Live:
        """A live object holding ``parts``, made by patching ``live`` where it differs (or built anew)."""
        if len(parts) == 1 and parse_label(parts[0].name)[1] is None:
            p = parts[0]
            if live is not None and live.keys == {p.name: p.key}:
                return live
            return Live(pickle.loads(p.data), {p.name: p.key})
        wanted = {p.name: p.key for p in parts}
        if live is not None and live.keys == wanted:
            return live
        if live is None or any(":" not in n for n in live.keys):
            live = Live(self.new_empty(), {})
        live.whole = None
        obj = live.obj
        labels = [p.name.partition(":")[2] for p in parts]
        target_attrs, chunked = _plan(parts, labels)
        held = set(tracked(obj)) if tracked is not None else set(vars(obj))
        for name in held - set(target_attrs):
            live.watches.pop(name, None)
            try:
                delattr(obj, name)
            except AttributeError:
                pass
        for p, label in zip(parts, labels):
            if "#" in label or live.keys.get(p.name) == p.key:
                continue
            for attr, value in pickle.loads(p.data).items():
                live.watches.pop(attr, None)
                if isinstance(value, FromConstructor):
                    value = getattr(self.prototype(), attr)  # type: ignore[misc]
                elif isinstance(value, DefaultDictData):
                    value = value.rebuilt(getattr(self.prototype(), attr, None))  # type: ignore[misc]
                setattr(obj, attr, value)
            _shadow_part(live, label, p.data)
        for attr, chunk_parts in chunked.items():
            self._restore_chunked(live, attr, chunk_parts)
        live.keys = wanted
        return live

    def _restore_chunked(self, live: Live, attr: str, chunk_parts: list[StatePart]) -> None:
        """Make the chunked attribute ``attr`` hold ``chunk_parts``: as it is when it holds them already, patched in
        place when it is watched, else rebuilt from the chunks it holds and those unpickled."""
        if all(live.keys.get(p.name) == p.key for p in chunk_parts) and sum(
            1 for n in live.keys if n.startswith(f"{self.owner}:{attr}#")
        ) == len(chunk_parts):
            return
        current = getattr(live.obj, attr, None)
        if self._patch_watched(live, attr, current, chunk_parts):
            return
        merged, fresh = _merged(live, current, chunk_parts)
        if not self._watch_restored(live, attr, current, merged, fresh):
            setattr(live.obj, attr, merged)
            for p in chunk_parts:
                _shadow_part(live, parse_label(p.name)[1], p.data)  # type: ignore[arg-type]

    def _patch_watched(self, live: Live, attr: str, current: Any, chunk_parts: list[StatePart]) -> bool:
        """Make a watched attribute hold ``chunk_parts`` by patching its container in place; False if unwatched.

        Why in place: rebuilding a container of thousands of entries costs milliseconds even when one chunk
        differs. A chunk that holds the same keys (or, in a list, as many items) is overwritten where it is; from
        the first chunk that does not, the tail is cut and refilled (chunks before the last are always full, so
        the chunks after it keep their numbers and their watch tags). Only the chunks unpickled are walked.
        """
        w = live.watches.get(attr)
        if w is None or w.container is not current or w.dirty or w.top:
            return False
        n_old = len(w.sigs)
        loaded: dict[int, Any] = {}
        for idx, p in enumerate(chunk_parts):
            if idx >= n_old or live.keys.get(p.name) != p.key:
                loaded[idx] = pickle.loads(p.data)
        n_new = len(chunk_parts)
        cut = _first_reshaped(current, loaded, n_new, n_old)
        if cut < max(n_new, n_old):  # refill the tail from chunk ``cut`` on
            _refill_tail(current, loaded, cut, n_new)
        _overwrite_head(current, loaded, cut)
        changed = sorted(set(loaded) | set(range(cut, n_new)))
        try:
            rewatch(w, sorted(loaded))
        except Unwatchable:
            live.watches.pop(attr, None)
            live.unwatchable.add(attr)
            for p in chunk_parts:
                _shadow_part(live, parse_label(p.name)[1], p.data)  # type: ignore[arg-type]
            return True
        settle(w, changed)
        return True

    def _watch_restored(self, live: Live, attr: str, current: Any, merged: Any, fresh: list[int]) -> bool:
        """Put a chunked attribute rebuilt by a restore into the live object as a watched container; False if it
        cannot be watched (the caller then stores ``merged`` and keeps shadow copies of its chunks).

        Chunks kept from the live object are watched already (same chunk numbers); only the chunks just
        unpickled (``fresh``) are walked, so a restore costs in proportion to the chunks that differ.
        """
        if attr in live.unwatchable or not self._watching():
            return False
        w = live.watches.get(attr)
        try:
            if w is not None and w.container is current and not (w.dirty or w.top):
                top = WatchedList(merged) if isinstance(merged, list) else WatchedDict(merged)
                top._at, top._dirty = (w, -1, None), False
                w.container = top
                rewatch(w, fresh)
                settle(w)
            else:
                w = watch(merged, CHUNK)
        except Unwatchable:
            live.watches.pop(attr, None)
            live.unwatchable.add(attr)
            return False
        setattr(live.obj, attr, w.container)
        live.watches[attr] = w
        for label in [k for k in live.shadow if k.startswith(f"{attr}#")]:
            del live.shadow[label]
        return True


def _plan(parts: tuple[StatePart, ...], labels: list[str]) -> tuple[list[str], dict[str, list[StatePart]]]:
    """The attributes ``parts`` hold, in order, and the parts of each chunked one."""
    target_attrs: list[str] = []
    chunked: dict[str, list[StatePart]] = {}
    for p, label in zip(parts, labels):
        if "#" in label:
            attr = label.split("#", 1)[0]
            if attr not in chunked:
                target_attrs.append(attr)
            chunked.setdefault(attr, []).append(p)
        else:
            target_attrs.extend(label.split(","))
    return target_attrs, chunked


def _merged(live: Live, current: Any, chunk_parts: list[StatePart]) -> tuple[Any, list[int]]:
    """A chunked attribute's new container, made of the chunks the live object holds under the same key and of
    those unpickled; with the numbers of the latter (``fresh``)."""
    current_pieces = _chunks(current) if type(current) in _CHUNKED else []
    pieces = []
    fresh: list[int] = []
    for p in chunk_parts:
        i = int(parse_label(p.name)[1].split("#", 1)[1])  # type: ignore[union-attr]
        if live.keys.get(p.name) == p.key and i < len(current_pieces):
            pieces.append(current_pieces[i])
        else:
            pieces.append(pickle.loads(p.data))
            fresh.append(len(pieces) - 1)
    if isinstance(pieces[0], list):
        merged: Any = [x for piece in pieces for x in piece]
    else:
        merged = {}
        for piece in pieces:
            merged.update(piece)
    return merged, fresh


def _first_reshaped(current: Any, loaded: dict[int, Any], n_new: int, n_old: int) -> int:
    """The first chunk from which a watched container must be cut and refilled: the first loaded chunk that does
    not hold the same keys (a list: as many items) as the one it replaces, else where the chunk counts differ."""
    is_list = isinstance(current, list)
    cut = n_new if n_new == n_old else min(n_new, n_old)
    for idx in sorted(loaded):
        if idx >= cut:
            break
        lo, piece = idx * CHUNK, loaded[idx]
        old_len = min(CHUNK, len(current) - lo)
        if len(piece) != old_len or (not is_list and list(piece) != list(islice(dict.keys(current), lo, lo + old_len))):
            cut = idx
            break
    return cut


def _refill_tail(current: Any, loaded: dict[int, Any], cut: int, n_new: int) -> None:
    """Cut a watched container from chunk ``cut`` on and refill it with chunks ``cut`` to ``n_new`` (those loaded,
    else the ones it held at that number)."""
    lo = cut * CHUNK
    if isinstance(current, list):
        tail = [loaded[i] if i in loaded else current[i * CHUNK : (i + 1) * CHUNK] for i in range(cut, n_new)]
        list.__delitem__(current, slice(lo, None))
        for piece in tail:
            list.extend(current, piece)
    else:
        items = list(islice(dict.items(current), lo, None))
        tail = [
            loaded[i] if i in loaded else items[(i - cut) * CHUNK : (i - cut + 1) * CHUNK] for i in range(cut, n_new)
        ]
        for k, _ in items:
            dict.__delitem__(current, k)
        for piece in tail:
            dict.update(current, piece)


def _overwrite_head(current: Any, loaded: dict[int, Any], cut: int) -> None:
    """Overwrite in place the loaded chunks before ``cut`` (each holds the keys, or as many items, as before)."""
    is_list = isinstance(current, list)
    for idx, piece in loaded.items():
        if idx < cut:
            if is_list:
                list.__setitem__(current, slice(idx * CHUNK, idx * CHUNK + len(piece)), piece)
            else:
                dict.update(current, piece)
