"""A web account API: sign in with a username and password, then use the session.

The session is a module-level token set by ``sign_in`` (made with :mod:`secrets`); some endpoints read it
implicitly, one takes it as an argument, as bearer-token APIs do. The sandbox has one test account whose
credentials the operator knows (``FIXTURES``).

Designed relations:

- ``sign_in`` enables ``get_profile``, ``update_email`` and ``list_invoices`` (state): they refuse until someone is
  signed in.
- ``sign_in -> list_invoices`` (provenance, token): the invoice list takes the session token.
- ``list_invoices -> download_invoice`` (invoice_id).
"""

from __future__ import annotations

import hashlib
import secrets

_users: dict[str, dict] = {
    "alice": {
        "password_sha256": hashlib.sha256(b"correct-horse-battery").hexdigest(),
        "email": "alice@example.com",
        "invoices": [
            {"invoice_id": "INV-2024-0007", "amount": 120.0, "paid": True},
            {"invoice_id": "INV-2024-0012", "amount": 89.5, "paid": False},
        ],
    }
}
_session_token: str | None = None
_session_user: str | None = None


def _current_user() -> dict:
    if _session_token is None or _session_user is None:
        raise PermissionError("not signed in: call sign_in first")
    return _users[_session_user]


def sign_in(username: str, password: str) -> dict:
    """Sign in to an existing account.

    Args:
        username: The account's username.
        password: The account's password.

    Returns:
        The session token for authenticated calls.
    """
    global _session_token, _session_user
    user = _users.get(username)
    if user is None or hashlib.sha256(password.encode()).hexdigest() != user["password_sha256"]:
        raise PermissionError("wrong username or password")
    _session_token = secrets.token_hex(16)
    _session_user = username
    return {"token": _session_token}


def sign_out() -> dict:
    """End the current session.

    Returns:
        Whether a session was ended.
    """
    global _session_token, _session_user
    ended = _session_token is not None
    _session_token, _session_user = None, None
    return {"signed_out": ended}


def get_profile() -> dict:
    """Show the signed-in user's profile.

    Returns:
        The username and email of the account.
    """
    user = _current_user()
    return {"username": _session_user, "email": user["email"]}


def update_email(email: str) -> dict:
    """Change the signed-in user's email address.

    Args:
        email: The new email address.

    Returns:
        The updated email address.
    """
    user = _current_user()
    if "@" not in email or "." not in email.rsplit("@", 1)[-1]:
        raise ValueError(f"{email!r} is not a valid email address")
    user["email"] = email
    return {"email": email}


def list_invoices(token: str) -> list[dict]:
    """List the invoices of the signed-in account.

    Args:
        token: The session token returned by sign_in.

    Returns:
        Each invoice's id, amount and whether it is paid.
    """
    if _session_token is None or not secrets.compare_digest(token, _session_token):
        raise PermissionError("invalid or expired token")
    return [dict(inv) for inv in _current_user()["invoices"]]


def download_invoice(invoice_id: str) -> dict:
    """Download one invoice of the signed-in account as text.

    Args:
        invoice_id: The id of the invoice.

    Returns:
        The invoice's id and its text.
    """
    user = _current_user()
    for inv in user["invoices"]:
        if inv["invoice_id"] == invoice_id:
            return {"invoice_id": invoice_id, "text": f"Invoice {invoice_id}: {inv['amount']:.2f} EUR"}
    raise KeyError(f"no invoice {invoice_id}")


FIXTURES = {"username": "alice", "password": "correct-horse-battery"}

# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("account.sign_in", "account.get_profile", "state", None, None),
    ("account.sign_in", "account.update_email", "state", None, None),
    # Only the current session token is accepted, so any control is refused: provenance.
    ("account.sign_in", "account.list_invoices", "provenance", "token", "token"),
    ("account.list_invoices", "account.download_invoice", VALUE, "invoice_id", "invoice_id"),
]

EXCLUDED = [
    # Signing out disables; it enables nothing.
    ("account.sign_out", None, None, None, None),
    # A profile read enables nothing and no endpoint needs its values to succeed (update_email takes any new
    # address, so at most a compatibility of email -> email is defensible).
    ("account.get_profile", None, ("provenance", "state"), None, None),
    ("account.download_invoice", None, None, "invoice_id", None),
]
