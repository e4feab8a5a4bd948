"""Exercise hotel.py and show that every dependency in DEPENDENCIES.json is real.

Run:  /work/blind/.venv/bin/python check_hotel.py
"""

import importlib
import json
import sys
from datetime import date, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import hotel  # noqa: E402

TODAY = date.today()
IN, OUT = TODAY, TODAY + timedelta(days=2)


def fresh():
    global hotel
    hotel = importlib.reload(hotel)
    return hotel


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc:
        return True
    raise AssertionError(f"{fn.__name__}{args} unexpectedly succeeded")


def new_guest(h, email="grace@example.com"):
    return h.register_guest("Grace Hopper", email)["guest_id"]


def new_booking(h):
    room = h.search_rooms(IN, OUT)[0]["room_number"]
    gid = new_guest(h)
    hold = h.place_hold(room, IN, OUT, gid)
    return h.confirm_booking(hold["hold_id"])["booking_id"]


checked = set()


def test_search_rooms__place_hold():
    h = fresh()
    fails(h.place_hold, "999", IN, OUT, "G-1001", exc=KeyError)
    rooms = h.search_rooms(IN, OUT, room_type="suite", guests=3)
    assert rooms and rooms[0]["room_number"] == "301"
    h.place_hold(rooms[0]["room_number"], IN, OUT, "G-1001", guests=3)
    # room now held: it disappears from search and a second hold fails
    assert not h.search_rooms(IN, OUT, room_type="suite")
    fails(h.place_hold, "301", IN, OUT, "G-1001", exc=ValueError)
    checked.add(("search_rooms", "place_hold"))


def test_register_guest__place_hold():
    h = fresh()
    fails(h.place_hold, "201", IN, OUT, "G-1002", exc=KeyError)
    gid = new_guest(h)
    assert gid == "G-1002"
    h.place_hold("201", IN, OUT, gid)
    checked.add(("register_guest", "place_hold"))


def test_find_guest__place_hold():
    h = fresh()
    fails(h.place_hold, "201", IN, OUT, "ada@example.com", exc=KeyError)
    gid = h.find_guest("ADA@example.com")["guest_id"]
    h.place_hold("201", IN, OUT, gid)
    checked.add(("find_guest", "place_hold"))


def test_place_hold__confirm_and_release():
    h = fresh()
    fails(h.confirm_booking, "H-deadbeef", exc=KeyError)
    fails(h.release_hold, "H-deadbeef", exc=KeyError)
    hold = h.place_hold("101", IN, OUT, "G-1001")
    h.release_hold(hold["hold_id"])
    # released hold cannot be confirmed (not_dependency release_hold -> confirm_booking)
    fails(h.confirm_booking, hold["hold_id"], exc=KeyError)
    hold = h.place_hold("101", IN, OUT, "G-1001")
    b = h.confirm_booking(hold["hold_id"])
    assert b["status"] is h.BookingStatus.CONFIRMED
    # hold was consumed
    fails(h.release_hold, hold["hold_id"], exc=KeyError)
    checked.add(("place_hold", "confirm_booking"))
    checked.add(("place_hold", "release_hold"))


def test_booking_id_consumers():
    for provider in ("confirm_booking", "list_bookings"):
        for consumer in ("get_booking", "cancel_booking", "check_in", "check_out"):
            h = fresh()
            assert h.list_bookings() == []
            args = {"cancel_booking": ("guest_request",)}.get(consumer, ())
            fails(getattr(h, consumer), "B-000001", *args, exc=KeyError)
            bid = new_booking(h)
            if provider == "list_bookings":
                bid = h.list_bookings()[0]["booking_id"]
            if consumer == "check_out":
                h.check_in(bid)
            getattr(h, consumer)(bid, *args)
            checked.add((provider, consumer))


def test_check_in__check_out():
    h = fresh()
    bid = new_booking(h)
    fails(h.check_out, bid, exc=ValueError)
    h.check_in(bid)
    out = h.check_out(bid)
    assert out["status"] is h.BookingStatus.CHECKED_OUT
    checked.add(("check_in", "check_out"))


def test_not_dependencies_and_validation():
    h = fresh()
    bid = new_booking(h)
    # hold ids are not booking ids
    hold = h.place_hold("102", IN, OUT, "G-1001")
    fails(h.get_booking, hold["hold_id"], exc=KeyError)
    # list_bookings works without guest_id
    assert len(h.list_bookings()) == 1
    assert h.list_bookings(status="cancelled") == []
    # cancel: OTHER needs note, bad reason rejected
    fails(h.cancel_booking, bid, "because", exc=ValueError)
    fails(h.cancel_booking, bid, h.CancellationReason.OTHER, exc=ValueError)
    c = h.cancel_booking(bid, "change_of_plans")
    assert c["cancellation_reason"] is h.CancellationReason.CHANGE_OF_PLANS
    fails(h.check_in, bid, exc=ValueError)
    fails(h.check_out, bid, exc=ValueError)
    # bad inputs
    fails(h.search_rooms, OUT, IN, exc=ValueError)
    fails(h.search_rooms, TODAY - timedelta(days=1), OUT, exc=ValueError)
    fails(h.search_rooms, IN, OUT, room_type="penthouse", exc=ValueError)
    fails(h.register_guest, "X", "not-an-email", exc=ValueError)
    fails(h.register_guest, "Ada again", "ada@example.com", exc=ValueError)
    fails(h.place_hold, "101", IN, OUT, "G-1001", guests=2, exc=ValueError)
    fails(h.find_guest, "nobody@example.com", exc=KeyError)


def main():
    deps = json.loads((HERE / "DEPENDENCIES.json").read_text())
    for name, fn in list(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print("ok", name)
    listed = {(d["provider"], d["consumer"]) for d in deps["dependencies"]}
    missing = listed - checked
    assert not missing, f"dependencies not exercised: {missing}"
    print(f"all {len(listed)} dependencies verified")


if __name__ == "__main__":
    main()
