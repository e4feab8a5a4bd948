"""An office assistant's back end: messages, meetings and documents, each in a table of its own, numbered by a
small counter of its own.

The way most services number their records: 1, 2, 3, ..., one counter per kind, with the gaps records leave when
they are deleted. So the numbers of one kind are, for the most part, numbers of the other kinds too: message 5,
meeting 5 and document 6 all exist, and a message's number passed where a meeting is asked for often names *some*
meeting. Written as module functions over module globals, the way a small service is. What it exercises (engine
rules, generic):

- a number one kind's listing shows, offered to another kind's input, succeeds where it happens to name a record of
  that kind and fails like a number that names nothing where it does not; the counterfactual test must tell "this
  value identifies what the consumer needs" from "this value happens to exist in the consumer's table". The
  listings are not subsets of one another (deleted records leave different gaps), so every cross-kind pairing
  has numbers of the provider's kind the consumer has never heard of;
- a number a creation mints (the next message, meeting or document) may already be another kind's number: the
  consumer then succeeds with it before the creation ran, and the creation is no source of it;
- the controls: a number in its usual range names an existing record, so the control of a real pairing
  succeeds too (both kinds of value relation are designed, :data:`VALUE`).
"""

from __future__ import annotations

from . import VALUE

_MESSAGES: dict[int, dict] = {
    1: {"id": 1, "sender": "ana@example.com", "subject": "Quarterly numbers", "body": "Attached, as promised."},
    2: {"id": 2, "sender": "raj@example.com", "subject": "Lunch on Friday?", "body": "The usual place at noon."},
    3: {"id": 3, "sender": "it@example.com", "subject": "Password expiry", "body": "Yours expires in 5 days."},
    5: {"id": 5, "sender": "ana@example.com", "subject": "Re: Quarterly numbers", "body": "One more chart."},
    6: {"id": 6, "sender": "li@example.com", "subject": "Offsite agenda", "body": "Draft below, comments?"},
}
_NEXT_MESSAGE = 7

_MEETINGS: dict[int, dict] = {
    1: {"id": 1, "title": "Weekly sync", "day": "2025-03-03", "status": "confirmed"},
    2: {"id": 2, "title": "Budget review", "day": "2025-03-04", "status": "confirmed"},
    4: {"id": 4, "title": "Hiring panel", "day": "2025-03-06", "status": "confirmed"},
    5: {"id": 5, "title": "Offsite planning", "day": "2025-03-07", "status": "confirmed"},
}
_NEXT_MEETING = 6

_DOCUMENTS: dict[int, dict] = {
    1: {"id": 1, "name": "Handbook", "pages": 40, "shared_with": []},
    3: {"id": 3, "name": "Q1 forecast", "pages": 6, "shared_with": ["ana@example.com"]},
    4: {"id": 4, "name": "Offsite agenda", "pages": 2, "shared_with": []},
    6: {"id": 6, "name": "Org chart", "pages": 1, "shared_with": []},
    7: {"id": 7, "name": "Travel policy", "pages": 12, "shared_with": []},
}
_NEXT_DOCUMENT = 8


# -- messages ------------------------------------------------------------------------------------------------------


def list_messages() -> list[dict]:
    """Every message in the inbox, oldest first.

    :returns: Each message's number, sender and subject.
    """
    return [{"id": m["id"], "sender": m["sender"], "subject": m["subject"]} for m in _MESSAGES.values()]


def read_message(message_id: int) -> dict:
    """Read a message.

    :param message_id: Number of the message.
    :returns: The whole message.
    """
    if message_id not in _MESSAGES:
        raise KeyError(f"no message {message_id}")
    return dict(_MESSAGES[message_id])


def delete_message(message_id: int) -> str:
    """Delete a message for good.

    :param message_id: Number of the message.
    :returns: A confirmation.
    """
    if message_id not in _MESSAGES:
        raise KeyError(f"no message {message_id}")
    del _MESSAGES[message_id]
    return f"Message {message_id} deleted."


def send_message(to_email: str, subject: str, body: str) -> dict:
    """Send a message; a copy is kept in the inbox.

    :param to_email: The recipient's e-mail address.
    :param subject: The subject line.
    :param body: The text.
    :returns: The number of the copy kept.
    """
    global _NEXT_MESSAGE
    if "@" not in to_email:
        raise ValueError("the recipient must be an e-mail address")
    number = _NEXT_MESSAGE
    _NEXT_MESSAGE += 1
    _MESSAGES[number] = {"id": number, "sender": "me@example.com", "subject": subject, "body": body}
    return {"id": number, "status": "sent"}


# -- meetings ------------------------------------------------------------------------------------------------------


def list_meetings() -> list[dict]:
    """Every meeting on the calendar, earliest first.

    :returns: Each meeting's number, title and day.
    """
    return [{"id": m["id"], "title": m["title"], "day": m["day"]} for m in _MEETINGS.values()]


def cancel_meeting(meeting_id: int) -> str:
    """Cancel a meeting; its attendees are told.

    :param meeting_id: Number of the meeting.
    :returns: A confirmation.
    """
    if meeting_id not in _MEETINGS:
        raise KeyError(f"no meeting {meeting_id}")
    _MEETINGS[meeting_id]["status"] = "cancelled"
    return f"Meeting {meeting_id} cancelled."


def schedule_meeting(title: str) -> dict:
    """Put a meeting on the calendar, on the first free day.

    :param title: What the meeting is about.
    :returns: The new meeting's number, title and day.
    """
    global _NEXT_MEETING
    if not title.strip():
        raise ValueError("a meeting needs a title")
    number = _NEXT_MEETING
    _NEXT_MEETING += 1
    _MEETINGS[number] = {"id": number, "title": title.strip(), "day": "2025-03-10", "status": "confirmed"}
    return {"id": number, "title": title.strip(), "day": "2025-03-10"}


# -- documents -----------------------------------------------------------------------------------------------------


def list_documents() -> list[dict]:
    """Every document in the drive.

    :returns: Each document's number, name and page count.
    """
    return [{"id": d["id"], "name": d["name"], "pages": d["pages"]} for d in _DOCUMENTS.values()]


def open_document(document_id: int) -> dict:
    """Open a document.

    :param document_id: Number of the document.
    :returns: The document and whom it is shared with.
    """
    if document_id not in _DOCUMENTS:
        raise KeyError(f"no document {document_id}")
    doc = _DOCUMENTS[document_id]
    return {**doc, "shared_with": list(doc["shared_with"])}


def share_document(document_id: int, email: str) -> dict:
    """Share a document with someone.

    :param document_id: Number of the document.
    :param email: Their e-mail address.
    :returns: Whom the document is now shared with.
    """
    if document_id not in _DOCUMENTS:
        raise KeyError(f"no document {document_id}")
    if "@" not in email:
        raise ValueError("share with an e-mail address")
    shared = _DOCUMENTS[document_id]["shared_with"]
    if email not in shared:
        shared.append(email)
    return {"id": document_id, "shared_with": list(shared)}


def create_document(name: str) -> dict:
    """Create an empty document.

    :param name: The document's name.
    :returns: The new document's number.
    """
    global _NEXT_DOCUMENT
    if not name.strip():
        raise ValueError("a document needs a name")
    number = _NEXT_DOCUMENT
    _NEXT_DOCUMENT += 1
    _DOCUMENTS[number] = {"id": number, "name": name.strip(), "pages": 0, "shared_with": []}
    return {"id": number}


MESSAGES = ("desk.list_messages", "desk.send_message")
MEETINGS = ("desk.list_meetings", "desk.schedule_meeting")
DOCUMENTS = ("desk.list_documents", "desk.create_document")
#: consumer -> its input that names a record, by kind
CONSUMERS = {
    "desk.read_message": ("message_id", MESSAGES),
    "desk.delete_message": ("message_id", MESSAGES),
    "desk.cancel_meeting": ("meeting_id", MEETINGS),
    "desk.open_document": ("document_id", DOCUMENTS),
    "desk.share_document": ("document_id", DOCUMENTS),
}

DESIGNED = [
    # Each kind's listing and creation give the numbers its own readers and actions take. The control of a real
    # pairing is a number in the usual range, which names an existing record too: either verdict is one.
    (provider, consumer, VALUE, "id", param)
    for consumer, (param, providers) in CONSUMERS.items()
    for provider in providers
]

EXCLUDED = [
    # A number of one kind never names a record of another kind, whatever record has the same number.
    (provider, consumer, None, None, param)
    for consumer, (param, own) in CONSUMERS.items()
    for provider in MESSAGES + MEETINGS + DOCUMENTS
    if provider not in own
]
