"""Small in-memory hotel booking module.

Typical flow::

    rooms = search_rooms(date(2030, 5, 1), date(2030, 5, 4), room_type="double")
    guest = register_guest("Grace Hopper", "grace@example.com")
    hold = place_hold(rooms[0]["room_number"], date(2030, 5, 1), date(2030, 5, 4), guest["guest_id"])
    booking = confirm_booking(hold["hold_id"])
    check_in(booking["booking_id"])
    check_out(booking["booking_id"])

A hold reserves a room for ``HOLD_MINUTES`` minutes; it must be confirmed
before it expires or the room is released again.  All state lives in the
module-level dictionaries below and is lost when the process exits.
"""

from __future__ import annotations

import re
import secrets
from datetime import date, datetime, timedelta
from decimal import Decimal
from enum import Enum
from typing import Literal, Optional, TypedDict, get_args

__all__ = [
    "RoomType",
    "BookingStatus",
    "CancellationReason",
    "RoomInfo",
    "GuestRecord",
    "HoldRecord",
    "BookingRecord",
    "search_rooms",
    "register_guest",
    "find_guest",
    "place_hold",
    "release_hold",
    "confirm_booking",
    "get_booking",
    "list_bookings",
    "cancel_booking",
    "check_in",
    "check_out",
]

RoomType = Literal["single", "double", "suite"]

HOLD_MINUTES = 15
MAX_NIGHTS = 30
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


class BookingStatus(str, Enum):
    """Lifecycle of a booking."""

    CONFIRMED = "confirmed"
    CHECKED_IN = "checked_in"
    CHECKED_OUT = "checked_out"
    CANCELLED = "cancelled"


class CancellationReason(str, Enum):
    """Why a booking was cancelled.  ``OTHER`` requires a free-text note."""

    GUEST_REQUEST = "guest_request"
    CHANGE_OF_PLANS = "change_of_plans"
    DUPLICATE_BOOKING = "duplicate_booking"
    PAYMENT_FAILED = "payment_failed"
    HOTEL_OVERBOOKED = "hotel_overbooked"
    OTHER = "other"


class RoomInfo(TypedDict):
    room_number: str
    room_type: RoomType
    capacity: int
    nightly_rate: Decimal
    nights: int
    total_price: Decimal


class GuestRecord(TypedDict):
    guest_id: str
    name: str
    email: str
    phone: Optional[str]
    registered_at: datetime


class HoldRecord(TypedDict):
    hold_id: str
    room_number: str
    guest_id: str
    check_in: date
    check_out: date
    guests: int
    total_price: Decimal
    expires_at: datetime


class BookingRecord(TypedDict):
    booking_id: str
    confirmation_code: str
    room_number: str
    guest_id: str
    check_in: date
    check_out: date
    guests: int
    total_price: Decimal
    status: BookingStatus
    cancellation_reason: Optional[CancellationReason]
    cancellation_note: Optional[str]
    checked_in_at: Optional[datetime]
    checked_out_at: Optional[datetime]


class _Room(TypedDict):
    room_type: RoomType
    capacity: int
    nightly_rate: Decimal


# --------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------

ROOMS: dict[str, _Room] = {
    "101": {"room_type": "single", "capacity": 1, "nightly_rate": Decimal("89.00")},
    "102": {"room_type": "single", "capacity": 1, "nightly_rate": Decimal("89.00")},
    "201": {"room_type": "double", "capacity": 2, "nightly_rate": Decimal("129.00")},
    "202": {"room_type": "double", "capacity": 3, "nightly_rate": Decimal("139.00")},
    "301": {"room_type": "suite", "capacity": 4, "nightly_rate": Decimal("249.00")},
}

GUESTS: dict[str, GuestRecord] = {
    "G-1001": {
        "guest_id": "G-1001",
        "name": "Ada Lovelace",
        "email": "ada@example.com",
        "phone": "+44 20 7946 0001",
        "registered_at": datetime(2024, 1, 15, 9, 30),
    },
}

HOLDS: dict[str, HoldRecord] = {}
BOOKINGS: dict[str, BookingRecord] = {}

_next_guest_number = 1002
_next_booking_number = 1


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

def _validate_stay(check_in: date, check_out: date) -> int:
    if not isinstance(check_in, date) or isinstance(check_in, datetime):
        raise TypeError("check_in must be a datetime.date")
    if not isinstance(check_out, date) or isinstance(check_out, datetime):
        raise TypeError("check_out must be a datetime.date")
    if check_in < date.today():
        raise ValueError(f"check_in {check_in.isoformat()} is in the past")
    nights = (check_out - check_in).days
    if nights < 1:
        raise ValueError("check_out must be at least one day after check_in")
    if nights > MAX_NIGHTS:
        raise ValueError(f"stays are limited to {MAX_NIGHTS} nights (requested {nights})")
    return nights


def _overlaps(a_in: date, a_out: date, b_in: date, b_out: date) -> bool:
    return a_in < b_out and b_in < a_out


def _purge_expired_holds() -> None:
    now = datetime.now()
    for hold_id in [h for h, rec in HOLDS.items() if rec["expires_at"] <= now]:
        del HOLDS[hold_id]


def _room_is_free(room_number: str, check_in: date, check_out: date) -> bool:
    _purge_expired_holds()
    for booking in BOOKINGS.values():
        if booking["room_number"] != room_number:
            continue
        if booking["status"] not in (BookingStatus.CONFIRMED, BookingStatus.CHECKED_IN):
            continue
        if _overlaps(check_in, check_out, booking["check_in"], booking["check_out"]):
            return False
    for hold in HOLDS.values():
        if hold["room_number"] == room_number and _overlaps(
            check_in, check_out, hold["check_in"], hold["check_out"]
        ):
            return False
    return True


def _require_booking(booking_id: str) -> BookingRecord:
    try:
        return BOOKINGS[booking_id]
    except KeyError:
        raise KeyError(f"no booking with id {booking_id!r}") from None


# --------------------------------------------------------------------------
# Public operations
# --------------------------------------------------------------------------

def search_rooms(
    check_in: date,
    check_out: date,
    room_type: Optional[RoomType] = None,
    guests: int = 1,
) -> list[RoomInfo]:
    """Find rooms that are free for the whole stay.

    Args:
        check_in: Arrival date (today or later).
        check_out: Departure date; the night of ``check_out`` is not included,
            so a stay from 1 May to 4 May is three nights.
        room_type: Restrict to ``"single"``, ``"double"`` or ``"suite"``.
        guests: Number of people who will stay; rooms with a smaller
            capacity are left out.

    Returns:
        Available rooms sorted by total price, each with its room number,
        nightly rate and the total for the stay.

    Raises:
        ValueError: If the dates are invalid, the stay is longer than 30
            nights, ``guests`` is not positive or ``room_type`` is unknown.
    """
    nights = _validate_stay(check_in, check_out)
    if room_type is not None and room_type not in get_args(RoomType):
        raise ValueError(f"unknown room_type {room_type!r}; expected one of {get_args(RoomType)}")
    if guests < 1:
        raise ValueError("guests must be at least 1")

    results: list[RoomInfo] = []
    for number, room in sorted(ROOMS.items()):
        if room_type is not None and room["room_type"] != room_type:
            continue
        if room["capacity"] < guests:
            continue
        if not _room_is_free(number, check_in, check_out):
            continue
        results.append(
            RoomInfo(
                room_number=number,
                room_type=room["room_type"],
                capacity=room["capacity"],
                nightly_rate=room["nightly_rate"],
                nights=nights,
                total_price=room["nightly_rate"] * nights,
            )
        )
    results.sort(key=lambda r: (r["total_price"], r["room_number"]))
    return results


def register_guest(name: str, email: str, phone: Optional[str] = None) -> GuestRecord:
    """Create a guest profile.

    Args:
        name: Full name as it should appear on the booking.
        email: Contact e-mail; must be unique among guests.
        phone: Optional phone number in any common format.

    Returns:
        The new guest record, including its ``guest_id`` (e.g. ``"G-1002"``).

    Raises:
        ValueError: If the name is blank, the e-mail is malformed or already
            registered.
    """
    global _next_guest_number
    name = (name or "").strip()
    if not name:
        raise ValueError("name must not be empty")
    email = (email or "").strip().lower()
    if not _EMAIL_RE.match(email):
        raise ValueError(f"invalid e-mail address: {email!r}")
    if any(g["email"] == email for g in GUESTS.values()):
        raise ValueError(f"a guest with e-mail {email} is already registered")
    if phone is not None:
        digits = re.sub(r"[\s\-().+]", "", phone)
        if not digits.isdigit() or not 6 <= len(digits) <= 15:
            raise ValueError(f"invalid phone number: {phone!r}")

    guest_id = f"G-{_next_guest_number}"
    _next_guest_number += 1
    record = GuestRecord(
        guest_id=guest_id,
        name=name,
        email=email,
        phone=phone,
        registered_at=datetime.now(),
    )
    GUESTS[guest_id] = record
    return dict(record)  # type: ignore[return-value]


def find_guest(email: str) -> GuestRecord:
    """Look up a registered guest by e-mail address (case-insensitive).

    Raises:
        KeyError: If no guest uses that e-mail.
    """
    wanted = (email or "").strip().lower()
    for guest in GUESTS.values():
        if guest["email"] == wanted:
            return dict(guest)  # type: ignore[return-value]
    raise KeyError(f"no guest registered with e-mail {email!r}")


def place_hold(
    room_number: str,
    check_in: date,
    check_out: date,
    guest_id: str,
    guests: int = 1,
) -> HoldRecord:
    """Reserve a room for a guest for a short time while they decide.

    The hold expires ``HOLD_MINUTES`` (15) minutes after it is placed.  While
    it is active nobody else can hold or book the room for overlapping dates.

    Args:
        room_number: Room to hold, as returned by :func:`search_rooms`.
        check_in: Arrival date.
        check_out: Departure date.
        guest_id: Guest the hold is for (``"G-..."``).
        guests: Number of people staying; must fit the room's capacity.

    Returns:
        The hold, with its ``hold_id`` and ``expires_at`` timestamp.

    Raises:
        KeyError: Unknown room or guest.
        ValueError: Invalid dates, too many guests, or the room is not
            available for those dates.
    """
    nights = _validate_stay(check_in, check_out)
    room = ROOMS.get(room_number)
    if room is None:
        raise KeyError(f"no room numbered {room_number!r}")
    if guest_id not in GUESTS:
        raise KeyError(f"no guest with id {guest_id!r}")
    if guests < 1:
        raise ValueError("guests must be at least 1")
    if guests > room["capacity"]:
        raise ValueError(
            f"room {room_number} sleeps {room['capacity']}, cannot hold it for {guests} guests"
        )
    if not _room_is_free(room_number, check_in, check_out):
        raise ValueError(
            f"room {room_number} is not available from {check_in.isoformat()} to {check_out.isoformat()}"
        )

    hold_id = "H-" + secrets.token_hex(4)
    record = HoldRecord(
        hold_id=hold_id,
        room_number=room_number,
        guest_id=guest_id,
        check_in=check_in,
        check_out=check_out,
        guests=guests,
        total_price=room["nightly_rate"] * nights,
        expires_at=datetime.now() + timedelta(minutes=HOLD_MINUTES),
    )
    HOLDS[hold_id] = record
    return dict(record)  # type: ignore[return-value]


def release_hold(hold_id: str) -> None:
    """Give up a hold before it expires, freeing the room.

    Raises:
        KeyError: If the hold does not exist (or has already expired).
    """
    _purge_expired_holds()
    if hold_id not in HOLDS:
        raise KeyError(f"no active hold with id {hold_id!r}")
    del HOLDS[hold_id]


def confirm_booking(hold_id: str) -> BookingRecord:
    """Turn an active hold into a confirmed booking.

    The hold is consumed: it no longer exists afterwards.

    Returns:
        The booking, with ``booking_id`` (e.g. ``"B-000001"``) and a
        six-character ``confirmation_code`` to give to the guest.

    Raises:
        KeyError: If the hold does not exist or has expired.
    """
    global _next_booking_number
    _purge_expired_holds()
    hold = HOLDS.pop(hold_id, None)
    if hold is None:
        raise KeyError(f"no active hold with id {hold_id!r} (it may have expired)")

    booking_id = f"B-{_next_booking_number:06d}"
    _next_booking_number += 1
    record = BookingRecord(
        booking_id=booking_id,
        confirmation_code=secrets.token_hex(3).upper(),
        room_number=hold["room_number"],
        guest_id=hold["guest_id"],
        check_in=hold["check_in"],
        check_out=hold["check_out"],
        guests=hold["guests"],
        total_price=hold["total_price"],
        status=BookingStatus.CONFIRMED,
        cancellation_reason=None,
        cancellation_note=None,
        checked_in_at=None,
        checked_out_at=None,
    )
    BOOKINGS[booking_id] = record
    return dict(record)  # type: ignore[return-value]


def get_booking(booking_id: str) -> BookingRecord:
    """Return one booking by its id (``"B-000001"``), not its confirmation code.

    Raises:
        KeyError: If there is no such booking.
    """
    return dict(_require_booking(booking_id))  # type: ignore[return-value]


def list_bookings(
    guest_id: Optional[str] = None,
    status: Optional[BookingStatus] = None,
) -> list[BookingRecord]:
    """List bookings, optionally filtered by guest and/or status.

    Results are ordered by check-in date.

    Raises:
        KeyError: If ``guest_id`` is given but unknown.
        ValueError: If ``status`` is not a valid :class:`BookingStatus`.
    """
    if guest_id is not None and guest_id not in GUESTS:
        raise KeyError(f"no guest with id {guest_id!r}")
    if status is not None:
        status = BookingStatus(status)
    out = [
        dict(b)
        for b in BOOKINGS.values()
        if (guest_id is None or b["guest_id"] == guest_id)
        and (status is None or b["status"] == status)
    ]
    out.sort(key=lambda b: (b["check_in"], b["booking_id"]))
    return out  # type: ignore[return-value]


def cancel_booking(
    booking_id: str,
    reason: CancellationReason,
    note: Optional[str] = None,
) -> BookingRecord:
    """Cancel a confirmed booking.

    Only bookings that have not been checked in yet can be cancelled.

    Args:
        booking_id: The booking to cancel.
        reason: A :class:`CancellationReason` (or its string value, e.g.
            ``"change_of_plans"``).
        note: Free text; required when ``reason`` is ``OTHER``.

    Raises:
        KeyError: Unknown booking.
        ValueError: Unknown reason, missing note for ``OTHER``, or the booking
            is not in the ``confirmed`` state.
    """
    booking = _require_booking(booking_id)
    try:
        reason = CancellationReason(reason)
    except ValueError:
        valid = ", ".join(r.value for r in CancellationReason)
        raise ValueError(f"unknown cancellation reason {reason!r}; expected one of: {valid}") from None
    if reason is CancellationReason.OTHER and not (note and note.strip()):
        raise ValueError("a note is required when the reason is 'other'")
    if booking["status"] is not BookingStatus.CONFIRMED:
        raise ValueError(
            f"booking {booking_id} is {booking['status'].value}; only confirmed bookings can be cancelled"
        )
    booking["status"] = BookingStatus.CANCELLED
    booking["cancellation_reason"] = reason
    booking["cancellation_note"] = note.strip() if note else None
    return dict(booking)  # type: ignore[return-value]


def check_in(booking_id: str, arrival: Optional[date] = None) -> BookingRecord:
    """Mark a guest as arrived.

    Args:
        booking_id: A confirmed booking.
        arrival: Date of arrival, defaults to today.  Must fall on or after the
            booking's check-in date and before its check-out date.

    Raises:
        KeyError: Unknown booking.
        ValueError: The booking is not confirmed (cancelled, already checked
            in, ...) or the arrival date is outside the stay.
    """
    booking = _require_booking(booking_id)
    arrival = arrival or date.today()
    if booking["status"] is not BookingStatus.CONFIRMED:
        raise ValueError(f"booking {booking_id} is {booking['status'].value}; cannot check in")
    if not booking["check_in"] <= arrival < booking["check_out"]:
        raise ValueError(
            f"arrival {arrival.isoformat()} is outside the stay "
            f"{booking['check_in'].isoformat()} - {booking['check_out'].isoformat()}"
        )
    booking["status"] = BookingStatus.CHECKED_IN
    booking["checked_in_at"] = datetime.now()
    return dict(booking)  # type: ignore[return-value]


def check_out(booking_id: str) -> BookingRecord:
    """Close a stay for a guest who has checked in.

    Returns:
        The final booking record; ``total_price`` is the amount to charge.

    Raises:
        KeyError: Unknown booking.
        ValueError: The guest has not checked in (or already checked out).
    """
    booking = _require_booking(booking_id)
    if booking["status"] is not BookingStatus.CHECKED_IN:
        raise ValueError(
            f"booking {booking_id} is {booking['status'].value}; only checked-in guests can check out"
        )
    booking["status"] = BookingStatus.CHECKED_OUT
    booking["checked_out_at"] = datetime.now()
    return dict(booking)  # type: ignore[return-value]
