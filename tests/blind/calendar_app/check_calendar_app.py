"""Exercise calendar_app.py and show each dependency in DEPENDENCIES.json is real.

Run: /work/blind/.venv/bin/python check_calendar_app.py
"""

import importlib
import json
import pathlib
import sys
from datetime import date, datetime, time, timedelta

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import calendar_app as cal  # noqa: E402

checked = set()


def fresh():
    global cal
    cal = importlib.reload(cal)


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc:
        return
    raise AssertionError(f"{fn.__name__} unexpectedly succeeded")


MON = date(2025, 3, 3)  # a Monday


def consume_event_id(consumer, event_id):
    if consumer == "get_event":
        return cal.get_event(event_id)
    if consumer == "update_event":
        return cal.update_event(event_id, title="Renamed")
    if consumer == "delete_event":
        return cal.delete_event(event_id)
    if consumer == "invite":
        return cal.invite(event_id, "guest@example.com")
    if consumer == "list_invitations":
        return cal.list_invitations(event_id)
    if consumer == "add_reminder":
        return cal.add_reminder(event_id, timedelta(minutes=10))
    if consumer == "skip_occurrence":
        return cal.skip_occurrence(event_id, MON + timedelta(days=1))
    raise ValueError(consumer)


def provide_event_id(provider):
    if provider == "create_event":
        return cal.create_event("Dentist", datetime(2025, 3, 4, 15, 0)).id
    if provider == "create_recurring_event":
        return cal.create_recurring_event("Standup", MON, time(9, 30), timedelta(minutes=15),
                                          "weekdays").id
    if provider == "list_events":
        # something must exist to be listed; use a recurring series so that
        # skip_occurrence has a valid target too
        cal.create_recurring_event("Gym", MON, time(18), timedelta(hours=1), cal.Frequency.DAILY,
                                   count=10)
        occ = cal.list_events(MON, MON + timedelta(days=6))
        return occ[0].event_id
    raise ValueError(provider)


consumers = ["get_event", "update_event", "delete_event", "invite", "list_invitations", "add_reminder"]
plan = {
    "create_event": consumers,
    "create_recurring_event": consumers + ["skip_occurrence"],
    "list_events": consumers + ["skip_occurrence"],
}
for provider, cons in plan.items():
    for consumer in cons:
        fresh()
        cal.set_organizer("Pat", "pat@example.com")  # so invite can succeed
        fails(consume_event_id, consumer, "evt_000000000000", exc=cal.EventNotFound)
        eid = provide_event_id(provider)
        consume_event_id(consumer, eid)
        checked.add((provider, consumer))

# fresh state has no events at all
fresh()
assert cal.list_events(MON, MON + timedelta(days=30)) == []

# ---- set_organizer -> invite (state) ---------------------------------------
fresh()
eid = cal.create_event("Review", datetime(2025, 3, 5, 11)).id
fails(cal.invite, eid, "sam@example.com", exc=cal.CalendarError)
cal.set_organizer("Pat", "pat@example.com")
inv = cal.invite(eid, "sam@example.com")
assert inv.status is cal.ResponseStatus.PENDING
checked.add(("set_organizer", "invite"))

# ---- invite / list_invitations -> respond_to_invitation ------------------
for provider in ["invite", "list_invitations"]:
    fresh()
    cal.set_organizer("Pat", "pat@example.com")
    eid = cal.create_event("Review", datetime(2025, 3, 5, 11)).id
    fails(cal.respond_to_invitation, "inv_000000000000", "accepted", exc=KeyError)
    inv = cal.invite(eid, "sam@example.com")
    inv_id = inv.id if provider == "invite" else cal.list_invitations(eid)[0].id
    out = cal.respond_to_invitation(inv_id, cal.ResponseStatus.ACCEPTED)
    assert out.status is cal.ResponseStatus.ACCEPTED
    checked.add((provider, "respond_to_invitation"))

# ---- add_reminder / get_event -> remove_reminder -------------------------
for provider in ["add_reminder", "get_event"]:
    fresh()
    eid = cal.create_event("Flight", datetime(2025, 4, 1, 7)).id
    fails(cal.remove_reminder, "rem_000000000000", exc=KeyError)
    rem = cal.add_reminder(eid, timedelta(hours=3), "push")
    rid = rem.id if provider == "add_reminder" else cal.get_event(eid).reminders[0].id
    cal.remove_reminder(rid)
    assert cal.get_event(eid).reminders == []
    checked.add((provider, "remove_reminder"))

# ---- not_dependencies and behaviour ----------------------------------------
fresh()
one_off = cal.create_event("Lunch", datetime(2025, 3, 4, 12))
fails(cal.skip_occurrence, one_off.id, date(2025, 3, 4), exc=ValueError)
cal.add_reminder(one_off.id, timedelta(minutes=30))  # no organizer needed
rem = cal.add_reminder(one_off.id, timedelta(minutes=5))
fails(cal.respond_to_invitation, rem.id, "accepted", exc=KeyError)
assert cal.list_invitations(one_off.id) == []

series = cal.create_recurring_event("Standup", MON, time(9, 30), timedelta(minutes=15),
                                    cal.Frequency.WEEKDAYS, until=date(2025, 3, 14))
week = [o for o in cal.list_events(MON, MON + timedelta(days=6)) if o.event_id == series.id]
assert len(week) == 5 and all(o.start.weekday() < 5 for o in week)
cal.skip_occurrence(series.id, week[2].start.date())
fails(cal.skip_occurrence, series.id, week[2].start.date(), exc=ValueError)  # already skipped
fails(cal.skip_occurrence, series.id, date(2025, 3, 8), exc=ValueError)  # Saturday
fails(cal.skip_occurrence, series.id, date(2025, 3, 17), exc=ValueError)  # after until
assert len([o for o in cal.list_events(MON, MON + timedelta(days=6))
            if o.event_id == series.id]) == 4
fails(cal.update_event, series.id, start=datetime(2025, 3, 3, 10), exc=ValueError)
fails(cal.create_recurring_event, "x", date(2025, 3, 8), time(9), timedelta(hours=1), "weekdays",
      exc=ValueError)
fails(cal.create_recurring_event, "x", MON, time(9), timedelta(hours=1), "monthly", exc=ValueError)
fails(cal.create_event, "x", datetime(2025, 1, 1), timedelta(0), exc=ValueError)
fails(cal.list_events, MON, MON - timedelta(days=1), exc=ValueError)
cal.set_organizer("Pat", "pat@example.com")
fails(cal.invite, series.id, "pat@example.com", exc=ValueError)
inv = cal.invite(series.id, "kim@example.com")
fails(cal.invite, series.id, "KIM@example.com", exc=ValueError)
fails(cal.respond_to_invitation, inv.id, "pending", exc=ValueError)
cal.delete_event(series.id)
fails(cal.respond_to_invitation, inv.id, "declined", exc=KeyError)

# ---- coverage of DEPENDENCIES.json ----------------------------------------
spec = json.loads((HERE / "DEPENDENCIES.json").read_text())
listed = {(d["provider"], d["consumer"]) for d in spec["dependencies"]}
assert listed == checked, (listed - checked, checked - listed)
print(f"OK: {len(checked)} dependencies verified")
