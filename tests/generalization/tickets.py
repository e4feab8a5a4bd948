"""A help desk whose ticket counter was restored from a backup taken before the last ticket was filed.

A common defect of real services: the next number is one an existing record already has, so the first ticket
opened overwrites that ticket (same number, new title) and only the second gets a number of its own. Written as
module functions over module globals, the way a small service is. What it exercises (an engine rule, generic):

- ``open_ticket`` answers with the number of the ticket it wrote, which the fresh desk already held. Origin credit
  withholds that number from it (it was in the state before), and a reader that succeeds with it before the
  ticket was opened makes the test moot; yet opening a ticket is exactly where a caller gets the number it passes
  on to read the ticket. A success that rewrote a record it was not told about and names it in its reply
  runs again from the state it created (``Engine._mint_again``): the second ticket's number is new, and its offers
  test it; the pair's first moot test gives its budget back, so the first ticket's test does not use up the second's.
"""

from __future__ import annotations

from . import VALUE

_TICKETS: dict[int, dict] = {
    101: {"ticket_id": 101, "title": "Printer jams on page two", "status": "open"},
    102: {"ticket_id": 102, "title": "VPN drops every hour", "status": "open"},
    103: {"ticket_id": 103, "title": "New laptop for Dana", "status": "open"},
}
_NEXT = 103  # restored from the backup taken before ticket 103 was filed


def list_tickets() -> list[int]:
    """The numbers of every ticket on the desk.

    :returns: Ticket numbers, oldest first.
    """
    return sorted(_TICKETS)


def open_ticket(title: str) -> dict:
    """Open a new ticket.

    :param title: What the ticket is about.
    :returns: The new ticket's number and status.
    """
    global _NEXT
    if not title.strip():
        raise ValueError("a ticket needs a title")
    number = _NEXT
    _NEXT += 1
    _TICKETS[number] = {"ticket_id": number, "title": title.strip(), "status": "open"}
    return {"ticket_id": number, "status": "open"}


def get_ticket(ticket_id: int) -> dict:
    """Read a ticket.

    :param ticket_id: Number of the ticket.
    :returns: The ticket's number, title and status.
    """
    if ticket_id not in _TICKETS:
        raise KeyError(f"no ticket {ticket_id}")
    return dict(_TICKETS[ticket_id])


DESIGNED = [
    # The listing names the tickets that the reader takes.
    ("tickets.list_tickets", "tickets.get_ticket", VALUE, None, "ticket_id"),
    # A ticket just opened is read by the number the desk gave it.
    ("tickets.open_ticket", "tickets.get_ticket", "provenance", "ticket_id", "ticket_id"),
]

EXCLUDED = [
    # A ticket read names the number it was given: no source of it.
    ("tickets.get_ticket", None, None, None, None),
    # A title is the caller's to write, and the listing takes nothing.
    (None, "tickets.open_ticket", None, None, "title"),
    (None, "tickets.list_tickets", None, None, None),
]
