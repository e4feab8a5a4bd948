"""In-memory calendar: one-off and recurring events, invitations and reminders.

All times are naive local ``datetime`` values. The calendar starts empty and
without an organizer; set one with :func:`set_organizer` before sending
invitations.

Example::

    from datetime import date, datetime, time, timedelta
    import calendar_app as cal

    standup = cal.create_recurring_event(
        "Standup", date(2025, 3, 3), time(9, 30), timedelta(minutes=15),
        cal.Frequency.WEEKDAYS,
    )
    cal.add_reminder(standup.id, timedelta(minutes=5))
    cal.list_events(date(2025, 3, 3), date(2025, 3, 9))
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import Optional, Union

__all__ = [
    "Frequency",
    "ResponseStatus",
    "ReminderMethod",
    "Organizer",
    "Event",
    "Occurrence",
    "Invitation",
    "Reminder",
    "CalendarError",
    "EventNotFound",
    "set_organizer",
    "create_event",
    "create_recurring_event",
    "get_event",
    "list_events",
    "update_event",
    "delete_event",
    "skip_occurrence",
    "invite",
    "list_invitations",
    "respond_to_invitation",
    "add_reminder",
    "remove_reminder",
]

MAX_EVENT_DURATION = timedelta(days=14)
MAX_REMINDER_LEAD = timedelta(days=28)
MAX_REMINDERS_PER_EVENT = 5
MAX_LISTING_SPAN = timedelta(days=366)

_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")


class Frequency(str, Enum):
    """How often a recurring event repeats."""

    DAILY = "daily"
    WEEKDAYS = "weekdays"  # Monday to Friday
    WEEKLY = "weekly"
    BIWEEKLY = "biweekly"


class ResponseStatus(str, Enum):
    """An invitee's answer to an invitation."""

    PENDING = "pending"
    ACCEPTED = "accepted"
    TENTATIVE = "tentative"
    DECLINED = "declined"


class ReminderMethod(str, Enum):
    """How a reminder is delivered."""

    POPUP = "popup"
    PUSH = "push"


class CalendarError(Exception):
    """Base class for calendar errors."""


class EventNotFound(CalendarError, KeyError):
    """No event with the given id."""


@dataclass
class Organizer:
    name: str
    email: str


@dataclass
class Reminder:
    id: str
    event_id: str
    before: timedelta
    method: ReminderMethod


@dataclass
class Event:
    id: str
    title: str
    start: datetime
    duration: timedelta
    location: Optional[str] = None
    description: Optional[str] = None
    frequency: Optional[Frequency] = None
    until: Optional[date] = None
    count: Optional[int] = None
    skipped_dates: list[date] = field(default_factory=list)
    reminders: list[Reminder] = field(default_factory=list)

    @property
    def is_recurring(self) -> bool:
        return self.frequency is not None

    @property
    def end(self) -> datetime:
        return self.start + self.duration


@dataclass(frozen=True)
class Occurrence:
    """One concrete occurrence of an event, as returned by :func:`list_events`."""

    event_id: str
    title: str
    start: datetime
    end: datetime
    location: Optional[str]
    is_recurring: bool


@dataclass
class Invitation:
    id: str
    event_id: str
    email: str
    status: ResponseStatus
    invited_at: datetime
    message: Optional[str] = None
    responded_at: Optional[datetime] = None


# --------------------------------------------------------------------------- #
# State
# --------------------------------------------------------------------------- #

organizer: Optional[Organizer] = None
events: dict[str, Event] = {}
invitations: dict[str, Invitation] = {}
reminders: dict[str, Reminder] = {}


def _new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:12]}"


def _event(event_id: str) -> Event:
    if not isinstance(event_id, str):
        raise TypeError(f"event_id must be a string like 'evt_...', got {type(event_id).__name__}")
    try:
        return events[event_id]
    except KeyError:
        raise EventNotFound(f"no event with id {event_id!r}") from None


def _clean_title(title: str) -> str:
    if not isinstance(title, str) or not title.strip():
        raise ValueError("title must be a non-empty string")
    if len(title) > 200:
        raise ValueError("title must be at most 200 characters")
    return title.strip()


def _check_duration(duration: timedelta) -> None:
    if not isinstance(duration, timedelta):
        raise TypeError("duration must be a datetime.timedelta")
    if duration <= timedelta(0):
        raise ValueError("duration must be positive")
    if duration > MAX_EVENT_DURATION:
        raise ValueError("events cannot last longer than 14 days")


def _check_email(email: str) -> str:
    if not isinstance(email, str) or not _EMAIL_RE.match(email.strip()):
        raise ValueError(f"invalid email address: {email!r}")
    return email.strip().lower()


def _step(freq: Frequency, day: date) -> date:
    if freq is Frequency.DAILY:
        return day + timedelta(days=1)
    if freq is Frequency.WEEKDAYS:
        nxt = day + timedelta(days=1)
        while nxt.weekday() >= 5:
            nxt += timedelta(days=1)
        return nxt
    if freq is Frequency.WEEKLY:
        return day + timedelta(weeks=1)
    return day + timedelta(weeks=2)


def _series_dates(ev: Event, last: date):
    """Yield every scheduled date of ``ev`` up to ``last`` (skips included)."""
    assert ev.frequency is not None
    day = ev.start.date()
    n = 0
    while day <= last:
        if ev.until is not None and day > ev.until:
            return
        if ev.count is not None and n >= ev.count:
            return
        yield day
        n += 1
        day = _step(ev.frequency, day)


# --------------------------------------------------------------------------- #
# Settings
# --------------------------------------------------------------------------- #


def set_organizer(name: str, email: str) -> Organizer:
    """Set the calendar owner's name and email, used as the sender of invitations.

    Must be called before :func:`invite`. Calling it again replaces the
    previous organizer.

    Raises:
        ValueError: If the name is empty or the email is malformed.
    """
    global organizer
    if not isinstance(name, str) or not name.strip():
        raise ValueError("organizer name must not be empty")
    organizer = Organizer(name=name.strip(), email=_check_email(email))
    return organizer


# --------------------------------------------------------------------------- #
# Events
# --------------------------------------------------------------------------- #


def create_event(
    title: str,
    start: datetime,
    duration: timedelta = timedelta(hours=1),
    location: Optional[str] = None,
    description: Optional[str] = None,
) -> Event:
    """Create a one-off event.

    Args:
        title: Short title, e.g. ``"Dentist"``.
        start: When the event starts, e.g. ``datetime(2025, 3, 14, 15, 0)``.
        duration: Length of the event (positive, at most 14 days). Default 1 hour.
        location: Free-text location.
        description: Free-text notes.

    Returns:
        The created :class:`Event`; its ``id`` identifies it in other calls.

    Raises:
        ValueError: For an empty title or an invalid duration.
        TypeError: If ``start`` is not a datetime.
    """
    if not isinstance(start, datetime):
        raise TypeError("start must be a datetime.datetime")
    _check_duration(duration)
    ev = Event(
        id=_new_id("evt"),
        title=_clean_title(title),
        start=start,
        duration=duration,
        location=location,
        description=description,
    )
    events[ev.id] = ev
    return ev


def create_recurring_event(
    title: str,
    first_date: date,
    start_time: time,
    duration: timedelta,
    frequency: Union[Frequency, str],
    until: Optional[date] = None,
    count: Optional[int] = None,
    location: Optional[str] = None,
) -> Event:
    """Create an event that repeats.

    The series starts on ``first_date`` at ``start_time`` and repeats with the
    given ``frequency``. It ends after ``until`` (inclusive) or after ``count``
    occurrences, whichever comes first; with neither it repeats forever.

    Args:
        title: Event title.
        first_date: Date of the first occurrence. For ``Frequency.WEEKDAYS``
            it must be a Monday-Friday.
        start_time: Local start time of each occurrence, e.g. ``time(9, 30)``.
        duration: Length of each occurrence.
        frequency: A :class:`Frequency` or its value (``"daily"``,
            ``"weekdays"``, ``"weekly"``, ``"biweekly"``).
        until: Last date the series may occur on.
        count: Maximum number of occurrences (>= 1).
        location: Free-text location.

    Raises:
        ValueError: For invalid values, e.g. ``until`` before ``first_date``.
    """
    if isinstance(first_date, datetime) or not isinstance(first_date, date):
        raise TypeError("first_date must be a datetime.date")
    if not isinstance(start_time, time):
        raise TypeError("start_time must be a datetime.time")
    _check_duration(duration)
    try:
        freq = Frequency(frequency)
    except ValueError:
        allowed = ", ".join(f.value for f in Frequency)
        raise ValueError(f"unknown frequency {frequency!r}; use one of: {allowed}") from None
    if freq is Frequency.WEEKDAYS and first_date.weekday() >= 5:
        raise ValueError("a weekdays series must start on a Monday-Friday")
    if until is not None and until < first_date:
        raise ValueError("until must not be before first_date")
    if count is not None and (not isinstance(count, int) or count < 1):
        raise ValueError("count must be a positive integer")
    ev = Event(
        id=_new_id("evt"),
        title=_clean_title(title),
        start=datetime.combine(first_date, start_time),
        duration=duration,
        location=location,
        frequency=freq,
        until=until,
        count=count,
    )
    events[ev.id] = ev
    return ev


def get_event(event_id: str) -> Event:
    """Return an event with its recurrence rule, skipped dates and reminders.

    Raises:
        EventNotFound: If the id is unknown.
    """
    return _event(event_id)


def list_events(start: date, end: date) -> list[Occurrence]:
    """List occurrences between two dates (both inclusive), sorted by start.

    Recurring events are expanded into one :class:`Occurrence` per date,
    leaving out skipped dates. An occurrence is included if it starts on a
    date within the range. The range may span at most 366 days.

    Raises:
        ValueError: If ``end`` is before ``start`` or the range is too long.
    """
    if not isinstance(start, date) or not isinstance(end, date):
        raise TypeError("start and end must be dates")
    if isinstance(start, datetime):
        start = start.date()
    if isinstance(end, datetime):
        end = end.date()
    if end < start:
        raise ValueError("end must not be before start")
    if end - start > MAX_LISTING_SPAN:
        raise ValueError("cannot list more than 366 days at once")

    out: list[Occurrence] = []
    for ev in events.values():
        if not ev.is_recurring:
            if start <= ev.start.date() <= end:
                out.append(Occurrence(ev.id, ev.title, ev.start, ev.end, ev.location, False))
            continue
        for day in _series_dates(ev, end):
            if day < start or day in ev.skipped_dates:
                continue
            occ_start = datetime.combine(day, ev.start.time())
            out.append(Occurrence(ev.id, ev.title, occ_start, occ_start + ev.duration,
                                  ev.location, True))
    out.sort(key=lambda o: (o.start, o.title))
    return out


def update_event(
    event_id: str,
    *,
    title: Optional[str] = None,
    start: Optional[datetime] = None,
    duration: Optional[timedelta] = None,
    location: Optional[str] = None,
) -> Event:
    """Change fields of an event; fields left as ``None`` are unchanged.

    ``start`` can only be changed for one-off events. For a recurring event,
    ``title``, ``duration`` and ``location`` apply to the whole series.

    Raises:
        EventNotFound: If the id is unknown.
        ValueError: If nothing is given, a value is invalid, or ``start`` is
            given for a recurring event.
    """
    ev = _event(event_id)
    if title is None and start is None and duration is None and location is None:
        raise ValueError("nothing to update")
    if start is not None:
        if ev.is_recurring:
            raise ValueError("cannot move a recurring series; delete and recreate it")
        if not isinstance(start, datetime):
            raise TypeError("start must be a datetime.datetime")
    if duration is not None:
        _check_duration(duration)
    new_title = _clean_title(title) if title is not None else ev.title
    ev.title = new_title
    if start is not None:
        ev.start = start
    if duration is not None:
        ev.duration = duration
    if location is not None:
        ev.location = location or None
    return ev


def delete_event(event_id: str) -> None:
    """Delete an event (the whole series), its invitations and its reminders.

    Raises:
        EventNotFound: If the id is unknown.
    """
    ev = _event(event_id)
    for r in ev.reminders:
        reminders.pop(r.id, None)
    for inv_id in [i.id for i in invitations.values() if i.event_id == event_id]:
        del invitations[inv_id]
    del events[event_id]


def skip_occurrence(event_id: str, occurrence_date: date) -> Event:
    """Cancel a single occurrence of a recurring event.

    Args:
        event_id: Id of a recurring event.
        occurrence_date: The date of the occurrence to drop, which must be a
            scheduled date of the series, e.g. ``date(2025, 3, 10)``.

    Raises:
        EventNotFound: If the id is unknown.
        ValueError: If the event is not recurring, the date is not part of the
            series, or that occurrence is already skipped.
    """
    ev = _event(event_id)
    if not ev.is_recurring:
        raise ValueError("only occurrences of recurring events can be skipped; "
                         "use delete_event for one-off events")
    if isinstance(occurrence_date, datetime):
        occurrence_date = occurrence_date.date()
    if not isinstance(occurrence_date, date):
        raise TypeError("occurrence_date must be a datetime.date")
    if occurrence_date not in set(_series_dates(ev, occurrence_date)):
        raise ValueError(f"{occurrence_date.isoformat()} is not an occurrence of this event")
    if occurrence_date in ev.skipped_dates:
        raise ValueError(f"the occurrence on {occurrence_date.isoformat()} is already skipped")
    ev.skipped_dates.append(occurrence_date)
    ev.skipped_dates.sort()
    return ev


# --------------------------------------------------------------------------- #
# Invitations
# --------------------------------------------------------------------------- #


def invite(event_id: str, email: str, message: Optional[str] = None) -> Invitation:
    """Invite someone to an event by email.

    Invitations are sent in the organizer's name, so an organizer must be
    configured with :func:`set_organizer` first. The new invitation is
    ``PENDING`` until the invitee answers via :func:`respond_to_invitation`.

    Raises:
        EventNotFound: If the event id is unknown.
        CalendarError: If no organizer is configured.
        ValueError: If the email is malformed, is the organizer's own address,
            or was already invited to this event.
    """
    ev = _event(event_id)
    if organizer is None:
        raise CalendarError("no organizer configured; call set_organizer() before inviting")
    addr = _check_email(email)
    if addr == organizer.email:
        raise ValueError("the organizer cannot invite themselves")
    if any(i.event_id == ev.id and i.email == addr for i in invitations.values()):
        raise ValueError(f"{addr} is already invited to this event")
    inv = Invitation(
        id=_new_id("inv"),
        event_id=ev.id,
        email=addr,
        status=ResponseStatus.PENDING,
        invited_at=datetime.now(),
        message=message,
    )
    invitations[inv.id] = inv
    return inv


def list_invitations(event_id: str) -> list[Invitation]:
    """List the invitations of an event, oldest first.

    Raises:
        EventNotFound: If the event id is unknown.
    """
    _event(event_id)
    found = [i for i in invitations.values() if i.event_id == event_id]
    return sorted(found, key=lambda i: i.invited_at)


def respond_to_invitation(invitation_id: str, status: Union[ResponseStatus, str]) -> Invitation:
    """Record an invitee's answer.

    Args:
        invitation_id: Id of the invitation (``inv_...``).
        status: ``ACCEPTED``, ``TENTATIVE`` or ``DECLINED`` (or their string
            values). An answer can be changed later.

    Raises:
        KeyError: If the invitation does not exist.
        ValueError: If the status is unknown or ``PENDING``.
    """
    inv = invitations.get(invitation_id)
    if inv is None:
        raise KeyError(f"no invitation with id {invitation_id!r}")
    try:
        new_status = ResponseStatus(status)
    except ValueError:
        raise ValueError(f"unknown response status {status!r}") from None
    if new_status is ResponseStatus.PENDING:
        raise ValueError("a response must be accepted, tentative or declined")
    inv.status = new_status
    inv.responded_at = datetime.now()
    return inv


# --------------------------------------------------------------------------- #
# Reminders
# --------------------------------------------------------------------------- #


def add_reminder(
    event_id: str,
    before: timedelta,
    method: Union[ReminderMethod, str] = ReminderMethod.POPUP,
) -> Reminder:
    """Add a reminder that fires ``before`` the start of the event (each
    occurrence, for recurring events).

    Args:
        event_id: The event.
        before: Lead time, from 0 up to 28 days, e.g. ``timedelta(minutes=10)``.
        method: ``ReminderMethod.POPUP`` (default) or ``ReminderMethod.PUSH``.

    Raises:
        EventNotFound: If the event id is unknown.
        ValueError: For an out-of-range lead time, an unknown method, a
            duplicate reminder, or more than 5 reminders on one event.
    """
    ev = _event(event_id)
    if not isinstance(before, timedelta):
        raise TypeError("before must be a datetime.timedelta")
    if before < timedelta(0) or before > MAX_REMINDER_LEAD:
        raise ValueError("before must be between 0 and 28 days")
    try:
        m = ReminderMethod(method)
    except ValueError:
        raise ValueError(f"unknown reminder method {method!r}") from None
    if len(ev.reminders) >= MAX_REMINDERS_PER_EVENT:
        raise ValueError("an event can have at most 5 reminders")
    if any(r.before == before and r.method is m for r in ev.reminders):
        raise ValueError("an identical reminder already exists")
    rem = Reminder(id=_new_id("rem"), event_id=ev.id, before=before, method=m)
    ev.reminders.append(rem)
    ev.reminders.sort(key=lambda r: r.before)
    reminders[rem.id] = rem
    return rem


def remove_reminder(reminder_id: str) -> None:
    """Remove a reminder.

    Raises:
        KeyError: If the reminder does not exist.
    """
    rem = reminders.pop(reminder_id, None)
    if rem is None:
        raise KeyError(f"no reminder with id {reminder_id!r}")
    ev = events.get(rem.event_id)
    if ev is not None:
        ev.reminders = [r for r in ev.reminders if r.id != reminder_id]
