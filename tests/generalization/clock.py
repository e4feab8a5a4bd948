"""Reminders and stopwatch timers, the kind of module an assistant's "clock" skill is.

State is module-global. Reminder ids come from :func:`uuid.uuid4`, due times from :func:`datetime.now`, timer
starts from :func:`time.time`: the entropy and clock sources real code calls.

Designed relations (values): ``create_reminder`` provides the ``reminder_id`` that ``get_reminder``,
``snooze_reminder`` and ``delete_reminder`` need; ``start_timer`` provides the ``timer_id`` that ``stop_timer``
needs. Reading the clock provides nothing and changes nothing.
"""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta

_reminders: dict[str, dict] = {}
_timers: dict[str, float] = {}


def current_time() -> dict:
    """The current local date and time.

    Returns:
        The time as ISO 8601 text and the weekday.
    """
    now = datetime.now()
    return {"now": now.isoformat(timespec="seconds"), "weekday": now.strftime("%A")}


def create_reminder(text: str, minutes_from_now: int) -> dict:
    """Create a reminder that fires after some minutes.

    Args:
        text: What to be reminded of.
        minutes_from_now: How many minutes from now the reminder fires (1 to 10080).

    Returns:
        The reminder's id and when it is due.
    """
    if not text.strip():
        raise ValueError("text must not be empty")
    if not 1 <= minutes_from_now <= 7 * 24 * 60:
        raise ValueError("minutes_from_now must be between 1 and 10080 (one week)")
    reminder_id = uuid.uuid4().hex[:12]
    due = datetime.now() + timedelta(minutes=minutes_from_now)
    _reminders[reminder_id] = {"text": text, "due": due}
    return {"reminder_id": reminder_id, "due": due.isoformat(timespec="seconds")}


def get_reminder(reminder_id: str) -> dict:
    """Show a reminder.

    Args:
        reminder_id: The id of the reminder.

    Returns:
        The reminder's text and due time.
    """
    r = _reminders.get(reminder_id)
    if r is None:
        raise KeyError(f"no reminder {reminder_id!r}")
    return {"reminder_id": reminder_id, "text": r["text"], "due": r["due"].isoformat(timespec="seconds")}


def snooze_reminder(reminder_id: str, minutes: int = 10) -> dict:
    """Push a reminder back.

    Args:
        reminder_id: The id of the reminder.
        minutes: How many minutes to push it back by.

    Returns:
        The new due time.
    """
    r = _reminders.get(reminder_id)
    if r is None:
        raise KeyError(f"no reminder {reminder_id!r}")
    if minutes <= 0:
        raise ValueError("minutes must be positive")
    r["due"] = r["due"] + timedelta(minutes=minutes)
    return {"due": r["due"].isoformat(timespec="seconds")}


def delete_reminder(reminder_id: str) -> dict:
    """Delete a reminder.

    Args:
        reminder_id: The id of the reminder.

    Returns:
        Whether it was deleted.
    """
    if _reminders.pop(reminder_id, None) is None:
        raise KeyError(f"no reminder {reminder_id!r}")
    return {"deleted": True}


def start_timer(label: str = "timer") -> dict:
    """Start a stopwatch timer.

    Args:
        label: A name for the timer.

    Returns:
        The id of the running timer.
    """
    timer_id = f"{label}-{uuid.uuid4().hex[:6]}"
    _timers[timer_id] = time.time()
    return {"timer_id": timer_id}


def stop_timer(timer_id: str) -> dict:
    """Stop a running timer.

    Args:
        timer_id: The id of the timer.

    Returns:
        The seconds elapsed since it was started.
    """
    started = _timers.pop(timer_id, None)
    if started is None:
        raise KeyError(f"no running timer {timer_id!r}")
    return {"elapsed_seconds": round(time.time() - started, 3)}


# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("clock.create_reminder", "clock.get_reminder", VALUE, "reminder_id", "reminder_id"),
    ("clock.create_reminder", "clock.snooze_reminder", VALUE, "reminder_id", "reminder_id"),
    ("clock.create_reminder", "clock.delete_reminder", VALUE, "reminder_id", "reminder_id"),
    ("clock.start_timer", "clock.stop_timer", VALUE, "timer_id", "timer_id"),
]

EXCLUDED = [
    # Reading the clock is not a state change and provides no id.
    ("clock.current_time", None, None, None, None),
    # Reading or snoozing a reminder hands back its id: an echo, not a provider.
    ("clock.get_reminder", None, None, "reminder_id", None),
    ("clock.snooze_reminder", None, None, None, None),
    # Timers and reminders are unrelated.
    ("clock.start_timer", "clock.get_reminder", None, None, None),
    ("clock.create_reminder", "clock.stop_timer", None, None, None),
]
