"""
Appointment desk for a small outpatient clinic.

This module keeps everything in memory: registered patients, the clinic's
doctors, their bookable time slots, appointments and prescriptions. It is
meant to sit behind a reception terminal or a simple web form.

Typical flow::

    >>> import clinic
    >>> p = clinic.register_patient("Jane Roe", "jane@example.org",
    ...                             "+44 20 7946 0018", date(1990, 4, 2))
    >>> doctors = clinic.list_doctors(clinic.Specialty.DERMATOLOGY)
    >>> slots = clinic.find_available_slots(doctors[0].doctor_id)
    >>> appt = clinic.book_appointment(p.patient_id, slots[0].slot_id, "rash")
    >>> clinic.complete_appointment(appt.appointment_id)
    >>> clinic.write_prescription(appt.appointment_id, "Hydrocortisone 1% cream",
    ...                           "apply twice daily", duration_days=10)

The clinic ships with five doctors (``DR-01`` .. ``DR-05``) whose slots are
generated for the next two working weeks, and one demo patient, ``P-1001``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta
from enum import Enum
from typing import NamedTuple, Optional
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, EmailStr, field_validator

__all__ = [
    "Specialty",
    "AppointmentStatus",
    "Doctor",
    "Slot",
    "Patient",
    "Appointment",
    "Prescription",
    "ClinicError",
    "NotFoundError",
    "SlotUnavailableError",
    "AppointmentStateError",
    "register_patient",
    "get_patient",
    "update_patient_contact",
    "list_doctors",
    "find_available_slots",
    "book_appointment",
    "list_appointments",
    "reschedule_appointment",
    "cancel_appointment",
    "complete_appointment",
    "write_prescription",
    "list_prescriptions",
]


# ---------------------------------------------------------------------------
# Exceptions
# ---------------------------------------------------------------------------


class ClinicError(Exception):
    """Base class for all errors raised by the appointment desk."""


class NotFoundError(ClinicError, KeyError):
    """Raised when a patient, doctor, slot or appointment id is unknown."""

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0]) if self.args else ""


class SlotUnavailableError(ClinicError):
    """Raised when a slot is already taken, in the past, or otherwise not bookable."""


class AppointmentStateError(ClinicError):
    """Raised when an operation is not allowed for the appointment's current status."""


# ---------------------------------------------------------------------------
# Data types
# ---------------------------------------------------------------------------


class Specialty(str, Enum):
    """Medical specialties offered at the clinic."""

    GENERAL_PRACTICE = "general_practice"
    CARDIOLOGY = "cardiology"
    DERMATOLOGY = "dermatology"
    PEDIATRICS = "pediatrics"


class AppointmentStatus(str, Enum):
    """Lifecycle of an appointment."""

    BOOKED = "booked"
    COMPLETED = "completed"
    CANCELLED = "cancelled"


@dataclass(frozen=True)
class Doctor:
    """A doctor working at the clinic.

    :ivar doctor_id: Clinic-internal id such as ``"DR-03"``.
    :ivar name: Display name.
    :ivar specialty: The doctor's specialty.
    :ivar room: Consultation room number.
    """

    doctor_id: str
    name: str
    specialty: Specialty
    room: str


class Slot(NamedTuple):
    """A bookable 30-minute consultation slot.

    :ivar slot_id: Numeric slot id, unique across all doctors.
    :ivar doctor_id: The doctor the slot belongs to.
    :ivar starts_at: Local start time.
    :ivar ends_at: Local end time.
    """

    slot_id: int
    doctor_id: str
    starts_at: datetime
    ends_at: datetime


_PHONE_RE = re.compile(r"^\+?[0-9]{7,15}$")


class Patient(BaseModel):
    """A registered patient.

    Phone numbers are stored normalised: spaces, dashes, dots and
    parentheses are removed, a leading ``+`` is kept.
    """

    model_config = ConfigDict(validate_assignment=True)

    patient_id: str
    full_name: str
    email: EmailStr
    phone: str
    date_of_birth: date
    registered_at: datetime

    @field_validator("full_name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        value = " ".join(value.split())
        if len(value) < 2:
            raise ValueError("full_name must contain at least 2 characters")
        if len(value) > 120:
            raise ValueError("full_name must be at most 120 characters")
        if any(ch.isdigit() for ch in value):
            raise ValueError("full_name must not contain digits")
        return value

    @field_validator("phone")
    @classmethod
    def _check_phone(cls, value: str) -> str:
        compact = re.sub(r"[\s\-\.\(\)]", "", value)
        if not _PHONE_RE.match(compact):
            raise ValueError(
                "phone must have 7 to 15 digits, optionally starting with '+', "
                f"e.g. '+1 555 010 2030' (got {value!r})"
            )
        return compact

    @field_validator("date_of_birth")
    @classmethod
    def _check_dob(cls, value: date) -> date:
        today = date.today()
        if value > today:
            raise ValueError("date_of_birth cannot be in the future")
        age = today.year - value.year - ((today.month, today.day) < (value.month, value.day))
        if age > 130:
            raise ValueError("date_of_birth is more than 130 years ago")
        return value

    @property
    def age(self) -> int:
        """Age in completed years as of today."""
        today = date.today()
        dob = self.date_of_birth
        return today.year - dob.year - ((today.month, today.day) < (dob.month, dob.day))


@dataclass
class Appointment:
    """A booked consultation.

    :ivar appointment_id: Random UUID assigned at booking.
    :ivar patient_id: The patient's id.
    :ivar doctor_id: The doctor's id (taken from the slot).
    :ivar slot_id: The slot currently held by this appointment.
    :ivar starts_at: Start of the consultation.
    :ivar ends_at: End of the consultation.
    :ivar reason: Free-text reason for the visit.
    :ivar status: Current status.
    :ivar cancellation_reason: Set when the appointment was cancelled.
    :ivar reschedule_count: How many times the appointment was moved.
    """

    appointment_id: UUID
    patient_id: str
    doctor_id: str
    slot_id: int
    starts_at: datetime
    ends_at: datetime
    reason: str
    status: AppointmentStatus = AppointmentStatus.BOOKED
    cancellation_reason: Optional[str] = None
    reschedule_count: int = 0
    visit_notes: Optional[str] = None


@dataclass(frozen=True)
class Prescription:
    """A prescription issued after a completed appointment.

    :ivar prescription_id: Id of the form ``"RX-000123"``.
    :ivar appointment_id: The appointment the prescription was issued in.
    :ivar patient_id: The patient it was issued to.
    :ivar doctor_id: The prescribing doctor.
    :ivar medication: Drug name and strength.
    :ivar dosage: Dosage instructions.
    :ivar issued_on: Date of issue.
    :ivar valid_until: Last day the prescription may be dispensed.
    :ivar refills: Number of permitted refills.
    """

    prescription_id: str
    appointment_id: UUID
    patient_id: str
    doctor_id: str
    medication: str
    dosage: str
    issued_on: date
    valid_until: date
    refills: int = 0
    notes: Optional[str] = None


# ---------------------------------------------------------------------------
# Module state
# ---------------------------------------------------------------------------

SLOT_LENGTH = timedelta(minutes=30)
"""Length of every consultation slot."""

BOOKING_HORIZON_DAYS = 14
"""Slots are published for this many calendar days, starting tomorrow."""

MAX_RESCHEDULES = 2
"""An appointment can be moved at most this many times."""

doctors: dict[str, Doctor] = {
    "DR-01": Doctor("DR-01", "Dr. Amara Okafor", Specialty.GENERAL_PRACTICE, "1.04"),
    "DR-02": Doctor("DR-02", "Dr. Henrik Lund", Specialty.CARDIOLOGY, "2.11"),
    "DR-03": Doctor("DR-03", "Dr. Sofia Reyes", Specialty.DERMATOLOGY, "2.02"),
    "DR-04": Doctor("DR-04", "Dr. Kenji Watanabe", Specialty.PEDIATRICS, "0.07"),
    "DR-05": Doctor("DR-05", "Dr. Leila Haddad", Specialty.GENERAL_PRACTICE, "1.06"),
}

# Weekly consulting hours per doctor: (first slot start, last slot end).
_consulting_hours: dict[str, tuple[time, time]] = {
    "DR-01": (time(8, 30), time(12, 0)),
    "DR-02": (time(13, 0), time(16, 0)),
    "DR-03": (time(9, 0), time(11, 30)),
    "DR-04": (time(14, 0), time(17, 30)),
    "DR-05": (time(10, 0), time(13, 0)),
}

slots: dict[int, Slot] = {}
booked_slot_ids: set[int] = set()
patients: dict[str, Patient] = {}
appointments: dict[UUID, Appointment] = {}
prescriptions: dict[str, Prescription] = {}

_next_patient_number = 1001
_next_prescription_number = 1


def _generate_slots() -> None:
    slot_id = 1
    start_day = date.today() + timedelta(days=1)
    for offset in range(BOOKING_HORIZON_DAYS):
        day = start_day + timedelta(days=offset)
        if day.weekday() >= 5:  # no weekend consultations
            continue
        for doctor_id, (first, last) in _consulting_hours.items():
            current = datetime.combine(day, first)
            end_of_day = datetime.combine(day, last)
            while current + SLOT_LENGTH <= end_of_day:
                slots[slot_id] = Slot(slot_id, doctor_id, current, current + SLOT_LENGTH)
                slot_id += 1
                current += SLOT_LENGTH


def _seed() -> None:
    global _next_patient_number
    _generate_slots()
    demo = Patient(
        patient_id="P-1001",
        full_name="Demo Patient",
        email="demo.patient@example.com",
        phone="+15550100100",
        date_of_birth=date(1985, 6, 15),
        registered_at=datetime.now(),
    )
    patients[demo.patient_id] = demo
    _next_patient_number = 1002


_seed()


# ---------------------------------------------------------------------------
# Internal helpers
# ---------------------------------------------------------------------------


def _require_patient(patient_id: str) -> Patient:
    try:
        return patients[patient_id]
    except KeyError:
        raise NotFoundError(f"no patient with id {patient_id!r}") from None


def _require_doctor(doctor_id: str) -> Doctor:
    try:
        return doctors[doctor_id]
    except KeyError:
        raise NotFoundError(
            f"no doctor with id {doctor_id!r}; known ids: {', '.join(sorted(doctors))}"
        ) from None


def _require_slot(slot_id: int) -> Slot:
    if isinstance(slot_id, bool) or not isinstance(slot_id, int):
        raise TypeError(f"slot_id must be an int, got {type(slot_id).__name__}")
    try:
        return slots[slot_id]
    except KeyError:
        raise NotFoundError(f"no slot with id {slot_id}") from None


def _require_appointment(appointment_id: UUID | str) -> Appointment:
    if isinstance(appointment_id, str):
        try:
            appointment_id = UUID(appointment_id)
        except ValueError:
            raise ValueError(f"appointment_id {appointment_id!r} is not a valid UUID") from None
    try:
        return appointments[appointment_id]
    except KeyError:
        raise NotFoundError(f"no appointment with id {appointment_id}") from None


def _check_slot_bookable(slot: Slot) -> None:
    if slot.slot_id in booked_slot_ids:
        raise SlotUnavailableError(f"slot {slot.slot_id} is already booked")
    if slot.starts_at <= datetime.now():
        raise SlotUnavailableError(f"slot {slot.slot_id} is in the past")


def _check_patient_fits(patient: Patient, slot: Slot, ignore: Optional[UUID] = None) -> None:
    doctor = doctors[slot.doctor_id]
    if doctor.specialty is Specialty.PEDIATRICS and patient.age >= 18:
        raise ClinicError(
            f"{doctor.name} is a pediatrician and only sees patients under 18 "
            f"(patient {patient.patient_id} is {patient.age})"
        )
    for appt in appointments.values():
        if appt.appointment_id == ignore or appt.patient_id != patient.patient_id:
            continue
        if appt.status is not AppointmentStatus.BOOKED:
            continue
        if appt.starts_at < slot.ends_at and slot.starts_at < appt.ends_at:
            raise SlotUnavailableError(
                f"patient {patient.patient_id} already has appointment "
                f"{appt.appointment_id} at {appt.starts_at:%Y-%m-%d %H:%M}"
            )


def _clean_text(value: str, name: str, max_len: int, required: bool = True) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string")
    value = value.strip()
    if required and not value:
        raise ValueError(f"{name} must not be empty")
    if len(value) > max_len:
        raise ValueError(f"{name} must be at most {max_len} characters")
    return value


# ---------------------------------------------------------------------------
# Patients
# ---------------------------------------------------------------------------


def register_patient(
    full_name: str,
    email: str,
    phone: str,
    date_of_birth: date,
) -> Patient:
    """Register a new patient with the clinic.

    :param full_name: The patient's full name, 2-120 characters, no digits.
    :param email: A deliverable e-mail address, e.g. ``"jane@example.org"``.
        Must not already be used by another patient.
    :param phone: Phone number with 7-15 digits. Spaces, dashes, dots and
        parentheses are allowed and stripped, e.g. ``"+1 (555) 010-2030"``.
    :param date_of_birth: Date of birth; not in the future, at most 130
        years ago.
    :returns: The stored patient record, including the new ``patient_id``
        (format ``P-<number>``).
    :raises ValueError: If any field fails validation or the e-mail address
        is already registered.
    """
    global _next_patient_number
    if not isinstance(date_of_birth, date) or isinstance(date_of_birth, datetime):
        raise TypeError("date_of_birth must be a datetime.date")
    candidate = Patient(
        patient_id=f"P-{_next_patient_number}",
        full_name=full_name,
        email=email,
        phone=phone,
        date_of_birth=date_of_birth,
        registered_at=datetime.now(),
    )
    for existing in patients.values():
        if existing.email.lower() == candidate.email.lower():
            raise ValueError(f"email {candidate.email} is already registered to {existing.patient_id}")
    patients[candidate.patient_id] = candidate
    _next_patient_number += 1
    return candidate.model_copy()


def get_patient(patient_id: str) -> Patient:
    """Look up a patient by id.

    :param patient_id: The id returned by :func:`register_patient`, e.g. ``"P-1001"``.
    :returns: A copy of the patient record.
    :raises NotFoundError: If no such patient is registered.
    """
    return _require_patient(patient_id).model_copy()


def update_patient_contact(
    patient_id: str,
    email: Optional[str] = None,
    phone: Optional[str] = None,
) -> Patient:
    """Change a patient's e-mail address and/or phone number.

    Name and date of birth cannot be changed at the desk.

    :param patient_id: The patient to update.
    :param email: New e-mail address, or ``None`` to keep the current one.
    :param phone: New phone number, or ``None`` to keep the current one.
    :returns: The updated patient record.
    :raises NotFoundError: If the patient does not exist.
    :raises ValueError: If neither field is given, a value is invalid, or the
        e-mail address belongs to another patient.
    """
    patient = _require_patient(patient_id)
    if email is None and phone is None:
        raise ValueError("give at least one of email or phone to update")
    updated = patient.model_copy()
    # Re-validate through the model so the same rules apply as at registration.
    data = updated.model_dump()
    if email is not None:
        data["email"] = email
    if phone is not None:
        data["phone"] = phone
    updated = Patient.model_validate(data)
    for other in patients.values():
        if other.patient_id != patient_id and other.email.lower() == updated.email.lower():
            raise ValueError(f"email {updated.email} is already registered to {other.patient_id}")
    patients[patient_id] = updated
    return updated.model_copy()


# ---------------------------------------------------------------------------
# Doctors and slots
# ---------------------------------------------------------------------------


def list_doctors(specialty: Optional[Specialty | str] = None) -> list[Doctor]:
    """List the clinic's doctors.

    :param specialty: Only return doctors of this specialty. Accepts a
        :class:`Specialty` or its value, e.g. ``"cardiology"``.
    :returns: Doctors sorted by id.
    :raises ValueError: If ``specialty`` is not a known specialty.
    """
    if specialty is not None:
        try:
            specialty = Specialty(specialty)
        except ValueError:
            allowed = ", ".join(s.value for s in Specialty)
            raise ValueError(f"unknown specialty {specialty!r}; expected one of: {allowed}") from None
    return [
        d for _, d in sorted(doctors.items())
        if specialty is None or d.specialty is specialty
    ]


def find_available_slots(
    doctor_id: str,
    on_date: Optional[date] = None,
    limit: int = 20,
) -> list[Slot]:
    """Find free future slots for a doctor.

    :param doctor_id: The doctor's id, e.g. ``"DR-02"`` (see :func:`list_doctors`).
    :param on_date: Restrict to a single day. Slots are published for the
        next 14 calendar days, weekdays only.
    :param limit: Maximum number of slots to return (1-200).
    :returns: Free slots ordered by start time.
    :raises NotFoundError: If the doctor is unknown.
    :raises ValueError: If ``limit`` is out of range.
    """
    _require_doctor(doctor_id)
    if not 1 <= limit <= 200:
        raise ValueError("limit must be between 1 and 200")
    now = datetime.now()
    result = [
        s for s in slots.values()
        if s.doctor_id == doctor_id
        and s.slot_id not in booked_slot_ids
        and s.starts_at > now
        and (on_date is None or s.starts_at.date() == on_date)
    ]
    result.sort(key=lambda s: s.starts_at)
    return result[:limit]


# ---------------------------------------------------------------------------
# Appointments
# ---------------------------------------------------------------------------


def book_appointment(patient_id: str, slot_id: int, reason: str) -> Appointment:
    """Book a free slot for a patient.

    :param patient_id: A registered patient's id.
    :param slot_id: A free slot, as returned by :func:`find_available_slots`.
    :param reason: Short reason for the visit (1-500 characters).
    :returns: The new appointment with status ``booked``.
    :raises NotFoundError: If the patient or slot does not exist.
    :raises SlotUnavailableError: If the slot is taken or in the past, or the
        patient already has an appointment at that time.
    :raises ClinicError: If an adult is booked with the pediatrician.
    :raises ValueError: If ``reason`` is empty or too long.
    """
    patient = _require_patient(patient_id)
    slot = _require_slot(slot_id)
    reason = _clean_text(reason, "reason", 500)
    _check_slot_bookable(slot)
    _check_patient_fits(patient, slot)
    appt = Appointment(
        appointment_id=uuid4(),
        patient_id=patient.patient_id,
        doctor_id=slot.doctor_id,
        slot_id=slot.slot_id,
        starts_at=slot.starts_at,
        ends_at=slot.ends_at,
        reason=reason,
    )
    appointments[appt.appointment_id] = appt
    booked_slot_ids.add(slot.slot_id)
    return replace(appt)


def list_appointments(patient_id: str, include_cancelled: bool = False) -> list[Appointment]:
    """List a patient's appointments, earliest first.

    :param patient_id: The patient whose appointments to list.
    :param include_cancelled: Also return cancelled appointments.
    :returns: Copies of the matching appointments (possibly empty).
    :raises NotFoundError: If the patient does not exist.
    """
    _require_patient(patient_id)
    result = [
        replace(a) for a in appointments.values()
        if a.patient_id == patient_id
        and (include_cancelled or a.status is not AppointmentStatus.CANCELLED)
    ]
    result.sort(key=lambda a: a.starts_at)
    return result


def reschedule_appointment(appointment_id: UUID | str, new_slot_id: int) -> Appointment:
    """Move a booked appointment to another free slot of the same doctor.

    The old slot is released. An appointment can be rescheduled at most
    :data:`MAX_RESCHEDULES` times; after that it must be cancelled and booked
    again.

    :param appointment_id: The appointment to move (UUID or its string form).
    :param new_slot_id: A free slot of the same doctor.
    :returns: The updated appointment (same ``appointment_id``).
    :raises NotFoundError: If the appointment or slot does not exist.
    :raises AppointmentStateError: If the appointment is not ``booked`` or
        has been rescheduled too often.
    :raises SlotUnavailableError: If the new slot is taken, in the past,
        belongs to another doctor, or clashes with another appointment.
    """
    appt = _require_appointment(appointment_id)
    new_slot = _require_slot(new_slot_id)
    if appt.status is not AppointmentStatus.BOOKED:
        raise AppointmentStateError(
            f"appointment {appt.appointment_id} is {appt.status.value} and cannot be rescheduled"
        )
    if appt.reschedule_count >= MAX_RESCHEDULES:
        raise AppointmentStateError(
            f"appointment {appt.appointment_id} was already rescheduled {MAX_RESCHEDULES} times"
        )
    if new_slot.slot_id == appt.slot_id:
        raise SlotUnavailableError("the new slot is the one the appointment already holds")
    if new_slot.doctor_id != appt.doctor_id:
        raise SlotUnavailableError(
            f"slot {new_slot.slot_id} belongs to {new_slot.doctor_id}, "
            f"but the appointment is with {appt.doctor_id}"
        )
    _check_slot_bookable(new_slot)
    _check_patient_fits(patients[appt.patient_id], new_slot, ignore=appt.appointment_id)
    booked_slot_ids.discard(appt.slot_id)
    booked_slot_ids.add(new_slot.slot_id)
    appt.slot_id = new_slot.slot_id
    appt.starts_at = new_slot.starts_at
    appt.ends_at = new_slot.ends_at
    appt.reschedule_count += 1
    return replace(appt)


def cancel_appointment(appointment_id: UUID | str, reason: Optional[str] = None) -> Appointment:
    """Cancel a booked appointment and release its slot.

    :param appointment_id: The appointment to cancel.
    :param reason: Optional cancellation reason, kept for the records.
    :returns: The cancelled appointment.
    :raises NotFoundError: If the appointment does not exist.
    :raises AppointmentStateError: If it is already cancelled or completed.
    """
    appt = _require_appointment(appointment_id)
    if appt.status is not AppointmentStatus.BOOKED:
        raise AppointmentStateError(
            f"appointment {appt.appointment_id} is {appt.status.value} and cannot be cancelled"
        )
    if reason is not None:
        reason = _clean_text(reason, "reason", 500, required=False) or None
    appt.status = AppointmentStatus.CANCELLED
    appt.cancellation_reason = reason
    booked_slot_ids.discard(appt.slot_id)
    return replace(appt)


def complete_appointment(appointment_id: UUID | str, visit_notes: Optional[str] = None) -> Appointment:
    """Mark a booked appointment as attended.

    Doctors call this at the end of the consultation. Only completed
    appointments can carry prescriptions.

    :param appointment_id: The appointment to complete.
    :param visit_notes: Optional clinical notes (up to 2000 characters).
    :returns: The appointment with status ``completed``.
    :raises NotFoundError: If the appointment does not exist.
    :raises AppointmentStateError: If the appointment is not ``booked``.
    """
    appt = _require_appointment(appointment_id)
    if appt.status is not AppointmentStatus.BOOKED:
        raise AppointmentStateError(
            f"appointment {appt.appointment_id} is {appt.status.value} and cannot be completed"
        )
    if visit_notes is not None:
        visit_notes = _clean_text(visit_notes, "visit_notes", 2000, required=False) or None
    appt.status = AppointmentStatus.COMPLETED
    appt.visit_notes = visit_notes
    return replace(appt)


# ---------------------------------------------------------------------------
# Prescriptions
# ---------------------------------------------------------------------------


def write_prescription(
    appointment_id: UUID | str,
    medication: str,
    dosage: str,
    duration_days: int,
    refills: int = 0,
    notes: Optional[str] = None,
) -> Prescription:
    """Issue a prescription for a completed appointment.

    The prescribing doctor and the patient are taken from the appointment.

    :param appointment_id: A *completed* appointment
        (see :func:`complete_appointment`).
    :param medication: Drug name and strength, e.g. ``"Amoxicillin 500 mg"``.
    :param dosage: Instructions, e.g. ``"1 capsule three times daily"``.
    :param duration_days: How many days the prescription is valid, 1-365.
    :param refills: Permitted refills, 0-5.
    :param notes: Optional note for the pharmacist.
    :returns: The new prescription.
    :raises NotFoundError: If the appointment does not exist.
    :raises AppointmentStateError: If the appointment is not completed.
    :raises ValueError: On invalid fields, or if the same medication was
        already prescribed in this appointment.
    """
    global _next_prescription_number
    appt = _require_appointment(appointment_id)
    if appt.status is not AppointmentStatus.COMPLETED:
        raise AppointmentStateError(
            f"appointment {appt.appointment_id} is {appt.status.value}; "
            "prescriptions can only be written for completed appointments"
        )
    medication = _clean_text(medication, "medication", 200)
    dosage = _clean_text(dosage, "dosage", 300)
    if isinstance(duration_days, bool) or not isinstance(duration_days, int):
        raise TypeError("duration_days must be an int")
    if not 1 <= duration_days <= 365:
        raise ValueError("duration_days must be between 1 and 365")
    if isinstance(refills, bool) or not isinstance(refills, int) or not 0 <= refills <= 5:
        raise ValueError("refills must be an int between 0 and 5")
    if notes is not None:
        notes = _clean_text(notes, "notes", 500, required=False) or None
    for rx in prescriptions.values():
        if rx.appointment_id == appt.appointment_id and rx.medication.lower() == medication.lower():
            raise ValueError(f"{medication} was already prescribed in this appointment ({rx.prescription_id})")
    issued = date.today()
    rx = Prescription(
        prescription_id=f"RX-{_next_prescription_number:06d}",
        appointment_id=appt.appointment_id,
        patient_id=appt.patient_id,
        doctor_id=appt.doctor_id,
        medication=medication,
        dosage=dosage,
        issued_on=issued,
        valid_until=issued + timedelta(days=duration_days),
        refills=refills,
        notes=notes,
    )
    prescriptions[rx.prescription_id] = rx
    _next_prescription_number += 1
    return rx


def list_prescriptions(patient_id: str, active_only: bool = False) -> list[Prescription]:
    """List prescriptions issued to a patient, newest first.

    :param patient_id: The patient whose prescriptions to list.
    :param active_only: Only return prescriptions still valid today.
    :returns: Matching prescriptions (possibly empty).
    :raises NotFoundError: If the patient does not exist.
    """
    _require_patient(patient_id)
    today = date.today()
    result = [
        rx for rx in prescriptions.values()
        if rx.patient_id == patient_id and (not active_only or rx.valid_until >= today)
    ]
    result.sort(key=lambda rx: rx.prescription_id, reverse=True)
    return result
