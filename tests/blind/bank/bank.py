"""A small retail banking backend.

Customers register, sign in to get a session token, open checking or savings
accounts, move money between accounts, pull statements and manage debit
cards. Everything lives in memory in a :class:`Bank` instance.

Money is always :class:`decimal.Decimal` with at most two decimal places
(floats are rejected); every identifier is a :class:`uuid.UUID`.

Demo customer (present in a fresh ``Bank()``)::

    email:    demo@examplebank.test
    password: demo-pass-123

with a checking account holding 1250.00 and a savings account holding 5000.00.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from decimal import Decimal, InvalidOperation
from enum import Enum
from typing import NamedTuple, Optional, Union
from uuid import UUID, uuid4

__all__ = [
    "Bank",
    "BankError",
    "AuthenticationError",
    "NotFoundError",
    "InsufficientFundsError",
    "CardFrozenError",
    "LimitExceededError",
    "AccountType",
    "CardStatus",
    "Customer",
    "Session",
    "Account",
    "Transaction",
    "Transfer",
    "StatementLine",
    "Statement",
    "Card",
]

CENT = Decimal("0.01")
DAILY_TRANSFER_LIMIT = Decimal("5000.00")
MAX_CASH_DEPOSIT = Decimal("10000.00")
SESSION_TTL = timedelta(minutes=30)
_EMAIL_RE = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


# --------------------------------------------------------------------------- errors


class BankError(Exception):
    """Base class for banking errors."""


class AuthenticationError(BankError):
    """Bad credentials, or a missing / expired / signed-out session token."""


class NotFoundError(BankError, LookupError):
    """No account or card with that id is visible to the caller."""


class InsufficientFundsError(BankError):
    """The account balance does not cover the debit."""


class CardFrozenError(BankError):
    """The card is frozen and cannot be used."""


class LimitExceededError(BankError):
    """A daily or per-transaction limit would be exceeded."""


# --------------------------------------------------------------------------- types


class AccountType(Enum):
    CHECKING = "checking"
    SAVINGS = "savings"


class CardStatus(Enum):
    ACTIVE = "active"
    FROZEN = "frozen"


@dataclass(frozen=True)
class Customer:
    customer_id: UUID
    full_name: str
    email: str
    date_of_birth: date
    created_at: datetime


@dataclass(frozen=True)
class Session:
    """Returned by :meth:`Bank.sign_in`; pass ``token`` to the other operations."""

    token: str
    customer_id: UUID
    expires_at: datetime


@dataclass
class Account:
    account_id: UUID
    customer_id: UUID
    account_type: AccountType
    account_number: str
    nickname: Optional[str]
    balance: Decimal
    opened_at: datetime


@dataclass(frozen=True)
class Transaction:
    transaction_id: UUID
    account_id: UUID
    posted_at: datetime
    amount: Decimal  # positive = credit, negative = debit
    description: str
    balance_after: Decimal


@dataclass(frozen=True)
class Transfer:
    transfer_id: UUID
    from_account_id: UUID
    to_account_id: UUID
    amount: Decimal
    reference: str
    created_at: datetime


class StatementLine(NamedTuple):
    posted_at: datetime
    description: str
    amount: Decimal
    balance_after: Decimal


@dataclass(frozen=True)
class Statement:
    account_id: UUID
    account_number: str
    start: date
    end: date
    opening_balance: Decimal
    closing_balance: Decimal
    lines: list[StatementLine] = field(default_factory=list)


@dataclass
class Card:
    card_id: UUID
    account_id: UUID
    last4: str
    expires: str  # "MM/YY"
    status: CardStatus = CardStatus.ACTIVE


@dataclass
class _CustomerRecord:
    customer: Customer
    salt: bytes
    password_hash: bytes


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _hash(password: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", password.encode(), salt, 100_000)


def _as_uuid(value: Union[UUID, str], what: str) -> UUID:
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError:
        raise ValueError(f"{what} must be a UUID, got {value!r}") from None


def _money(amount: Union[Decimal, str, int], what: str = "amount") -> Decimal:
    if isinstance(amount, float):
        raise TypeError(f"{what} must be a Decimal (or str/int), not float")
    try:
        value = Decimal(amount)
    except (InvalidOperation, TypeError, ValueError):
        raise ValueError(f"{what} is not a valid amount: {amount!r}") from None
    if not value.is_finite():
        raise ValueError(f"{what} must be finite")
    if value != value.quantize(CENT):
        raise ValueError(f"{what} must have at most two decimal places")
    return value.quantize(CENT)


# --------------------------------------------------------------------------- bank


class Bank:
    """In-memory bank. ``Bank()`` starts with the demo customer and two accounts."""

    def __init__(self, seed: bool = True) -> None:
        self._customers: dict[UUID, _CustomerRecord] = {}
        self._by_email: dict[str, UUID] = {}
        self._sessions: dict[str, Session] = {}
        self._accounts: dict[UUID, Account] = {}
        self._ledger: dict[UUID, list[Transaction]] = {}
        self._transfers: list[Transfer] = []
        self._cards: dict[UUID, Card] = {}
        self._next_account_number = 10_000_001
        if seed:
            self._seed()

    def _seed(self) -> None:
        demo = self.register_customer("Dana Demo", "demo@examplebank.test", "demo-pass-123", date(1990, 5, 17))
        for account_type, opening in ((AccountType.CHECKING, "1250.00"), (AccountType.SAVINGS, "5000.00")):
            account = self._create_account(demo.customer_id, account_type, None)
            self._post(account, Decimal(opening), "Opening balance")

    # ------------------------------------------------------------ internals

    def _customer_for(self, token: str) -> UUID:
        session = self._sessions.get(token) if isinstance(token, str) else None
        if session is None:
            raise AuthenticationError("not signed in: unknown or signed-out session token")
        if session.expires_at <= _now():
            del self._sessions[token]
            raise AuthenticationError("session expired; sign in again")
        return session.customer_id

    def _own_account(self, customer_id: UUID, account_id: Union[UUID, str]) -> Account:
        account = self._accounts.get(_as_uuid(account_id, "account_id"))
        if account is None or account.customer_id != customer_id:
            raise NotFoundError(f"no account {account_id} for this customer")
        return account

    def _own_card(self, customer_id: UUID, card_id: Union[UUID, str]) -> Card:
        card = self._cards.get(_as_uuid(card_id, "card_id"))
        if card is None or self._accounts[card.account_id].customer_id != customer_id:
            raise NotFoundError(f"no card {card_id} for this customer")
        return card

    def _create_account(self, customer_id: UUID, account_type: AccountType, nickname: Optional[str]) -> Account:
        account = Account(
            account_id=uuid4(),
            customer_id=customer_id,
            account_type=account_type,
            account_number=str(self._next_account_number),
            nickname=nickname,
            balance=Decimal("0.00"),
            opened_at=_now(),
        )
        self._next_account_number += 1
        self._accounts[account.account_id] = account
        self._ledger[account.account_id] = []
        return account

    def _post(self, account: Account, amount: Decimal, description: str) -> Transaction:
        account.balance += amount
        txn = Transaction(
            transaction_id=uuid4(),
            account_id=account.account_id,
            posted_at=_now(),
            amount=amount,
            description=description,
            balance_after=account.balance,
        )
        self._ledger[account.account_id].append(txn)
        return txn

    # ------------------------------------------------------------ customers & sessions

    def register_customer(self, full_name: str, email: str, password: str, date_of_birth: date) -> Customer:
        """Enrol a new customer for online banking.

        Args:
            full_name: Legal name.
            email: Sign-in email; case-insensitive and unique.
            password: At least 10 characters, including a digit.
            date_of_birth: Customers must be 18 or older.

        Returns:
            The new customer. Registration does not sign the customer in; call
            :meth:`sign_in` with the same email and password.

        Raises:
            ValueError: Any field is invalid or the email is taken.
        """
        full_name = full_name.strip()
        email = email.strip().lower()
        if not full_name:
            raise ValueError("full_name must not be empty")
        if not _EMAIL_RE.match(email):
            raise ValueError(f"invalid email address {email!r}")
        if email in self._by_email:
            raise ValueError(f"{email} is already registered")
        if len(password) < 10 or not any(ch.isdigit() for ch in password):
            raise ValueError("password must be at least 10 characters and contain a digit")
        if not isinstance(date_of_birth, date) or isinstance(date_of_birth, datetime):
            raise TypeError("date_of_birth must be a datetime.date")
        today = date.today()
        age = today.year - date_of_birth.year - ((today.month, today.day) < (date_of_birth.month, date_of_birth.day))
        if age < 18:
            raise ValueError("customers must be at least 18 years old")
        customer = Customer(
            customer_id=uuid4(),
            full_name=full_name,
            email=email,
            date_of_birth=date_of_birth,
            created_at=_now(),
        )
        salt = secrets.token_bytes(16)
        self._customers[customer.customer_id] = _CustomerRecord(customer, salt, _hash(password, salt))
        self._by_email[email] = customer.customer_id
        return customer

    def sign_in(self, email: str, password: str) -> Session:
        """Start a session that lasts 30 minutes.

        Returns:
            A :class:`Session` whose ``token`` authorises the other operations.

        Raises:
            AuthenticationError: Unknown email or wrong password.
        """
        customer_id = self._by_email.get(email.strip().lower())
        record = self._customers.get(customer_id) if customer_id else None
        if record is None or not hmac.compare_digest(record.password_hash, _hash(password, record.salt)):
            raise AuthenticationError("invalid email or password")
        session = Session(token=secrets.token_urlsafe(32), customer_id=customer_id, expires_at=_now() + SESSION_TTL)
        self._sessions[session.token] = session
        return session

    def sign_out(self, token: str) -> None:
        """End a session; the token stops working immediately.

        Raises:
            AuthenticationError: The token is not an active session.
        """
        self._customer_for(token)
        del self._sessions[token]

    # ------------------------------------------------------------ accounts

    def open_account(self, token: str, account_type: AccountType, nickname: Optional[str] = None) -> Account:
        """Open a new, empty account for the signed-in customer.

        Args:
            token: Session token from :meth:`sign_in`.
            account_type: ``AccountType.CHECKING`` or ``AccountType.SAVINGS``.
            nickname: Optional display name, up to 40 characters.

        Returns:
            The account, with balance 0.00.
        """
        customer_id = self._customer_for(token)
        if not isinstance(account_type, AccountType):
            raise TypeError(f"account_type must be an AccountType, got {account_type!r}")
        if nickname is not None:
            nickname = nickname.strip() or None
            if nickname and len(nickname) > 40:
                raise ValueError("nickname must be at most 40 characters")
        owned = sum(1 for a in self._accounts.values() if a.customer_id == customer_id)
        if owned >= 10:
            raise LimitExceededError("a customer can hold at most 10 accounts")
        return self._create_account(customer_id, account_type, nickname)

    def list_accounts(self, token: str) -> list[Account]:
        """List the signed-in customer's accounts, oldest first."""
        customer_id = self._customer_for(token)
        return [a for a in self._accounts.values() if a.customer_id == customer_id]

    def get_balance(self, token: str, account_id: UUID) -> Decimal:
        """Return the current balance of one of the customer's accounts.

        Raises:
            AuthenticationError: Bad session token.
            NotFoundError: The account does not exist or belongs to someone else.
        """
        customer_id = self._customer_for(token)
        return self._own_account(customer_id, account_id).balance

    def deposit(self, token: str, account_id: UUID, amount: Decimal, description: str = "Cash deposit") -> Transaction:
        """Deposit cash into one of the customer's accounts.

        ``amount`` must be positive and at most 10000.00 per deposit.
        """
        customer_id = self._customer_for(token)
        account = self._own_account(customer_id, account_id)
        value = _money(amount)
        if value <= 0:
            raise ValueError("amount must be positive")
        if value > MAX_CASH_DEPOSIT:
            raise LimitExceededError(f"cash deposits are limited to {MAX_CASH_DEPOSIT}")
        return self._post(account, value, description.strip() or "Cash deposit")

    def transfer(
        self,
        token: str,
        from_account_id: UUID,
        to_account_id: UUID,
        amount: Decimal,
        reference: str = "",
    ) -> Transfer:
        """Move money from one of the customer's accounts to any account at the bank.

        Args:
            token: Session token.
            from_account_id: Source; must belong to the signed-in customer.
            to_account_id: Destination; any account at this bank, including
                another customer's.
            amount: Positive, two decimals at most, e.g. ``Decimal("25.00")``.
            reference: Free text shown on both statements (max 80 chars).

        Raises:
            InsufficientFundsError: The source balance is too low.
            LimitExceededError: More than 5000.00 sent from this customer today.
            NotFoundError: Unknown account(s).
            ValueError: Same source and destination, or bad amount.
        """
        customer_id = self._customer_for(token)
        source = self._own_account(customer_id, from_account_id)
        dest = self._accounts.get(_as_uuid(to_account_id, "to_account_id"))
        if dest is None:
            raise NotFoundError(f"no account {to_account_id} at this bank")
        if dest.account_id == source.account_id:
            raise ValueError("cannot transfer to the same account")
        value = _money(amount)
        if value <= 0:
            raise ValueError("amount must be positive")
        if len(reference) > 80:
            raise ValueError("reference must be at most 80 characters")
        today = _now().date()
        sent_today = sum(
            (
                t.amount
                for t in self._transfers
                if t.created_at.date() == today and self._accounts[t.from_account_id].customer_id == customer_id
            ),
            Decimal("0.00"),
        )
        if sent_today + value > DAILY_TRANSFER_LIMIT:
            raise LimitExceededError(
                f"daily transfer limit {DAILY_TRANSFER_LIMIT} exceeded ({sent_today} already sent today)"
            )
        if source.balance < value:
            raise InsufficientFundsError(f"balance {source.balance} does not cover {value}")
        label = reference.strip() or "Transfer"
        self._post(source, -value, f"{label} to {dest.account_number}")
        self._post(dest, value, f"{label} from {source.account_number}")
        record = Transfer(
            transfer_id=uuid4(),
            from_account_id=source.account_id,
            to_account_id=dest.account_id,
            amount=value,
            reference=reference.strip(),
            created_at=_now(),
        )
        self._transfers.append(record)
        return record

    def get_statement(self, token: str, account_id: UUID, start: date, end: date) -> Statement:
        """Produce a statement for one account between two dates, both inclusive (UTC).

        The period may be at most 366 days and ``start`` must not be after ``end``.
        """
        customer_id = self._customer_for(token)
        account = self._own_account(customer_id, account_id)
        if start > end:
            raise ValueError("start must not be after end")
        if (end - start).days > 366:
            raise ValueError("statement period cannot exceed 366 days")
        lo = datetime.combine(start, time.min, tzinfo=timezone.utc)
        hi = datetime.combine(end + timedelta(days=1), time.min, tzinfo=timezone.utc)
        ledger = self._ledger[account.account_id]
        before = [t for t in ledger if t.posted_at < lo]
        within = [t for t in ledger if lo <= t.posted_at < hi]
        opening = before[-1].balance_after if before else Decimal("0.00")
        closing = within[-1].balance_after if within else opening
        return Statement(
            account_id=account.account_id,
            account_number=account.account_number,
            start=start,
            end=end,
            opening_balance=opening,
            closing_balance=closing,
            lines=[StatementLine(t.posted_at, t.description, t.amount, t.balance_after) for t in within],
        )

    # ------------------------------------------------------------ cards

    def issue_card(self, token: str, account_id: UUID) -> Card:
        """Issue a debit card on a checking account. Cards start active.

        Raises:
            ValueError: The account is a savings account or already has a card.
        """
        customer_id = self._customer_for(token)
        account = self._own_account(customer_id, account_id)
        if account.account_type is not AccountType.CHECKING:
            raise ValueError("debit cards can only be issued on checking accounts")
        if any(c.account_id == account.account_id for c in self._cards.values()):
            raise ValueError(f"account {account.account_number} already has a card")
        expiry = _now().date().replace(day=1)
        card = Card(
            card_id=uuid4(),
            account_id=account.account_id,
            last4=f"{secrets.randbelow(10_000):04d}",
            expires=f"{expiry.month:02d}/{(expiry.year + 4) % 100:02d}",
        )
        self._cards[card.card_id] = card
        return card

    def freeze_card(self, token: str, card_id: UUID) -> Card:
        """Temporarily block a card, e.g. when it is misplaced. Payments are declined while frozen.

        Raises:
            ValueError: The card is already frozen.
        """
        card = self._own_card(self._customer_for(token), card_id)
        if card.status is CardStatus.FROZEN:
            raise ValueError("card is already frozen")
        card.status = CardStatus.FROZEN
        return card

    def unfreeze_card(self, token: str, card_id: UUID) -> Card:
        """Lift a freeze placed with :meth:`freeze_card`.

        Raises:
            ValueError: The card is not frozen.
        """
        card = self._own_card(self._customer_for(token), card_id)
        if card.status is not CardStatus.FROZEN:
            raise ValueError("card is not frozen")
        card.status = CardStatus.ACTIVE
        return card

    def pay_with_card(self, card_id: UUID, amount: Decimal, merchant: str) -> Transaction:
        """Authorise a card payment at a merchant (called by the card network, no session needed).

        Raises:
            NotFoundError: Unknown card.
            CardFrozenError: The card is frozen.
            InsufficientFundsError: The linked account cannot cover the amount.
        """
        card = self._cards.get(_as_uuid(card_id, "card_id"))
        if card is None:
            raise NotFoundError(f"no card {card_id}")
        merchant = merchant.strip()
        if not merchant:
            raise ValueError("merchant must not be empty")
        value = _money(amount)
        if value <= 0:
            raise ValueError("amount must be positive")
        if card.status is CardStatus.FROZEN:
            raise CardFrozenError(f"card ending {card.last4} is frozen")
        account = self._accounts[card.account_id]
        if account.balance < value:
            raise InsufficientFundsError(f"balance does not cover {value}")
        return self._post(account, -value, f"Card {card.last4} at {merchant}")
