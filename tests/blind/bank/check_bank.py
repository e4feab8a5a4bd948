"""Checks that every dependency listed in DEPENDENCIES.json is real.

Run with:  python check_bank.py
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from uuid import uuid4

from bank import (
    AccountType,
    AuthenticationError,
    Bank,
    CardFrozenError,
    CardStatus,
    InsufficientFundsError,
    NotFoundError,
)

DEMO = ("demo@examplebank.test", "demo-pass-123")
checked: set[tuple[str, str]] = set()


def mark(provider: str, consumer: str) -> None:
    checked.add((provider, consumer))


def expect(exc_type, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        return exc
    raise AssertionError(f"{fn.__name__} did not raise {exc_type.__name__}")


today = date.today()

# ---- register_customer -> sign_in (state) -------------------------------------------
bank = Bank()
expect(AuthenticationError, bank.sign_in, "erin@example.com", "correct-horse-9")
bank.register_customer("Erin Cole", "erin@example.com", "correct-horse-9", date(1985, 1, 2))
bank.sign_in("erin@example.com", "correct-horse-9")
mark("register_customer", "sign_in")

# ---- sign_in -> token consumers ----------------------------------------------------------
bank = Bank()
bad = "not-a-token"
expect(AuthenticationError, bank.list_accounts, bad)
tok = bank.sign_in(*DEMO).token
checking, savings = bank.list_accounts(tok)
mark("sign_in", "list_accounts")

calls = {
    "open_account": lambda t: bank.open_account(t, AccountType.SAVINGS, "Holiday"),
    "get_balance": lambda t: bank.get_balance(t, checking.account_id),
    "deposit": lambda t: bank.deposit(t, checking.account_id, Decimal("100.00")),
    "transfer": lambda t: bank.transfer(t, checking.account_id, savings.account_id, Decimal("10.00"), "test"),
    "get_statement": lambda t: bank.get_statement(t, checking.account_id, today, today),
    "issue_card": lambda t: bank.issue_card(t, checking.account_id),
}
results = {}
for consumer, call in calls.items():
    expect(AuthenticationError, call, bad)
    results[consumer] = call(tok)
    mark("sign_in", consumer)

card = results["issue_card"]
expect(AuthenticationError, bank.freeze_card, bad, card.card_id)
bank.freeze_card(tok, card.card_id)
mark("sign_in", "freeze_card")
expect(AuthenticationError, bank.unfreeze_card, bad, card.card_id)
bank.unfreeze_card(tok, card.card_id)
mark("sign_in", "unfreeze_card")

expect(AuthenticationError, bank.sign_out, bad)
bank.sign_out(tok)
expect(AuthenticationError, bank.list_accounts, tok)   # token is dead now
mark("sign_in", "sign_out")

# ---- account ids from open_account / list_accounts -------------------------------------
for provider in ("open_account", "list_accounts"):
    bank = Bank()
    tok = bank.sign_in(*DEMO).token
    if provider == "open_account":
        acct = bank.open_account(tok, AccountType.CHECKING, "Bills").account_id
        bank_other = bank.list_accounts(tok)[1].account_id   # savings, funded
    else:
        acct = bank.list_accounts(tok)[0].account_id        # demo checking
        bank_other = bank.list_accounts(tok)[1].account_id
    unknown = uuid4()

    expect(NotFoundError, bank.get_balance, tok, unknown)
    bank.get_balance(tok, acct)
    mark(provider, "get_balance")

    expect(NotFoundError, bank.deposit, tok, unknown, Decimal("200.00"))
    bank.deposit(tok, acct, Decimal("200.00"))
    mark(provider, "deposit")

    expect(NotFoundError, bank.transfer, tok, unknown, bank_other, Decimal("5.00"))
    expect(NotFoundError, bank.transfer, tok, acct, unknown, Decimal("5.00"))
    bank.transfer(tok, acct, bank_other, Decimal("5.00"), "rent share")
    mark(provider, "transfer")

    expect(NotFoundError, bank.get_statement, tok, unknown, today - timedelta(days=30), today)
    stmt = bank.get_statement(tok, acct, today - timedelta(days=30), today)
    assert stmt.lines and stmt.closing_balance == bank.get_balance(tok, acct)
    mark(provider, "get_statement")

    expect(NotFoundError, bank.issue_card, tok, unknown)
    bank.issue_card(tok, acct)
    mark(provider, "issue_card")

# another customer's account id is not usable as a source / for reading
bank = Bank()
demo_tok = bank.sign_in(*DEMO).token
demo_checking = bank.list_accounts(demo_tok)[0].account_id
bank.register_customer("Erin Cole", "erin@example.com", "correct-horse-9", date(1985, 1, 2))
erin_tok = bank.sign_in("erin@example.com", "correct-horse-9").token
erin_acct = bank.open_account(erin_tok, AccountType.CHECKING).account_id
expect(NotFoundError, bank.get_balance, erin_tok, demo_checking)
expect(InsufficientFundsError, bank.transfer, erin_tok, erin_acct, demo_checking, Decimal("1.00"))
bank.transfer(demo_tok, demo_checking, erin_acct, Decimal("40.00"), "gift")   # to anyone's account
assert bank.get_balance(erin_tok, erin_acct) == Decimal("40.00")

# ---- card ids from issue_card --------------------------------------------------------------
bank = Bank()
tok = bank.sign_in(*DEMO).token
checking = bank.list_accounts(tok)[0].account_id
unknown = uuid4()
expect(NotFoundError, bank.freeze_card, tok, unknown)
expect(NotFoundError, bank.unfreeze_card, tok, unknown)
expect(NotFoundError, bank.pay_with_card, unknown, Decimal("3.50"), "Corner Cafe")
card = bank.issue_card(tok, checking)

bank.pay_with_card(card.card_id, Decimal("3.50"), "Corner Cafe")
mark("issue_card", "pay_with_card")

# unfreeze needs a prior freeze
expect(ValueError, bank.unfreeze_card, tok, card.card_id)
assert bank.freeze_card(tok, card.card_id).status is CardStatus.FROZEN
mark("issue_card", "freeze_card")
expect(CardFrozenError, bank.pay_with_card, card.card_id, Decimal("1.00"), "Corner Cafe")
assert bank.unfreeze_card(tok, card.card_id).status is CardStatus.ACTIVE
mark("issue_card", "unfreeze_card")
mark("freeze_card", "unfreeze_card")
bank.pay_with_card(card.card_id, Decimal("1.00"), "Corner Cafe")
assert bank.get_balance(tok, checking) == Decimal("1245.50")

# ---- validation spot checks ------------------------------------------------------------------
expect(TypeError, bank.deposit, tok, checking, 10.5)
expect(ValueError, bank.deposit, tok, checking, Decimal("1.001"))
expect(ValueError, bank.issue_card, tok, bank.list_accounts(tok)[1].account_id)  # savings
expect(ValueError, bank.register_customer, "Kid", "kid@example.com", "password123", today - timedelta(days=365))

# ---- not_dependencies spot checks ----------------------------------------------------------
bank = Bank()
cust = bank.register_customer("Finn Ray", "finn@example.com", "another-pass-1", date(1970, 7, 7))
expect(AuthenticationError, bank.open_account, str(cust.customer_id), AccountType.CHECKING)
tok = bank.sign_in(*DEMO).token
checking = bank.list_accounts(tok)[0].account_id
bank.get_statement(tok, checking, today - timedelta(days=400), today - timedelta(days=40))  # empty period

# ---- every listed dependency was exercised --------------------------------------------------
deps = json.loads((Path(__file__).parent / "DEPENDENCIES.json").read_text())
listed = {(d["provider"], d["consumer"]) for d in deps["dependencies"]}
missing = listed - checked
extra = checked - listed
assert not missing, f"dependencies not exercised: {sorted(missing)}"
assert not extra, f"exercised but not listed: {sorted(extra)}"
print(f"bank: all {len(listed)} dependencies verified")
