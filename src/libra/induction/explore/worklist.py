"""The engine's worklist, packed: work items as single integers instead of objects.

Why: a large build queues millions of work items it never runs (AppWorld: 3.2 M at the end of a 400k-call build).
As a heap of ``(-similarity, sequence, Item)`` tuples each entry costs about 430 bytes (the tuple, a float, an
int, the item object, its attribute dict and its binding tuples), so the worklist alone was most of the build's
memory. Here an item is one integer: its tool, input and placement names are interned, and its node, template,
value id and flags are bit fields. A heap entry puts the priority and the sequence number above those fields, so
integers compare exactly as the tuples did (priority, then sequence: the sequence is unique, so the item's own
bits never decide) and the pop order, hence the exploration, is unchanged. The heaps keep an item in four machine words
(:class:`PackedHeap`), 32 bytes.

Most of what such a build queues can never run: an offer waits behind better-named ones until its consumer's budget
is spent, and from then on it is popped only to be dropped. A heap therefore lets its owner leave such items out
(:meth:`PackedHeap.push` of a spent item, :meth:`PackedHeap.discard`) while still answering, for the order of everything
else, as
if they were there: see :class:`PackedHeap`.
"""

from __future__ import annotations

import heapq
import math
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Item", "ItemCodec", "PackedHeap", "PackedQueue"]


@dataclass
class Item:
    """A work item: a template of ``tool`` to run in state ``node``, with the inputs the caller bound."""

    node: int
    tool: str
    template: int
    fixed: tuple[tuple[str, int], ...] = ()  # (input, pool value id) bindings chosen by the caller: at most one
    state_test: bool = False  # offered only as a test of the state it runs in (see ``OffersMixin._offers``)
    number_offer: bool = False  # offered to an input the template fills with a literal (see ``OffersMixin._offers``)
    # "" (the value is the argument), "folder" (it is the folder the template's relative path literal is placed
    # in: ``placed_path``) or "leaf" (it replaces the reference inside the template's structured literal)
    placement: str = ""


# Bit fields of a packed item, lowest first: (name, width). Widths bound what one build can hold (2^40 nodes or
# pool values, 2^24 distinct names or templates per tool); packing refuses anything larger rather than wrap.
_FIELDS = (("vid", 40), ("param", 24), ("node", 40), ("tool", 24), ("template", 24), ("placement", 24), ("flags", 3))
_SHIFT: dict[str, int] = {}
_WIDTH: dict[str, int] = {}
_at = 0
for _name, _width in _FIELDS:
    _SHIFT[_name], _WIDTH[_name] = _at, _width
    _at += _width
ITEM_BITS = _at
_ITEM_MASK = (1 << ITEM_BITS) - 1
_SEQ_BITS = 64
_HAS_FIXED, _STATE_TEST, _NUMBER_OFFER = 1, 2, 4
_P_AT, _N_AT, _T_AT, _TM_AT, _PL_AT, _F_AT = (
    _SHIFT[n] for n in ("param", "node", "tool", "template", "placement", "flags")
)
_VID_END, _NODE_END, _NAME_END = 1 << _WIDTH["vid"], 1 << _WIDTH["node"], 1 << _WIDTH["tool"]
assert _SHIFT["vid"] == 0 and _WIDTH["param"] == _WIDTH["tool"] == _WIDTH["template"] == _WIDTH["placement"]


def order_key(priority: float) -> int:
    """A float as an unsigned 64-bit integer with the same order (IEEE 754 bits, sign folded).

    ``-0.0`` is taken as ``0.0`` (they compare equal as floats, so the sequence must decide between them), and NaN,
    which has no order, is refused.
    """
    x = float(priority) + 0.0
    if math.isnan(x):
        raise ValueError("a work item's priority must be a number, not NaN")
    (bits,) = struct.unpack(">Q", struct.pack(">d", x))
    return bits ^ 0xFFFFFFFFFFFFFFFF if bits >> 63 else bits | (1 << 63)


_ORDER_KEYS: dict[float, int] = {}  # see PackedHeap._order
_ORDER_KEYS_MAX = 1 << 14


class ItemCodec:
    """Packs items into integers and back; the names it interned travel with it (in a checkpoint too)."""

    def __init__(self) -> None:
        self.names: list[str] = [""]
        self.ids: dict[str, int] = {"": 0}

    def _id(self, name: str) -> int:
        i = self.ids.get(name)
        if i is None:
            i = self.ids[name] = len(self.names)
            self.names.append(name)
        return i

    def pack(self, item: Item) -> int:
        # The usual item, bit by bit (a build packs millions); anything a field cannot hold goes the checked way.
        fixed = item.fixed
        if len(fixed) <= 1:
            ids = self.ids
            param, vid = fixed[0] if fixed else ("", 0)
            p = ids.get(param)
            if p is None:
                p = self._id(param)
            t = ids.get(item.tool)
            if t is None:
                t = self._id(item.tool)
            pl = ids.get(item.placement)
            if pl is None:
                pl = self._id(item.placement)
            node, template = item.node, item.template
            if (
                0 <= vid < _VID_END
                and 0 <= node < _NODE_END
                and 0 <= template < _NAME_END
                and p < _NAME_END
                and t < _NAME_END
                and pl < _NAME_END
            ):
                flags = (
                    (_HAS_FIXED if fixed else 0)
                    | (_STATE_TEST if item.state_test else 0)
                    | (_NUMBER_OFFER if item.number_offer else 0)
                )
                return (
                    vid | p << _P_AT | node << _N_AT | t << _T_AT | template << _TM_AT | pl << _PL_AT | flags << _F_AT
                )
        return self._pack_checked(item)

    def _pack_checked(self, item: Item) -> int:
        if len(item.fixed) > 1:
            raise ValueError("a packed work item binds at most one input")
        flags = (
            (_HAS_FIXED if item.fixed else 0)
            | (_STATE_TEST if item.state_test else 0)
            | (_NUMBER_OFFER if item.number_offer else 0)
        )
        param, vid = item.fixed[0] if item.fixed else ("", 0)
        values = {
            "vid": vid,
            "param": self._id(param),
            "node": item.node,
            "tool": self._id(item.tool),
            "template": item.template,
            "placement": self._id(item.placement),
            "flags": flags,
        }
        out = 0
        for name, value in values.items():
            if not 0 <= value < (1 << _WIDTH[name]):
                raise ValueError(f"a work item's {name} ({value}) does not fit its {_WIDTH[name]}-bit field")
            out |= value << _SHIFT[name]
        return out

    def unpack(self, packed: int) -> Item:
        def get(name: str) -> int:
            return (packed >> _SHIFT[name]) & ((1 << _WIDTH[name]) - 1)

        flags = get("flags")
        fixed = ((self.names[get("param")], get("vid")),) if flags & _HAS_FIXED else ()
        return Item(
            get("node"),
            self.names[get("tool")],
            get("template"),
            fixed,
            bool(flags & _STATE_TEST),
            bool(flags & _NUMBER_OFFER),
            self.names[get("placement")],
        )


_ENTRY = 32  # bytes of a bucket entry: the sequence (64 bits) below the packed item, little-endian
_SEQ_MASK = (1 << _SEQ_BITS) - 1
assert _SEQ_BITS + ITEM_BITS <= 8 * _ENTRY


class PackedHeap:
    """A min-heap of items by (priority, sequence): what ``heapq`` over ``(priority, seq, item)`` tuples pops.

    Kept as one first-in first-out bucket per priority under a heap of the priorities. Why: a build has a few
    thousand distinct priorities (rounded name similarities) and millions of queued items, and its owner pushes
    sequence numbers in increasing order, so within one priority the oldest item is always the next: a bucket
    only ever appends at its end and pops at its front. An item then costs 32 bytes in a ``bytearray`` (which appends at
    its end and drops from its front in amortized constant time) instead of a Python integer of some 300 bits in a list
    (about 80 bytes). The pop order is exactly the tuples'
    (priority first, sequence within it); a push whose sequence is not larger than the last one's is refused,
    since it would break that order.

    Items its owner knows can never run again (popping them would only drop them) need not be held: :meth:`push`
    of one marked ``spent`` only records it, :meth:`discard` removes those already held. The heap then behaves as if
    they
    were still there wherever that could be seen: it stays true while one of them would still be queued, and
    :meth:`pop` answers None (a dropped item) where the full heap would have popped one of them last. What it
    keeps for that is one number, the largest (priority, sequence) left out that the full heap would still hold:
    the full heap pops a left-out item before any held item that sorts after it, so once :meth:`pop` returns such
    an item every left-out one is behind. Which items are left out is the owner's promise (see
    ``ScheduleMixin._spent``); the order of the held ones is untouched.
    """

    def __init__(self, codec: ItemCodec) -> None:
        self.codec = codec
        self.priorities: list[int] = []  # a heap of the order keys that have a bucket
        self.buckets: dict[int, bytearray] = {}  # order key -> its items, oldest first, _ENTRY bytes each
        self.size = 0
        self.last_seq = -1
        self.ghost = -1  # the largest (priority, sequence) key of a left-out item the full heap would hold; -1: none
        self.kept_after_discard = 0  # the heap's size after the last :meth:`discard` (when to discard again)

    @staticmethod
    def _order(priority: float) -> int:
        # a build's priorities are a few thousand name similarities: each is converted once (equal floats, -0.0 and
        # 0.0 included, have one order key; NaN equals nothing, so it is never found and order_key refuses it)
        ordered = _ORDER_KEYS.get(priority)
        if ordered is None:
            if len(_ORDER_KEYS) >= _ORDER_KEYS_MAX:
                _ORDER_KEYS.clear()
            ordered = _ORDER_KEYS[priority] = order_key(priority)
        return ordered

    def push(self, priority: float, seq: int, item: Item, spent: bool = False) -> None:
        """Queue an item; one its owner knows can never run (``spent``) is left out, only its place remembered."""
        ordered = self._order(priority)
        if not 0 <= seq < (1 << _SEQ_BITS):
            raise ValueError(f"a work item's sequence number ({seq}) does not fit {_SEQ_BITS} bits")
        if seq <= self.last_seq:
            raise ValueError(f"work items must be pushed in increasing sequence order ({seq} after {self.last_seq})")
        self.last_seq = seq
        if spent:
            self.ghost = max(self.ghost, (ordered << _SEQ_BITS) | seq)
            return
        packed = self.codec.pack(item)
        bucket = self.buckets.get(ordered)
        if bucket is None:
            bucket = self.buckets[ordered] = bytearray()
            heapq.heappush(self.priorities, ordered)
        bucket += ((packed << _SEQ_BITS) | seq).to_bytes(_ENTRY, "little")
        self.size += 1

    def pop(self) -> Item | None:
        """The next item; None where the full heap would pop only left-out items (it then holds none of them)."""
        if not self.size:
            self.ghost = -1
            return None
        ordered = self.priorities[0]
        bucket = self.buckets[ordered]
        entry = int.from_bytes(bucket[:_ENTRY], "little")
        if len(bucket) == _ENTRY:
            del self.buckets[ordered]
            heapq.heappop(self.priorities)
        else:
            del bucket[:_ENTRY]
        seq, packed = entry & _SEQ_MASK, entry >> _SEQ_BITS
        self.size -= 1
        if (ordered << _SEQ_BITS) | seq > self.ghost:
            self.ghost = -1  # every left-out item sorts before this one: the full heap popped them already
        return self.codec.unpack(packed)

    def discard(self, dead: Callable[[Item], bool]) -> int:
        """Remove the held items ``dead`` says can never run; returns how many. ``dead`` must depend on an item's
        tool, template, placement and flags only (it is asked once per combination, about an item with that
        combination and an empty node and binding)."""
        shift = _SHIFT["tool"]
        verdicts: dict[int, bool] = {}
        ghost, dropped = self.ghost, 0
        for ordered in list(self.buckets):
            bucket = self.buckets[ordered]
            kept = bytearray()
            last_gone = -1
            for at in range(0, len(bucket), _ENTRY):
                entry = int.from_bytes(bucket[at : at + _ENTRY], "little")
                kind = entry >> (_SEQ_BITS + shift)
                gone = verdicts.get(kind)
                if gone is None:
                    gone = verdicts[kind] = dead(self.codec.unpack(kind << shift))
                if gone:
                    last_gone = entry & _SEQ_MASK
                else:
                    kept += bucket[at : at + _ENTRY]
            if last_gone < 0:
                continue
            ghost = max(ghost, (ordered << _SEQ_BITS) | last_gone)  # sequences rise within a bucket
            dropped += (len(bucket) - len(kept)) // _ENTRY
            if kept:
                self.buckets[ordered] = kept
            else:
                del self.buckets[ordered]
        if dropped:
            self.priorities = list(self.buckets)
            heapq.heapify(self.priorities)
            self.size -= dropped
            self.ghost = ghost
        self.kept_after_discard = self.size
        return dropped

    def __len__(self) -> int:
        """The items held (left-out ones are not)."""
        return self.size

    def __bool__(self) -> bool:
        return self.size > 0 or self.ghost >= 0


class PackedQueue:
    """A first-in first-out queue of items."""

    def __init__(self, codec: ItemCodec) -> None:
        self.codec = codec
        self.items: deque[int] = deque()

    def append(self, item: Item) -> None:
        self.items.append(self.codec.pack(item))

    def popleft(self) -> Item:
        return self.codec.unpack(self.items.popleft())

    def peek(self) -> Item:
        """The item :meth:`popleft` would return, left in place."""
        return self.codec.unpack(self.items[0])

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)
