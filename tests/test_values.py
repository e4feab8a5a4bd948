"""The value generator's layers, each on values a validator written the ordinary way would check.

Every layer is exercised with realistic documentation text: the constraints a docstring states are read and
honoured whatever layer draws the value, realistic kinds come from Faker seeded (the same value every time),
schema-built values satisfy patterns and nested models, dates fall around the sandbox's pinned clock.
"""

from __future__ import annotations

import re

import jsonschema

from libra.values.constraints import read_constraints, read_text
from libra.values.generator import SANDBOX_NOW, drawn_for, literal_for
from libra.values.realistic import kind_of
from libra.values.typed import from_schema


def test_lengths_classes_and_prefixes_are_read_from_prose():
    c = read_text("Username: 3-20 letters or digits.")
    assert (c.min_len, c.max_len, c.charset) == (3, 20, frozenset({"letters", "digits"}))
    assert not c.accepts("new_user") and c.shape("new_user") == "newuser"
    c = read_text("Password, at least 8 characters, and it must contain a digit.")
    assert c.min_len == 8 and c.requires == {"digits"} and c.accepts(c.shape("secret"))
    assert read_text("Phone number; must start with '+' and the country code.").prefix == "+"
    assert read_text("A 6-digit verification code").min_len == 6
    assert read_text("Only lowercase letters, digits and hyphens, no spaces").charset == {"lower", "digits", "hyphen"}
    assert read_text("The user's first name").empty  # a mention, not a rule


def test_numeric_ranges_come_from_the_schema_and_the_prose():
    c = read_constraints({"type": "integer", "description": "Minutes before the event, between 1 and 10080."})
    assert (c.minimum, c.maximum) == (1, 10080)
    assert read_constraints({"type": "integer", "minimum": 5}).minimum == 5
    assert literal_for("minutes", {"type": "integer", "description": "between 10 and 20"}) in range(10, 21)


def test_every_layer_honours_the_documented_rules():
    drawn = drawn_for("username", {"type": "string", "description": "3-20 letters or digits"})
    assert drawn.layer == "realistic" and re.fullmatch(r"[A-Za-z0-9]{3,20}", drawn.value)
    assert re.fullmatch(
        r"[a-z0-9]{4,6}",
        literal_for("nickname", {"type": "string", "minLength": 4, "maxLength": 6, "pattern": "^[a-z0-9]+$"}),
    )


def test_realistic_kinds_are_recognised_from_the_name_and_drawn_the_same_way_every_time():
    assert kind_of("contact_email", "string") == "email"
    assert kind_of("firstName", "string") == "first_name"
    assert kind_of("patient_name", "string") == "name"
    assert kind_of("job_id", "string") is None  # a reference to a record, not the thing itself
    assert kind_of("email", "integer") is None
    assert literal_for("email", {"type": "string"}) == literal_for("email", {"type": "string"})
    assert "@" in literal_for("email", {"type": "string"})
    assert literal_for("email", {"type": "string"}, option=1) != literal_for("email", {"type": "string"})


def test_dates_fall_around_the_sandbox_clock():
    start = literal_for("check_in", {"type": "string", "format": "date"})
    assert start > SANDBOX_NOW.date().isoformat()
    assert literal_for("birth_date", {"type": "string", "format": "date"}) < "2000-01-01"
    assert literal_for("due", {"type": "string", "description": "due date as YYYY-MM-DD"}) > "2025-01-01"
    # an event that has happened: the description says the date may not lie ahead of the clock
    today = SANDBOX_NOW.date().isoformat()
    dropped = "When the item was dropped off; defaults to today. Cannot be before the checkout date or after today."
    assert literal_for("returned_on", {"type": "string", "format": "date"}, dropped) == today
    began = "When the session began; defaults to now. May not be in the future."
    assert literal_for("started_at", {"type": "string", "format": "date-time"}, began) <= SANDBOX_NOW.isoformat()
    assert literal_for("deadline", {"type": "string", "format": "date"}, "Cannot be in the past.") > today


def test_documented_values_come_first_and_say_so():
    drawn = drawn_for("reason", {"type": "string", "description": "either 'no longer needed' or 'ordered by mistake'"})
    assert (drawn.value, drawn.layer) == ("no longer needed", "documented")
    assert drawn_for("unit", {"type": "string", "enum": ["c", "f"]}, option=1).value == "f"


def test_schema_built_values_meet_patterns_and_nested_models():
    schema = {
        "type": "object",
        "properties": {
            "product_id": {"type": "string", "pattern": "^P-[0-9]{4}$"},
            "qty": {"type": "integer", "minimum": 1, "maximum": 5},
        },
        "required": ["product_id", "qty"],
    }
    values = from_schema(schema, seed=7)
    assert values and all(jsonschema.validate(v, schema) is None for v in values)
    assert from_schema(schema, seed=7) == values  # seeded
    value = literal_for("line", schema)
    jsonschema.validate(value, schema)
