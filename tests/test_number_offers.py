"""Numbers one tool returns are offered to numbers another takes; only a real need becomes a relation."""

from __future__ import annotations

from libra.contracts.model import Contract
from libra.induction.build import BuildOptions, build_library

from .induction_toys import ClassesBenchmark


class Car:
    """A car whose gauge reading and refuelling both speak of fuel, and a lock that takes only its own code."""

    def __init__(self) -> None:
        self.fuel = 10.0
        self.locked = True

    def read_gauge(self) -> dict:
        """Show the fuel level in the tank, in litres."""
        return {"fuel_level": self.fuel}

    def refuel(self, fuel_amount: float) -> dict:
        """Add fuel to the tank.

        Args:
            fuel_amount: Litres of fuel to add, any positive amount.
        """
        if fuel_amount <= 0:
            raise ValueError("fuel_amount must be positive")
        self.fuel += fuel_amount
        return {"fuel_level": self.fuel}

    def show_unlock_code(self) -> dict:
        """Show the numeric code that unlocks the car."""
        return {"unlock_code": 4711}

    def unlock(self, unlock_code: int) -> dict:
        """Unlock the car.

        Args:
            unlock_code: The car's numeric unlock code.
        """
        if unlock_code != 4711:
            raise PermissionError("wrong unlock code")
        self.locked = False
        return {"locked": self.locked}


def test_a_number_any_value_of_which_works_is_no_dependency() -> None:
    lib = build_library(ClassesBenchmark(Car), None, BuildOptions(workers=0, progress=False))
    pairs = {(r.provider, r.consumer, r.kind) for r in lib.relations}
    # refuel works with the gauge's reading and with its own literal alike: the names align, yet any amount
    # will do, so no compatibility relation is kept
    assert not any(p == "Car.read_gauge" and c == "Car.refuel" for p, c, _ in pairs), pairs
    # the unlock code is needed: refused with the template's own number, accepted with the shown one
    assert ("Car.show_unlock_code", "Car.unlock", "provenance") in pairs, pairs


UNITS = {"mm": 0.001, "m": 1.0, "km": 1000.0}


class Meter:
    """A meter whose reading names a time and a unit; two helpers check the forms of what they take."""

    def reading(self) -> dict:
        """Read the meter: when the reading was taken (a Unix timestamp) and the unit it is in."""
        return {"timestamp": 1717200000, "unit": "km"}

    def day_of(self, timestamp: int) -> dict:
        """The calendar day of a Unix timestamp.

        Args:
            timestamp: Seconds since the epoch.
        """
        if timestamp < 315532800:
            raise ValueError("timestamp must be on or after 1980-01-01 (315532800)")
        return {"days_since_epoch": timestamp // 86400}

    def unit_size(self, unit: str) -> dict:
        """How many metres a length unit is.

        Args:
            unit: The length unit.
        """
        if unit not in UNITS:
            raise ValueError(f"unknown unit {unit!r}: use one of {', '.join(UNITS)}")
        return {"metres": UNITS[unit]}


def test_a_literal_the_tool_checks_is_offered_and_can_be_compatible() -> None:
    """A literal the tool refused and a revision repaired from the message (a timestamp after 1980, a unit from a
    fixed set) is no free choice: another tool's value is offered to it, text included, and when the repaired
    literal works too the test concludes compatibility (engine v20), unlike a number any value of which works."""
    lib = build_library(ClassesBenchmark(Meter), None, BuildOptions(workers=0, progress=False))
    assert Contract.from_dict(lib.contracts["Meter.day_of"]).checked_literals() == {"timestamp"}
    assert Contract.from_dict(lib.contracts["Meter.unit_size"]).checked_literals() == {"unit"}
    edges = {(r.provider, r.consumer, r.kind, r.provider_field, r.consumer_input) for r in lib.relations}
    assert ("Meter.reading", "Meter.day_of", "compatibility", "timestamp", "timestamp") in edges, edges
    assert ("Meter.reading", "Meter.unit_size", "compatibility", "unit", "unit") in edges, edges
