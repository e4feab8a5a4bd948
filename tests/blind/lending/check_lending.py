"""Checks that every dependency listed in DEPENDENCIES.json is real.

Run with:  python check_lending.py
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

from lending import (
    BorrowingBlockedError,
    HoldStatus,
    ItemStatus,
    ItemType,
    ItemUnavailableError,
    LendingDesk,
    LoanStatus,
    NotFoundError,
)

checked: set[tuple[str, str]] = set()


def mark(provider: str, consumer: str) -> None:
    checked.add((provider, consumer))


def expect(exc_type, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        return exc
    raise AssertionError(f"{fn.__name__} did not raise {exc_type.__name__}")


class FakeClock:
    def __init__(self, start: date = date(2024, 3, 1)) -> None:
        self.today = start

    def __call__(self) -> date:
        return self.today

    def advance(self, days: int) -> None:
        self.today += timedelta(days=days)


# ---- member ids from register_member -------------------------------------------------
desk = LendingDesk(clock=FakeClock())
bogus_member = "M-0099"
for consumer, call in [
    ("get_member", lambda m: desk.get_member(m)),
    ("list_loans", lambda m: desk.list_loans(m)),
    ("list_fines", lambda m: desk.list_fines(m)),
]:
    expect(NotFoundError, call, bogus_member)
bob = desk.register_member("Bob Diaz", "bob@example.org")
assert desk.get_member(bob.member_id).name == "Bob Diaz"
assert desk.list_loans(bob.member_id) == []
assert desk.list_fines(bob.member_id) == []
mark("register_member", "get_member")
mark("register_member", "list_loans")
mark("register_member", "list_fines")

expect(NotFoundError, desk.check_out, bogus_member, "I-0001")
desk.check_out(bob.member_id, "I-0001")
mark("register_member", "check_out")

# place_hold on I-0001 (now on loan by Bob) needs a second, real member
expect(NotFoundError, desk.place_hold, bogus_member, "I-0001")
cara = desk.register_member("Cara Ng", "cara@example.org")
desk.place_hold(cara.member_id, "I-0001")
mark("register_member", "place_hold")

# ---- item ids from add_item / search_items --------------------------------------------
for provider in ("add_item", "search_items"):
    desk = LendingDesk(clock=FakeClock())
    if provider == "add_item":
        item_id = desk.add_item("Ticket to Ride", ItemType.BOARD_GAME).item_id
    else:
        item_id = desk.search_items("sweetgrass")[0].item_id
    second = desk.register_member("Dee Fox", "dee@example.org").member_id

    expect(NotFoundError, desk.check_out, "M-0001", "I-0999")
    desk.check_out("M-0001", item_id)
    mark(provider, "check_out")

    expect(NotFoundError, desk.place_hold, second, "I-0999")
    desk.place_hold(second, item_id)
    mark(provider, "place_hold")

# ---- check_out -> place_hold (state) ----------------------------------------------------
desk = LendingDesk(clock=FakeClock())
other = desk.register_member("Eli Moss", "eli@example.org").member_id
expect(ItemUnavailableError, desk.place_hold, other, "I-0003")   # on the shelf
desk.check_out("M-0001", "I-0003")
hold = desk.place_hold(other, "I-0003")
mark("check_out", "place_hold")

# ---- place_hold -> cancel_hold ------------------------------------------------------------
expect(NotFoundError, desk.cancel_hold, "H-09999")
assert desk.cancel_hold(hold.hold_id).status is HoldStatus.CANCELLED
mark("place_hold", "cancel_hold")

# ---- loan ids from check_out / list_loans ---------------------------------------------------
for provider in ("check_out", "list_loans"):
    clock = FakeClock()
    desk = LendingDesk(clock=clock)
    loan = desk.check_out("M-0001", "I-0002")
    loan_id = loan.loan_id if provider == "check_out" else desk.list_loans("M-0001")[0].loan_id

    expect(NotFoundError, desk.renew_loan, "L-999999")
    renewed = desk.renew_loan(loan_id)
    assert renewed.renewals == 1
    mark(provider, "renew_loan")

    expect(NotFoundError, desk.return_item, "L-999999")
    returned = desk.return_item(loan_id)
    assert returned.status is LoanStatus.RETURNED and returned.fine is None
    mark(provider, "return_item")

# ---- fines: return_item / list_fines -> pay_fine ---------------------------------------------
for provider in ("return_item", "list_fines"):
    clock = FakeClock()
    desk = LendingDesk(clock=clock)
    loan = desk.check_out("M-0001", "I-0003")   # DVD, 7 days
    expect(NotFoundError, desk.pay_fine, "F-00001", Decimal("1.00"))  # no fines yet
    clock.advance(7 + 60)                        # 60 days late -> capped at 10.00
    closed = desk.return_item(loan.loan_id)
    assert closed.fine is not None and closed.fine.amount == Decimal("10.00")
    fine_id = closed.fine.fine_id if provider == "return_item" else desk.list_fines("M-0001")[0].fine_id
    # 10.00 owed blocks borrowing until paid
    expect(BorrowingBlockedError, desk.check_out, "M-0001", "I-0001")
    paid = desk.pay_fine(fine_id, Decimal("2.50"))
    assert paid.outstanding == Decimal("7.50")
    desk.check_out("M-0001", "I-0001")
    mark(provider, "pay_fine")

# ---- hold shelf behaviour -------------------------------------------------------------------
clock = FakeClock()
desk = LendingDesk(clock=clock)
fay = desk.register_member("Fay Lo", "fay@example.org").member_id
loan = desk.check_out("M-0001", "I-0004")
desk.place_hold(fay, "I-0004")
expect(ItemUnavailableError, desk.renew_loan, loan.loan_id)
desk.return_item(loan.loan_id)
assert desk.search_items(status=ItemStatus.ON_HOLD_SHELF)[0].item_id == "I-0004"
expect(ItemUnavailableError, desk.check_out, "M-0001", "I-0004")
desk.check_out(fay, "I-0004")

# ---- not_dependencies spot checks -------------------------------------------------------------
desk = LendingDesk(clock=FakeClock())
assert desk.list_fines("M-0001") == []                  # without return_item
assert desk.search_items("drill")                       # without add_item
loan = desk.check_out("M-0001", "I-0005")
desk.return_item(loan.loan_id)                          # without renew_loan

# ---- every listed dependency was exercised ------------------------------------------------------
deps = json.loads((Path(__file__).parent / "DEPENDENCIES.json").read_text())
listed = {(d["provider"], d["consumer"]) for d in deps["dependencies"]}
missing = listed - checked
extra = checked - listed
assert not missing, f"dependencies not exercised: {sorted(missing)}"
assert not extra, f"exercised but not listed: {sorted(extra)}"
print(f"lending: all {len(listed)} dependencies verified")
