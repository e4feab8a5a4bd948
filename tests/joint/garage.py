"""A car repair shop's workshop system: a mechanic signs in, books vehicles in for service, closes jobs and bills
them.

A class whose methods are the tools, with the session kept on the instance. Every call but the sign-in needs the
token it returns. Plates have a fixed form ("AB-123-CD") and days are ISO dates, both checked before anything is
looked up; job and invoice numbers count up from 1.
"""

from __future__ import annotations

import re
import secrets
from datetime import date

FIXTURES = {"username": "mo", "password": "spanner-42"}

_PLATE = re.compile(r"^[A-Z]{2}-\d{3}-[A-Z]{2}$")


class Garage:
    """The workshop: vehicles, service jobs and invoices."""

    def __init__(self) -> None:
        self._users = {"mo": "spanner-42"}
        self._token: str | None = None
        self._vehicles: dict[str, dict] = {
            "AB-123-CD": {"plate": "AB-123-CD", "model": "Corolla 2016", "owner": "Ines Vidal"},
            "EF-456-GH": {"plate": "EF-456-GH", "model": "Golf 2019", "owner": "Tom Berg"},
            "JK-789-LM": {"plate": "JK-789-LM", "model": "Transit 2021", "owner": "Parcels Ltd"},
        }
        self._jobs: dict[int, dict] = {
            1: {"job_id": 1, "plate": "EF-456-GH", "day": "2025-04-02", "status": "open"},
        }
        self._invoices: dict[int, dict] = {}

    def _check(self, token: str) -> None:
        if self._token is None or token != self._token:
            raise PermissionError("sign in first")

    def _job(self, job_id: int) -> dict:
        if job_id not in self._jobs:
            raise KeyError(f"no job {job_id}")
        return self._jobs[job_id]

    def sign_in(self, username: str, password: str) -> dict:
        """Start a session.

        :param username: The mechanic's user name.
        :param password: Their password.
        :returns: The session token every other call takes.
        """
        if self._users.get(username) != password:
            raise PermissionError("wrong user name or password")
        self._token = secrets.token_hex(8)
        return {"token": self._token}

    def list_vehicles(self, token: str) -> list[dict]:
        """Every vehicle on the books.

        :param token: The session token.
        :returns: Each vehicle's plate, model and owner.
        """
        self._check(token)
        return [dict(v) for v in self._vehicles.values()]

    def register_vehicle(self, token: str, plate: str, model: str, owner: str) -> dict:
        """Put a vehicle on the books.

        :param token: The session token.
        :param plate: The registration code of the vehicle, like AB-123-CD.
        :param model: Make, model and year.
        :param owner: Who owns it.
        :returns: The vehicle.
        """
        self._check(token)
        if not _PLATE.match(plate):
            raise ValueError("a plate looks like AB-123-CD")
        if plate in self._vehicles:
            raise ValueError(f"{plate} is already registered")
        self._vehicles[plate] = {"plate": plate, "model": model, "owner": owner}
        return dict(self._vehicles[plate])

    def book_service(self, token: str, plate: str, day: str) -> dict:
        """Book a vehicle in for service.

        :param token: The session token.
        :param plate: The registration code of the vehicle, like AB-123-CD.
        :param day: The day, as an ISO date (2025-05-01).
        :returns: The job's number, the plate and the day.
        """
        self._check(token)
        if not _PLATE.match(plate):
            raise ValueError("a plate looks like AB-123-CD")
        try:
            date.fromisoformat(day)
        except ValueError:
            raise ValueError("the day must be an ISO date like 2025-05-01") from None
        if plate not in self._vehicles:
            raise KeyError(f"no vehicle {plate}")
        number = 1 + max(self._jobs, default=0)
        self._jobs[number] = {"job_id": number, "plate": plate, "day": day, "status": "open"}
        return {"job_id": number, "plate": plate, "day": day}

    def get_job(self, token: str, job_id: int) -> dict:
        """One service job.

        :param token: The session token.
        :param job_id: The job's number.
        :returns: The job.
        """
        self._check(token)
        return dict(self._job(job_id))

    def close_job(self, token: str, job_id: int, hours: float) -> dict:
        """Close a job and bill its hours.

        :param token: The session token.
        :param job_id: The job's number.
        :param hours: Hours worked.
        :returns: The invoice's number and amount.
        """
        self._check(token)
        job = self._job(job_id)
        if job["status"] != "open":
            raise ValueError(f"job {job_id} is already closed")
        if not 0 < hours <= 40:
            raise ValueError("hours must be between 0 and 40")
        job["status"] = "closed"
        number = 1 + len(self._invoices)
        self._invoices[number] = {"invoice_id": number, "job_id": job_id, "amount": round(hours * 85.0, 2)}
        return dict(self._invoices[number])

    def get_invoice(self, token: str, invoice_id: int) -> dict:
        """One invoice.

        :param token: The session token.
        :param invoice_id: The invoice's number.
        :returns: The invoice.
        """
        self._check(token)
        if invoice_id not in self._invoices:
            raise KeyError(f"no invoice {invoice_id}")
        return dict(self._invoices[invoice_id])


CLASSES = [Garage]

DESIGNED = [
    ("sign_in", "list_vehicles", None, None, "token"),
    ("sign_in", "book_service", None, None, "token"),
    ("sign_in", "get_job", None, None, "token"),
    ("list_vehicles", "book_service", None, "plate", "plate"),
    ("register_vehicle", "book_service", None, "plate", "plate"),
    ("book_service", "get_job", None, "job_id", "job_id"),
    ("book_service", "close_job", None, "job_id", "job_id"),
    ("close_job", "get_invoice", None, "invoice_id", "invoice_id"),
]
