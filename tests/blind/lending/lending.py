"""Lending desk for a small community library.

The library lends books, DVDs, tools and board games to registered members.
:class:`LendingDesk` keeps members, items, loans, holds and fines in memory.

Rules
-----
* A member may have at most ``max_loans`` items out at once (default 5).
* A member who owes ``BLOCKING_BALANCE`` (10.00) or more in unpaid fines cannot
  borrow until they pay.
* Late returns are fined ``DAILY_FINE`` (0.25) per day, capped at ``MAX_FINE``
  (10.00) per loan.
* Holds can only be placed on items that are currently out. When a held item
  comes back it goes to the hold shelf for the first member in the queue, and
  nobody else can borrow it.
* A loan can be renewed at most twice, and not while other members are waiting
  for the item.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import Callable, Optional

__all__ = [
    "LendingDesk",
    "LendingError",
    "NotFoundError",
    "ItemUnavailableError",
    "BorrowingBlockedError",
    "ItemType",
    "ItemStatus",
    "LoanStatus",
    "HoldStatus",
    "Member",
    "Item",
    "Loan",
    "Hold",
    "Fine",
]

DAILY_FINE = Decimal("0.25")
MAX_FINE = Decimal("10.00")
BLOCKING_BALANCE = Decimal("10.00")
MAX_RENEWALS = 2

_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class LendingError(Exception):
    """Base class for lending desk errors."""


class NotFoundError(LendingError, LookupError):
    """No member, item, loan, hold or fine with the given id."""


class ItemUnavailableError(LendingError):
    """The item cannot be lent or held in its current status."""


class BorrowingBlockedError(LendingError):
    """The member may not borrow right now (loan limit reached or fines owed)."""


class ItemType(Enum):
    BOOK = "book"
    DVD = "dvd"
    TOOL = "tool"
    BOARD_GAME = "board_game"


class ItemStatus(Enum):
    AVAILABLE = "available"
    ON_LOAN = "on_loan"
    ON_HOLD_SHELF = "on_hold_shelf"


class LoanStatus(Enum):
    ACTIVE = "active"
    RETURNED = "returned"


class HoldStatus(Enum):
    WAITING = "waiting"
    READY = "ready"
    FULFILLED = "fulfilled"
    CANCELLED = "cancelled"


_DEFAULT_LOAN_DAYS = {
    ItemType.BOOK: 21,
    ItemType.DVD: 7,
    ItemType.TOOL: 7,
    ItemType.BOARD_GAME: 14,
}


@dataclass
class Member:
    member_id: str
    name: str
    email: str
    joined_on: date
    max_loans: int = 5


@dataclass
class Item:
    item_id: str
    title: str
    item_type: ItemType
    creator: Optional[str]
    loan_period_days: int
    status: ItemStatus = ItemStatus.AVAILABLE


@dataclass
class Fine:
    fine_id: str
    member_id: str
    loan_id: str
    amount: Decimal
    paid: Decimal = Decimal("0.00")
    reason: str = ""

    @property
    def outstanding(self) -> Decimal:
        return self.amount - self.paid


@dataclass
class Loan:
    loan_id: str
    member_id: str
    item_id: str
    checked_out_on: date
    due_on: date
    status: LoanStatus = LoanStatus.ACTIVE
    returned_on: Optional[date] = None
    renewals: int = 0
    fine: Optional[Fine] = None


@dataclass
class Hold:
    hold_id: str
    member_id: str
    item_id: str
    placed_on: date
    status: HoldStatus = HoldStatus.WAITING
    ready_since: Optional[date] = None


@dataclass
class _Counters:
    member: int = 1
    item: int = 1
    loan: int = 1
    hold: int = 1
    fine: int = 1


class LendingDesk:
    """The circulation desk of the library.

    A new desk comes with one member, ``M-0001`` (Ada Park), and five items,
    ``I-0001`` to ``I-0005``, all available. There are no loans, holds or fines.

    Args:
        clock: Returns "today"; defaults to :func:`datetime.date.today`. Useful
            for tests and for back-office replays.
        seed: Load the demo member and items (default ``True``).
    """

    def __init__(self, clock: Optional[Callable[[], date]] = None, seed: bool = True) -> None:
        self._clock = clock or date.today
        self._members: dict[str, Member] = {}
        self._items: dict[str, Item] = {}
        self._loans: dict[str, Loan] = {}
        self._holds: dict[str, Hold] = {}
        self._fines: dict[str, Fine] = {}
        self._next = _Counters()
        if seed:
            self._seed()

    def _seed(self) -> None:
        self.register_member("Ada Park", "ada.park@example.org")
        self.add_item("The Left Hand of Darkness", ItemType.BOOK, creator="Ursula K. Le Guin")
        self.add_item("Braiding Sweetgrass", ItemType.BOOK, creator="Robin Wall Kimmerer")
        self.add_item("Spirited Away", ItemType.DVD, creator="Hayao Miyazaki")
        self.add_item("Cordless drill 18V", ItemType.TOOL)
        self.add_item("Carcassonne", ItemType.BOARD_GAME)

    # ------------------------------------------------------------------ lookups

    def _member(self, member_id: str) -> Member:
        if member_id not in self._members:
            raise NotFoundError(f"no member with id {member_id!r}")
        return self._members[member_id]

    def _item(self, item_id: str) -> Item:
        if item_id not in self._items:
            raise NotFoundError(f"no item with id {item_id!r}")
        return self._items[item_id]

    def _loan(self, loan_id: str) -> Loan:
        if loan_id not in self._loans:
            raise NotFoundError(f"no loan with id {loan_id!r}")
        return self._loans[loan_id]

    def _waiting_holds(self, item_id: str) -> list[Hold]:
        return [h for h in self._holds.values() if h.item_id == item_id and h.status is HoldStatus.WAITING]

    def _ready_hold(self, item_id: str) -> Optional[Hold]:
        return next(
            (h for h in self._holds.values() if h.item_id == item_id and h.status is HoldStatus.READY), None
        )

    def _balance(self, member_id: str) -> Decimal:
        return sum((f.outstanding for f in self._fines.values() if f.member_id == member_id), Decimal("0.00"))

    def _release_to_next_hold(self, item: Item) -> None:
        waiting = self._waiting_holds(item.item_id)
        if waiting:
            nxt = waiting[0]
            nxt.status = HoldStatus.READY
            nxt.ready_since = self._clock()
            item.status = ItemStatus.ON_HOLD_SHELF
        else:
            item.status = ItemStatus.AVAILABLE

    # ------------------------------------------------------------------ members

    def register_member(self, name: str, email: str, max_loans: int = 5) -> Member:
        """Register a new library member.

        Args:
            name: Full name as shown on the library card.
            email: Contact address; must be unique among members.
            max_loans: How many items the member may have out at once (1-20).

        Returns:
            The new member; ``member_id`` looks like ``"M-0002"``.

        Raises:
            ValueError: Empty name, malformed or already registered email, or
                ``max_loans`` out of range.
        """
        name = name.strip()
        email = email.strip().lower()
        if not name:
            raise ValueError("name must not be empty")
        if not _EMAIL_RE.match(email):
            raise ValueError(f"invalid email address: {email!r}")
        if any(m.email == email for m in self._members.values()):
            raise ValueError(f"{email} is already registered")
        if not 1 <= max_loans <= 20:
            raise ValueError("max_loans must be between 1 and 20")
        member = Member(
            member_id=f"M-{self._next.member:04d}",
            name=name,
            email=email,
            joined_on=self._clock(),
            max_loans=max_loans,
        )
        self._next.member += 1
        self._members[member.member_id] = member
        return member

    def get_member(self, member_id: str) -> Member:
        """Return the member record for ``member_id``.

        Raises:
            NotFoundError: Unknown member id.
        """
        return self._member(member_id)

    # ------------------------------------------------------------------ catalogue

    def add_item(
        self,
        title: str,
        item_type: ItemType,
        creator: Optional[str] = None,
        loan_period_days: Optional[int] = None,
    ) -> Item:
        """Add an item to the lending collection.

        Args:
            title: Title or short description.
            item_type: What kind of item it is.
            creator: Author, director, maker...; optional.
            loan_period_days: Override the default loan period for the type
                (books 21 days, board games 14, DVDs and tools 7). 1-60.

        Returns:
            The new item, available for loan; ``item_id`` looks like ``"I-0006"``.
        """
        title = title.strip()
        if not title:
            raise ValueError("title must not be empty")
        if not isinstance(item_type, ItemType):
            raise TypeError(f"item_type must be an ItemType, got {item_type!r}")
        if loan_period_days is None:
            loan_period_days = _DEFAULT_LOAN_DAYS[item_type]
        elif not 1 <= loan_period_days <= 60:
            raise ValueError("loan_period_days must be between 1 and 60")
        item = Item(
            item_id=f"I-{self._next.item:04d}",
            title=title,
            item_type=item_type,
            creator=creator.strip() if creator else None,
            loan_period_days=loan_period_days,
        )
        self._next.item += 1
        self._items[item.item_id] = item
        return item

    def search_items(
        self,
        text: str = "",
        item_type: Optional[ItemType] = None,
        status: Optional[ItemStatus] = None,
    ) -> list[Item]:
        """Search the collection by title/creator text, type and status.

        An empty search returns every item, sorted by id.
        """
        needle = text.strip().lower()
        return [
            item
            for item in self._items.values()
            if (not needle or needle in item.title.lower() or needle in (item.creator or "").lower())
            and (item_type is None or item.item_type is item_type)
            and (status is None or item.status is status)
        ]

    # ------------------------------------------------------------------ circulation

    def check_out(self, member_id: str, item_id: str) -> Loan:
        """Lend an item to a member, due after the item's loan period.

        An item on the hold shelf can only be checked out by the member whose
        hold is ready; doing so fulfils the hold.

        Raises:
            NotFoundError: Unknown member or item.
            ItemUnavailableError: The item is on loan, or reserved for someone else.
            BorrowingBlockedError: Loan limit reached or 10.00+ in unpaid fines.
        """
        member = self._member(member_id)
        item = self._item(item_id)
        ready = None
        if item.status is ItemStatus.ON_LOAN:
            raise ItemUnavailableError(f"{item.item_id} is already on loan")
        if item.status is ItemStatus.ON_HOLD_SHELF:
            ready = self._ready_hold(item.item_id)
            if ready is None or ready.member_id != member_id:
                raise ItemUnavailableError(f"{item.item_id} is on the hold shelf for another member")
        active = sum(1 for ln in self._loans.values() if ln.member_id == member_id and ln.status is LoanStatus.ACTIVE)
        if active >= member.max_loans:
            raise BorrowingBlockedError(f"{member_id} already has {active} items out (limit {member.max_loans})")
        owed = self._balance(member_id)
        if owed >= BLOCKING_BALANCE:
            raise BorrowingBlockedError(f"{member_id} owes {owed} in fines; pay before borrowing")

        today = self._clock()
        loan = Loan(
            loan_id=f"L-{self._next.loan:06d}",
            member_id=member_id,
            item_id=item_id,
            checked_out_on=today,
            due_on=today + timedelta(days=item.loan_period_days),
        )
        self._next.loan += 1
        self._loans[loan.loan_id] = loan
        item.status = ItemStatus.ON_LOAN
        if ready is not None:
            ready.status = HoldStatus.FULFILLED
        return loan

    def return_item(self, loan_id: str, returned_on: Optional[date] = None) -> Loan:
        """Check an item back in.

        Args:
            loan_id: The loan being closed, e.g. ``"L-000001"``.
            returned_on: When the item was dropped off, for items found in the
                book drop; defaults to today. Cannot be before the checkout
                date or after today.

        Returns:
            The closed loan. If it came back late, ``loan.fine`` holds the fine
            that was raised (0.25 per day late, at most 10.00).

        Raises:
            NotFoundError: Unknown loan id.
            ValueError: The loan was already returned, or ``returned_on`` is out of range.
        """
        loan = self._loan(loan_id)
        if loan.status is LoanStatus.RETURNED:
            raise ValueError(f"{loan_id} was already returned on {loan.returned_on.isoformat()}")
        today = self._clock()
        returned_on = returned_on or today
        if returned_on < loan.checked_out_on:
            raise ValueError("returned_on is before the checkout date")
        if returned_on > today:
            raise ValueError("returned_on cannot be in the future")

        loan.status = LoanStatus.RETURNED
        loan.returned_on = returned_on
        days_late = (returned_on - loan.due_on).days
        if days_late > 0:
            fine = Fine(
                fine_id=f"F-{self._next.fine:05d}",
                member_id=loan.member_id,
                loan_id=loan.loan_id,
                amount=min(DAILY_FINE * days_late, MAX_FINE),
                reason=f"returned {days_late} day(s) late",
            )
            self._next.fine += 1
            self._fines[fine.fine_id] = fine
            loan.fine = fine
        self._release_to_next_hold(self._items[loan.item_id])
        return loan

    def renew_loan(self, loan_id: str) -> Loan:
        """Extend an active loan by another loan period, counted from the current due date.

        Raises:
            NotFoundError: Unknown loan id.
            ValueError: The loan is returned or overdue, or was renewed twice already.
            ItemUnavailableError: Another member has a hold on the item.
        """
        loan = self._loan(loan_id)
        if loan.status is not LoanStatus.ACTIVE:
            raise ValueError(f"{loan_id} has been returned and cannot be renewed")
        if self._clock() > loan.due_on:
            raise ValueError(f"{loan_id} is overdue; return it instead")
        if loan.renewals >= MAX_RENEWALS:
            raise ValueError(f"{loan_id} has already been renewed {MAX_RENEWALS} times")
        if self._waiting_holds(loan.item_id):
            raise ItemUnavailableError(f"{loan.item_id} has holds waiting and cannot be renewed")
        item = self._items[loan.item_id]
        loan.due_on += timedelta(days=item.loan_period_days)
        loan.renewals += 1
        return loan

    def list_loans(self, member_id: str, include_returned: bool = False) -> list[Loan]:
        """List a member's loans, active ones only unless ``include_returned`` is set.

        Raises:
            NotFoundError: Unknown member id.
        """
        self._member(member_id)
        return [
            ln
            for ln in self._loans.values()
            if ln.member_id == member_id and (include_returned or ln.status is LoanStatus.ACTIVE)
        ]

    # ------------------------------------------------------------------ holds

    def place_hold(self, member_id: str, item_id: str) -> Hold:
        """Join the waiting list for an item that is currently out.

        Raises:
            NotFoundError: Unknown member or item.
            ItemUnavailableError: The item is on the shelf (just borrow it), or
                the member is the one currently borrowing it.
            ValueError: The member already has an open hold on the item.
        """
        self._member(member_id)
        item = self._item(item_id)
        if item.status is ItemStatus.AVAILABLE:
            raise ItemUnavailableError(f"{item_id} is available on the shelf; check it out instead")
        current = next(
            (ln for ln in self._loans.values() if ln.item_id == item_id and ln.status is LoanStatus.ACTIVE), None
        )
        if current is not None and current.member_id == member_id:
            raise ItemUnavailableError(f"{member_id} is currently borrowing {item_id}")
        if any(
            h.member_id == member_id and h.item_id == item_id and h.status in (HoldStatus.WAITING, HoldStatus.READY)
            for h in self._holds.values()
        ):
            raise ValueError(f"{member_id} already has a hold on {item_id}")
        hold = Hold(
            hold_id=f"H-{self._next.hold:05d}",
            member_id=member_id,
            item_id=item_id,
            placed_on=self._clock(),
        )
        self._next.hold += 1
        self._holds[hold.hold_id] = hold
        return hold

    def cancel_hold(self, hold_id: str) -> Hold:
        """Cancel a waiting or ready hold. A ready item passes to the next in line.

        Raises:
            NotFoundError: Unknown hold id.
            ValueError: The hold is already fulfilled or cancelled.
        """
        if hold_id not in self._holds:
            raise NotFoundError(f"no hold with id {hold_id!r}")
        hold = self._holds[hold_id]
        if hold.status not in (HoldStatus.WAITING, HoldStatus.READY):
            raise ValueError(f"{hold_id} is already {hold.status.value}")
        was_ready = hold.status is HoldStatus.READY
        hold.status = HoldStatus.CANCELLED
        if was_ready:
            self._release_to_next_hold(self._items[hold.item_id])
        return hold

    # ------------------------------------------------------------------ fines

    def list_fines(self, member_id: str, unpaid_only: bool = True) -> list[Fine]:
        """List a member's fines (by default only those with something still owed).

        Raises:
            NotFoundError: Unknown member id.
        """
        self._member(member_id)
        return [
            f
            for f in self._fines.values()
            if f.member_id == member_id and (not unpaid_only or f.outstanding > 0)
        ]

    def pay_fine(self, fine_id: str, amount: Decimal) -> Fine:
        """Record a payment towards a fine.

        Args:
            fine_id: e.g. ``"F-00001"``.
            amount: Positive amount with at most two decimals, not more than
                what is still owed. Pass a ``Decimal`` (or a string such as ``"2.50"``).

        Returns:
            The updated fine.

        Raises:
            NotFoundError: Unknown fine id.
            ValueError: Bad amount, overpayment, or the fine is already paid.
        """
        if fine_id not in self._fines:
            raise NotFoundError(f"no fine with id {fine_id!r}")
        if isinstance(amount, float):
            raise TypeError("amount must be a Decimal or string, not float")
        try:
            value = Decimal(amount)
        except (InvalidOperation, TypeError):
            raise ValueError(f"invalid amount: {amount!r}") from None
        if not value.is_finite() or value <= 0:
            raise ValueError("amount must be positive")
        if value != value.quantize(Decimal("0.01")):
            raise ValueError("amount must have at most two decimal places")
        fine = self._fines[fine_id]
        if fine.outstanding == 0:
            raise ValueError(f"{fine_id} is already paid")
        if value > fine.outstanding:
            raise ValueError(f"payment {value} exceeds the {fine.outstanding} outstanding on {fine_id}")
        fine.paid += value
        return fine
