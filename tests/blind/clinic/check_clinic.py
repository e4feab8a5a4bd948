"""Exercise clinic.py and show that every dependency in DEPENDENCIES.json is real."""

import importlib
import json
import sys
from datetime import date
from pathlib import Path
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))
import clinic  # noqa: E402

checked: list[tuple[str, str]] = []


def fresh():
    importlib.reload(clinic)
    return clinic


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        return e
    raise AssertionError(f"{fn.__name__}{args} should have failed")


def ok(pair):
    checked.append(pair)


c = fresh()
BOGUS_PATIENT = "P-9999"

# --- register_patient -> patient consumers --------------------------------
p = c.register_patient("Jane Roe", "jane.roe@example.org", "+44 (20) 7946-0018", date(1990, 4, 2))
assert p.patient_id == "P-1002" and p.phone == "+442079460018"
fails(c.get_patient, BOGUS_PATIENT, exc=c.NotFoundError)
assert c.get_patient(p.patient_id).email == "jane.roe@example.org"
ok(("register_patient", "get_patient"))

fails(c.update_patient_contact, BOGUS_PATIENT, phone="+15550101010", exc=c.NotFoundError)
assert c.update_patient_contact(p.patient_id, phone="555-010-1010").phone == "5550101010"
ok(("register_patient", "update_patient_contact"))

fails(c.list_appointments, BOGUS_PATIENT, exc=c.NotFoundError)
assert c.list_appointments(p.patient_id) == []
ok(("register_patient", "list_appointments"))

fails(c.list_prescriptions, BOGUS_PATIENT, exc=c.NotFoundError)
assert c.list_prescriptions(p.patient_id) == []
ok(("register_patient", "list_prescriptions"))

# --- list_doctors -> find_available_slots ---------------------------------
fails(c.find_available_slots, "dermatology", exc=c.NotFoundError)
derm = c.list_doctors("dermatology")[0]
slots = c.find_available_slots(derm.doctor_id)
assert slots and all(s.doctor_id == derm.doctor_id for s in slots)
ok(("list_doctors", "find_available_slots"))

# --- find_available_slots + register_patient -> book_appointment ----------
fails(c.book_appointment, BOGUS_PATIENT, slots[0].slot_id, "rash", exc=c.NotFoundError)
fails(c.book_appointment, p.patient_id, 99999, "rash", exc=c.NotFoundError)
appt = c.book_appointment(p.patient_id, slots[0].slot_id, "itchy rash")
assert appt.status is c.AppointmentStatus.BOOKED
fails(c.book_appointment, "P-1001", slots[0].slot_id, "rash", exc=c.SlotUnavailableError)
ok(("register_patient", "book_appointment"))
ok(("find_available_slots", "book_appointment"))

# --- appointment consumers from book_appointment --------------------------
bogus_appt = uuid4()
fails(c.reschedule_appointment, bogus_appt, slots[1].slot_id, exc=c.NotFoundError)
# new_slot_id must be a free slot of the same doctor, as listed by find_available_slots
fails(c.reschedule_appointment, appt.appointment_id, appt.slot_id, exc=c.SlotUnavailableError)
other_doctor_slot = c.find_available_slots("DR-01")[0].slot_id
fails(c.reschedule_appointment, appt.appointment_id, other_doctor_slot, exc=c.SlotUnavailableError)
new_slot = c.find_available_slots(derm.doctor_id)[0].slot_id
moved = c.reschedule_appointment(appt.appointment_id, new_slot)
assert moved.slot_id == new_slot and moved.appointment_id == appt.appointment_id
ok(("book_appointment", "reschedule_appointment"))
ok(("find_available_slots", "reschedule_appointment"))

fails(c.complete_appointment, bogus_appt, exc=c.NotFoundError)
fails(c.write_prescription, bogus_appt, "Hydrocortisone 1%", "twice daily", 10, exc=c.NotFoundError)
# state dependency: not yet completed
fails(c.write_prescription, appt.appointment_id, "Hydrocortisone 1%", "twice daily", 10,
      exc=c.AppointmentStateError)
done = c.complete_appointment(appt.appointment_id, "contact dermatitis")
assert done.status is c.AppointmentStatus.COMPLETED
ok(("book_appointment", "complete_appointment"))
rx = c.write_prescription(appt.appointment_id, "Hydrocortisone 1%", "twice daily", 10, refills=1)
assert rx.patient_id == p.patient_id and rx.doctor_id == derm.doctor_id
assert c.list_prescriptions(p.patient_id)[0].prescription_id == rx.prescription_id
ok(("book_appointment", "write_prescription"))
ok(("complete_appointment", "write_prescription"))

appt2 = c.book_appointment(p.patient_id, c.find_available_slots("DR-05")[0].slot_id, "check-up")
fails(c.cancel_appointment, bogus_appt, exc=c.NotFoundError)
cancelled = c.cancel_appointment(appt2.appointment_id, "feeling better")
assert cancelled.status is c.AppointmentStatus.CANCELLED
assert appt2.slot_id in {s.slot_id for s in c.find_available_slots("DR-05")}
ok(("book_appointment", "cancel_appointment"))

# --- list_appointments as provider of appointment ids ---------------------
c = fresh()
demo = "P-1001"
gp_slots = c.find_available_slots("DR-01", limit=5)
c.book_appointment(demo, gp_slots[0].slot_id, "sore throat")
c.book_appointment(demo, gp_slots[1].slot_id, "follow-up")
c.book_appointment(demo, gp_slots[2].slot_id, "vaccination")
listed = c.list_appointments(demo)
assert len(listed) == 3
a_resched, a_cancel, a_complete = (a.appointment_id for a in listed)
assert c.reschedule_appointment(str(a_resched), gp_slots[3].slot_id).slot_id == gp_slots[3].slot_id
ok(("list_appointments", "reschedule_appointment"))
assert c.cancel_appointment(a_cancel).status is c.AppointmentStatus.CANCELLED
ok(("list_appointments", "cancel_appointment"))
assert c.complete_appointment(a_complete).status is c.AppointmentStatus.COMPLETED
ok(("list_appointments", "complete_appointment"))
completed = [a for a in c.list_appointments(demo) if a.status is c.AppointmentStatus.COMPLETED][0]
assert c.write_prescription(completed.appointment_id, "Paracetamol 500 mg", "as needed", 5).refills == 0
ok(("list_appointments", "write_prescription"))
assert len(c.list_appointments(demo, include_cancelled=True)) == 3

# --- a few validation and not-dependency sanity checks ---------------------
c = fresh()
fails(c.register_patient, "Al", "not-an-email", "+15550100", date(1990, 1, 1), exc=ValueError)
fails(c.register_patient, "Bob Smith", "bob@example.com", "12", date(1990, 1, 1), exc=ValueError)
fails(c.register_patient, "Bob Smith", "bob@example.com", "+15550100", date(2999, 1, 1), exc=ValueError)
fails(c.register_patient, "Bob Smith", "demo.patient@example.com", "+15550100", date(1990, 1, 1),
      exc=ValueError)
ped = c.find_available_slots("DR-04")[0].slot_id
fails(c.book_appointment, "P-1001", ped, "check", exc=c.ClinicError)
kid = c.register_patient("Tim Small", "tim.parent@example.com", "+15550100222", date(date.today().year - 6, 1, 1))
assert c.book_appointment(kid.patient_id, ped, "fever").doctor_id == "DR-04"
# list_doctors is not needed for book_appointment: a slot id suffices
assert c.book_appointment("P-1001", c.find_available_slots("DR-02")[0].slot_id, "palpitations")
# list_prescriptions works without write_prescription
assert c.list_prescriptions("P-1001") == []

# --- make sure every listed dependency was exercised -----------------------
spec = json.loads((Path(__file__).parent / "DEPENDENCIES.json").read_text())
listed_pairs = {(d["provider"], d["consumer"]) for d in spec["dependencies"]}
missing = listed_pairs - set(checked)
extra = set(checked) - listed_pairs
assert not missing, f"not exercised: {missing}"
assert not extra, f"exercised but not listed: {extra}"
ops = {n for n in clinic.__all__ if n[0].islower()}
for d in spec["dependencies"] + spec["not_dependencies"]:
    assert d["provider"] in ops and d["consumer"] in ops, d
print(f"clinic: all {len(listed_pairs)} dependencies verified ({len(ops)} operations)")
