"""Kinds of values: the pieces that tell "this value identifies what the consumer needs" from "this value happens to
exist in the consumer's table" (:mod:`libra.induction.explore.kinds`), each on its own. The rule as a whole is
exercised by the ``desk`` catalog of the generalization suite (numbers of three kinds from counters of their own)."""

from __future__ import annotations

from libra.induction.explore.controls import control_choices, unseen_number
from libra.induction.explore.kinds import counter_like, naming_signature, refusal_signature, value_form


def test_refusals_of_different_values_compare_equal_when_they_say_the_same():
    absent = refusal_signature("File with ID 'libra_control_value' not found.", "libra_control_value")
    assert refusal_signature("File with ID '33' not found.", "33") == absent
    assert refusal_signature("no meeting 9", 9) == refusal_signature("No  meeting 12", 12)
    # another reason is another signature: a value of the right kind refused for what it is now
    assert refusal_signature("order 3 is already cancelled", 3) != refusal_signature("no order 99", 99)
    # the value is replaced only where it stands whole: "1" inside "10 left" stays
    assert refusal_signature("only 10 left", 1) == "only 10 left"
    # a refusal without words is no evidence
    assert refusal_signature("", 5) is None and refusal_signature(None, 5) is None


def test_the_form_of_a_value_reduces_its_runs():
    assert value_form("BR-001") == value_form("PA-017") == "a-9"
    assert value_form("top.txt") == "a.a" and value_form("photos/") == "a/"
    assert value_form("top.txt") != value_form("photos")
    assert value_form(7) == value_form(12345) == "9"
    assert value_form(True) == "bool" and value_form(2.5) == "float" and value_form(None) == "NoneType"


def test_a_control_number_names_no_record_the_sandbox_showed():
    assert unseen_number([1, 2, 5, "7", 3.0, True]) == 6
    assert unseen_number([-4, 0]) == 1
    assert unseen_number(["a", None]) is None
    schema = {"type": "integer", "description": "Number of the meeting."}
    # the ordinary literal for an id (a small number) names an existing record as readily as the observed one
    got = control_choices("meeting_id", schema, 2, unseen=6)
    assert got[0] == 6 and 2 not in got
    # a string input keeps its placeholder first; the unseen number is for whole numbers only
    assert control_choices("name", {"type": "string"}, "x", unseen=6)[0] == "libra_control_value"


def test_a_counter_reads_as_a_number():
    assert counter_like(7) and counter_like("12") and not counter_like(True)
    assert not counter_like("a7") and not counter_like("") and not counter_like("1234567890") and not counter_like(2.0)


def test_only_a_refusal_of_the_value_by_itself_is_a_reference():
    assert naming_signature("no meeting 12", 12, {"note": "x"}) == "no meeting \x00"
    # a refusal that does not quote the value is about something else (another input's record)
    assert naming_signature("card 1 not found.", "zed", {"card_id": 1}) is None
    # one that quotes another input's text too is about the combination
    assert naming_signature("'alice' is not assigned to card 12.", 12, {"username": "alice"}) is None
