"""The outcome and feedback side of contracts, on small tools written here and run through the Python runtime.

Each section covers one behaviour: refusals reported as data, declared response types the tool does not honour,
literals the tool's own validation rejects, and fixtures in contract checking.
"""

from __future__ import annotations

import dataclasses

import pytest

from libra.catalog import Catalog
from libra.contracts import check_contracts, classify, propose, revise
from libra.contracts.model import Contract
from libra.contracts.outcome import (
    _split_refusals,
    refusal_schema,
    rejection_message,
    schema_accepts,
    schema_key,
    with_refusals,
)
from libra.runtime.python.runtime import PythonRuntime
from libra.values.repair import message_parameter, repair_literal


def record(output, status: str = "success", state_changes=None, error=None) -> dict:
    return {
        "status": status,
        "output": output,
        "state_changes": state_changes or {},
        "error": error,
        "duration_ms": 0.0,
    }


class Broker:
    """A brokerage whose reads answer a missing sign-in with data, not an exception."""

    def __init__(self) -> None:
        self.user: str | None = None
        self.watchlist = ["AAPL", "MSFT"]
        self.orders = [{"order_id": 7, "symbol": "AAPL"}]
        self.wifi = True

    def broker_login(self, username: str, password: str) -> dict:
        """Sign in to an existing account.

        Args:
            username: Username of the account.
            password: Password of the account.
        """
        if (username, password) != ("ann", "s3cret"):
            return {"login_status": False, "message": "Wrong credentials for this account."}
        self.user = username
        return {"login_status": True}

    def get_watchlist(self) -> list:
        """The signed-in user's watchlist."""
        if self.user is None:
            return ["Error: User not authenticated. Please log in to view the watchlist."]
        return list(self.watchlist)

    def get_orders(self) -> list:
        """The signed-in user's orders."""
        if self.user is None:
            return [{"error": "User not authenticated. Please log in to view orders."}]
        return list(self.orders)

    def run_report(self) -> str:
        """Run the daily report."""
        return "Database error: no such table: reports"

    def set_wifi(self, on: bool) -> dict:
        """Turn wifi on or off.

        Args:
            on: True to turn wifi on.
        """
        self.wifi = on
        return {"wifi_status": self.wifi}

    def get_wifi_status(self) -> dict:
        """Whether wifi is on."""
        return {"wifi_status": self.wifi}


@pytest.fixture()
def broker() -> PythonRuntime:
    rt = PythonRuntime.from_classes([Broker], trusted=True)
    yield rt
    rt.close()


# ---------------------------------------------------------------------------------------------------------------
# Refusals inside a successful payload
# ---------------------------------------------------------------------------------------------------------------


def test_refusals_reported_as_data_are_failures(broker: PythonRuntime) -> None:
    cat = broker.catalog
    s0 = broker.fresh()
    for tool in ("Broker.get_watchlist", "Broker.get_orders", "Broker.run_report"):
        rec, _ = broker.invoke(s0, tool, {})
        assert rec.status == "success"  # the runtime sees no exception ...
        assert classify(propose(cat[tool]), rec) == "failure", (tool, rec.output)  # ... the contract sees a refusal
        assert rejection_message(rec)
    bad, _ = broker.invoke(s0, "Broker.broker_login", {"username": "ann", "password": "nope"})
    assert classify(propose(cat["Broker.broker_login"]), bad) == "failure"  # a false verdict flag, nothing changed
    good, s1 = broker.invoke(s0, "Broker.broker_login", {"username": "ann", "password": "s3cret"})
    assert classify(propose(cat["Broker.broker_login"]), good) == "success"
    listed, _ = broker.invoke(s1, "Broker.get_watchlist", {})
    assert classify(propose(cat["Broker.get_watchlist"]), listed) == "success"


def test_refusal_rules_leave_data_alone(broker: PythonRuntime) -> None:
    cat = broker.catalog
    watch = propose(cat["Broker.get_watchlist"])
    for data in (["error.log", "notes.txt"], ["Errors in survey data"], [], [{"error_rate": 0.1}], [{"error": None}]):
        assert classify(watch, record(data)) == "success", data
    # Turning a setting off reports a false flag, but the call changed the state: that is the action, not a refusal.
    off, _ = broker.invoke(broker.fresh(), "Broker.set_wifi", {"on": False})
    assert off.state_changes and classify(propose(cat["Broker.set_wifi"]), off) == "success"
    # A read's boolean is its answer.
    assert classify(propose(cat["Broker.get_wifi_status"]), record({"wifi_status": False})) == "success"


def test_checking_sees_the_sign_in_gate_and_does_not_widen_success(broker: PythonRuntime) -> None:
    summary = check_contracts(broker.catalog, broker, fixtures={"username": "ann", "password": "s3cret"})
    for tool in ("Broker.get_watchlist", "Broker.get_orders"):
        tc = summary.per_tool[tool]
        t = tc.templates[0]
        assert t.observed == "success" and t.gated_by == "Broker.broker_login", (tool, t)
        contract = summary.contracts[tool]
        assert not any("widened" in n for n in contract.notes)
        assert (
            classify(contract, record(["Error: User not authenticated. Please log in to view the watchlist."]))
            == "failure"
        )
    assert summary.gated >= 2


def test_revision_learns_a_refusal_shape_from_the_same_call_in_another_state(broker: PythonRuntime) -> None:
    # An undetectable refusal text where the declared object should be: the same call succeeds after a sign-in.
    tool = dataclasses.replace(broker.catalog["Broker.get_wifi_status"], response={"type": "object"})
    contract = propose(tool)
    refused = record("Please sign in first.")
    answered = record({"wifi_status": True})
    assert classify(contract, refused) == "unmatched" and classify(contract, answered) == "success"
    fb = [{"template": "complete", "expected": "success", "arguments": {}, "record": r} for r in (refused, answered)]
    new = revise(contract, tool, fb)
    assert new is not None
    assert classify(new, refused) == "failure" and classify(new, answered) == "success"
    assert not any("widened" in n for n in new.notes) and any("learned as a refusal" in n for n in new.notes)
    # the learned shape is structure only: no value of the refused call is written into the contract
    assert "sign in" not in str(new.to_dict())


# ---------------------------------------------------------------------------------------------------------------
# Declared response types the tool does not honour
# ---------------------------------------------------------------------------------------------------------------


class Notes:
    """A note store whose save is documented to return a dict but returns a string."""

    def __init__(self) -> None:
        self.notes: list[str] = []

    def save_note(self, text: str) -> dict:
        """Save a note.

        Args:
            text: Text of the note.
        """
        self.notes.append(text)
        return f"saved note {len(self.notes)}"


def test_observed_type_wins_over_the_declared_one_and_is_recorded() -> None:
    rt = PythonRuntime.from_classes([Notes], trusted=True)
    try:
        cat = Catalog(
            [
                dataclasses.replace(t, response={"type": "object", "properties": {"id": {"type": "integer"}}})
                for t in rt.catalog
            ],
            name="notes",
        )
        summary = check_contracts(cat, rt)
    finally:
        rt.close()
    tc = summary.per_tool["Notes.save_note"]
    assert tc.templates[0].observed == "success" and tc.templates[0].matched
    contract = summary.contracts["Notes.save_note"]
    assert "declared_type_mismatch" in contract.flags
    assert any("declared response type object" in n for n in tc.notes)
    assert summary.type_mismatches == 1
    # still no success for a refusal of the same type
    assert classify(contract, record("Error: disk full")) == "failure"


# ---------------------------------------------------------------------------------------------------------------
# Literals repaired from the tool's own rejection message
# ---------------------------------------------------------------------------------------------------------------


class Phone:
    """Tools that validate their inputs and say what they want."""

    def __init__(self) -> None:
        self.contacts: dict[str, str] = {}
        self.reminders: list[tuple[str, int]] = []

    def add_contact(self, name: str, phone_number: str) -> dict:
        """Add a contact.

        Args:
            name: Name of the new contact.
            phone_number: Phone number of the new contact.
        """
        if not phone_number.startswith("+"):
            raise ValueError("phone_number must start with '+' and the country code")
        self.contacts[name] = phone_number
        return {"contact": name}

    def set_reminder(self, text: str, timestamp: int) -> dict:
        """Set a reminder.

        Args:
            text: What to be reminded of.
            timestamp: When to remind, in seconds since the epoch.
        """
        if timestamp < 315532800:
            raise ValueError("timestamp must be after 1980-01-01")
        self.reminders.append((text, timestamp))
        return {"reminder": len(self.reminders)}

    def convert_length(self, value: float, unit: str) -> dict:
        """Convert a length in meters.

        Args:
            value: The length in meters.
            unit: The unit to convert to.
        """
        factors = {"feet": 3.28084, "inches": 39.3701}
        if unit not in factors:
            return {"error": f"Invalid unit '{unit}': expected one of 'feet', 'inches'"}
        return {"converted": value * factors[unit]}


def test_rejected_literals_are_repaired_from_the_message_and_rerun() -> None:
    rt = PythonRuntime.from_classes([Phone], trusted=True)
    try:
        summary = check_contracts(rt.catalog, rt)
    finally:
        rt.close()
    for tool in ("Phone.add_contact", "Phone.set_reminder", "Phone.convert_length"):
        tc = summary.per_tool[tool]
        assert tc.templates[0].observed == "success", (tool, tc.templates[0])
    c = summary.contracts
    assert c["Phone.add_contact"].templates[0].arguments["phone_number"].value.startswith("+")
    assert c["Phone.set_reminder"].templates[0].arguments["timestamp"].value >= 315532800
    assert c["Phone.convert_length"].templates[0].arguments["unit"].value in ("feet", "inches")


@pytest.mark.parametrize(
    ("name", "schema", "current", "message", "expected"),
    [
        ("phone_number", {"type": "string"}, "5550100", "Invalid phone number: must start with '+'", "+5550100"),
        ("unit", {"type": "string"}, "hello", "unit must be one of: meters, feet, miles.", "meters"),
        ("unit", {"type": "string"}, "hello", "Invalid unit 'hello': expected 'celsius' or 'fahrenheit'", "celsius"),
        ("count", {"type": "integer"}, 2, "count must be at least 5", 5),
        ("count", {"type": "integer"}, 2, "count must be greater than 5", 6),
        ("ratio", {"type": "number"}, 2.0, "ratio must be less than 1", 0.0),
        ("when", {"type": "integer"}, 2, "timestamp must be after 1980", 347155200),
        ("day", {"type": "string"}, "hello", "Invalid date: use the format YYYY-MM-DD", "2024-01-01"),
        ("code", {"type": "string"}, "hello", "Invalid code, e.g. 'AB12'", "AB12"),
        (
            "sort_by",
            {"type": "string"},
            "+hello",
            "it must be one of rating, price and must be prefixed with + or -.",
            "+rating",
        ),
        ("path", {"type": "string"}, "x.txt", "path must start with /", "/x.txt"),
        ("name", {"type": "string"}, "hello", "name must start with a letter", None),  # a word, not a literal affix
        ("x", {"type": "string"}, "hello", "Conversion from 'hello' to 'hello' is not supported", None),
        (
            "unit",
            {"type": "string", "enum": ["m", "ft"]},
            "m",
            "unit must be one of: cm, mm",
            None,
        ),  # must fit the schema
        # a word of the characters the message lists
        (
            "sequence",
            {"type": "string"},
            "hello",
            "invalid sequence 'HELLO': use the letters A, C, G, T (or U)",
            "ACGTACGTACGT",
        ),
        ("bits", {"type": "string"}, "hello", "only the characters 0 and 1 are allowed", "010101010101"),
        ("name", {"type": "string"}, "hello", "name must be at least 3 characters long", None),
    ],
)
def test_repair_literal_reads_common_validation_messages(name, schema, current, message, expected) -> None:
    assert repair_literal(name, schema, current, message) == expected


def test_message_parameter_finds_the_offending_input() -> None:
    assert (
        message_parameter("Invalid phone number: must start with '+'", {"name": "a", "phone_number": "5"})
        == "phone_number"
    )
    assert message_parameter("Invalid unit 'cm'", {"from_unit": "cm", "to_unit": "kg"}) == "from_unit"
    assert message_parameter("value out of range", {"a": 1}) == "a"
    assert message_parameter("value out of range", {"a": 1, "b": 2}) is None


# ---------------------------------------------------------------------------------------------------------------
# Fixtures in contract checking
# ---------------------------------------------------------------------------------------------------------------


class Crm:
    """A customer database whose only customer is the sandbox's own."""

    def __init__(self) -> None:
        self.customers = {"+14155550100": {"customer_id": "c-1", "name": "Ann"}}

    def find_customer(self, phone_number: str) -> dict:
        """Find a customer.

        Args:
            phone_number: The phone number to search for.
        """
        if phone_number not in self.customers:
            raise KeyError(f"no customer with phone number {phone_number}")
        return dict(self.customers[phone_number])

    def get_balance(self, account: str) -> dict:
        """The balance of an account.

        Args:
            account: The customer phone number on the account.
        """
        if account not in self.customers:
            raise KeyError(f"unknown account {account}")
        return {"balance": 12}


def test_checking_offers_fixtures_to_inputs_whose_name_or_description_fits() -> None:
    rt = PythonRuntime.from_classes([Crm], trusted=True)
    try:
        summary = check_contracts(rt.catalog, rt, fixtures={"phone_number": "+14155550100"})
    finally:
        rt.close()
    find = summary.per_tool["Crm.find_customer"].templates[0]
    assert find.observed == "success" and find.bindings["phone_number"]["tool"] == "fixture"
    balance = summary.per_tool["Crm.get_balance"].templates[0]
    assert balance.observed == "success" and balance.bindings["account"]["export"] == "phone_number"


def test_fast_refusal_check_agrees_with_the_schema() -> None:
    """classify() decides the standard refusal schema in Python; it must give the schema's own verdict."""
    outputs = [
        None,
        "",
        "ok",
        "Error: no",
        "Database error: no such table",
        "error.log",
        "Failed to connect",
        "ValueError: x",
        [],
        ["a"],
        ["Error: a"],
        ["Error: a", "b"],
        [{"error": "x"}],
        [{"error": None}],
        [{"errors": []}],
        [{"errors": ["e"]}],
        {"error": 404},
        {"error": 0},
        {"error": False},
        {"message": "Error: x"},
        {"message": "fine"},
        {"a": 1, "b": "Error: x"},
        {"login_status": False},
        {"login_status": 0},
        {"loginStatus": False},
        {"took": False},
        {"is_valid": False, "m": "x"},
        {"success": True},
        {"wifi_status": False},
        3,
        True,
        1.5,
    ]
    base_s = {"type": "object", "properties": {"status": {"const": "success"}}, "required": ["status"]}
    base_f = {"type": "object", "properties": {"status": {"enum": ["rejected", "error"]}}, "required": ["status"]}
    for flags in (True, False):
        success, failure = with_refusals(base_s, base_f, refusal_schema(flags))
        contract = Contract("t", [], [], success, failure)
        assert _split_refusals(schema_key(success), schema_key(failure)) is not None  # the fast path is taken
        for status in ("success", "rejected"):
            for out in outputs:
                for changes in ({}, None, {"X": {"added": {"a": 1}}}, []):
                    rec = record(out, status, changes)
                    rec["state_changes"] = changes
                    ok, bad = schema_accepts(success, rec), schema_accepts(failure, rec)
                    expected = "success" if ok and not bad else "failure" if bad and not ok else "unmatched"
                    assert classify(contract, rec) == expected, (flags, rec)
