"""An address book and a messaging app on top of it.

Contacts and messages live in module globals. Messages can only go to a saved contact, by phone number in
international form. The owner's own number is a fact about the device the operator knows (``FIXTURES``).

Designed relations:

- ``search_contacts -> send_message`` (phone_number): a message needs a saved contact's number; a
  different well-formed number that is not a contact is refused.
- ``send_message -> get_message`` (message_id): only a sent message can be shown.
- ``search_contacts -> get_contact`` (contact_id): the id of a saved contact opens it.
- ``add_contact -> send_message``: a contact just added can be messaged.
"""

from __future__ import annotations

from typing import TypedDict


class Contact(TypedDict):
    """One saved contact."""

    contact_id: int
    name: str
    phone_number: str
    email: str


_contacts: list[Contact] = [
    {"contact_id": 1, "name": "Maria Lopez", "phone_number": "+34611223344", "email": "maria.lopez@example.com"},
    {"contact_id": 2, "name": "Kenji Sato", "phone_number": "+819012345678", "email": "kenji@example.jp"},
    {"contact_id": 3, "name": "Aisha Bello", "phone_number": "+2348031234567", "email": "aisha.bello@example.org"},
]
_messages: list[dict] = []
OWNER_NUMBER = "+14155550100"


def _check_phone_number(phone_number: str) -> str:
    number = phone_number.replace(" ", "").replace("-", "")
    if not number.startswith("+"):
        raise ValueError("phone_number must start with '+' and country code")
    if not number[1:].isdigit() or not 8 <= len(number) - 1 <= 15:
        raise ValueError("phone_number must have 8 to 15 digits after the '+'")
    return number


def search_contacts(
    name: str | None = None, phone_number: str | None = None, email: str | None = None
) -> list[Contact]:
    """Search the address book. With no criteria, every contact is listed.

    Args:
        name: Part of the contact's name, case-insensitive.
        phone_number: The phone number to search for.
        email: The email address to search for.

    Returns:
        The matching contacts.
    """
    found = []
    for c in _contacts:
        if name is not None and name.lower() not in c["name"].lower():
            continue
        if phone_number is not None and phone_number.replace(" ", "") != c["phone_number"]:
            continue
        if email is not None and email.lower() != c["email"].lower():
            continue
        found.append(dict(c))
    return found


def get_contact(contact_id: int) -> Contact:
    """Show one saved contact.

    Args:
        contact_id: The id of the contact.

    Returns:
        The contact.
    """
    for c in _contacts:
        if c["contact_id"] == contact_id:
            return dict(c)
    raise ValueError(f"no contact with id {contact_id}")


def add_contact(name: str, phone_number: str, email: str = "") -> Contact:
    """Save a new contact.

    Args:
        name: Full name of the person.
        phone_number: Their phone number in international form.
        email: Their email address, if known.

    Returns:
        The saved contact with its new id.
    """
    number = _check_phone_number(phone_number)
    if not name.strip():
        raise ValueError("name must not be empty")
    if any(c["phone_number"] == number for c in _contacts):
        raise ValueError(f"a contact with number {number} already exists")
    contact: Contact = {
        "contact_id": max(c["contact_id"] for c in _contacts) + 1,
        "name": name,
        "phone_number": number,
        "email": email,
    }
    _contacts.append(contact)
    return dict(contact)


def send_message(phone_number: str, text: str) -> dict:
    """Send a text message to a saved contact.

    Args:
        phone_number: The contact's phone number.
        text: The message to send.

    Returns:
        The id of the sent message.
    """
    number = _check_phone_number(phone_number)
    if not any(c["phone_number"] == number for c in _contacts):
        raise ValueError(f"{number} is not a saved contact")
    if not text:
        raise ValueError("text must not be empty")
    message = {"message_id": len(_messages) + 1, "sender": OWNER_NUMBER, "recipient": number, "text": text}
    _messages.append(message)
    return {"message_id": message["message_id"]}


def get_message(message_id: int) -> dict:
    """Show a message that was sent.

    Args:
        message_id: The id of the message.

    Returns:
        The message with its sender, recipient and text.
    """
    for m in _messages:
        if m["message_id"] == message_id:
            return dict(m)
    raise ValueError(f"no message with id {message_id}")


def search_messages(query: str) -> list[dict]:
    """Find sent messages whose text contains a word.

    Args:
        query: The word to look for in the message text.

    Returns:
        The matching messages.
    """
    if not query.strip():
        raise ValueError("query must not be empty")
    return [dict(m) for m in _messages if query.lower() in m["text"].lower()]


FIXTURES = {"owner_phone_number": OWNER_NUMBER}

# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("contacts.search_contacts", "contacts.send_message", VALUE, "phone_number", "phone_number"),
    ("contacts.search_contacts", "contacts.get_contact", VALUE, "contact_id", "contact_id"),
    ("contacts.send_message", "contacts.get_message", VALUE, "message_id", "message_id"),
    # A contact just added can be messaged: either its number is offered (provenance) or the same call that was
    # refused before succeeds after it (state); both are the designed dependency.
    ("contacts.add_contact", "contacts.send_message", ("provenance", "compatibility", "state"), None, None),
]

EXCLUDED = [
    # A name is not a search word of messages: the only "evidence" would be an empty result against a control
    # that omits the required query (vacuous).
    ("contacts.search_contacts", "contacts.search_messages", None, None, "query"),
    # Fields that coincide only because one literal filled them all.
    (None, None, None, "name", "phone_number"),
    (None, None, None, "text", "phone_number"),
    (None, None, None, "email", "phone_number"),
    (None, None, None, "name", "query"),
    # Small integer ids of different things coincide: a contact id is not a message id.
    (None, None, None, "contact_id", "message_id"),
    (None, None, None, "message_id", "contact_id"),
    # get_contact hands back the id it was given: a read that echoes its input provides nothing.
    ("contacts.get_contact", "contacts.get_contact", None, None, None),
    ("contacts.get_message", "contacts.get_message", None, None, None),
    # Reading a message does not provide a number to message (the recipient came from the contacts).
    ("contacts.get_message", "contacts.send_message", None, None, None),
]
