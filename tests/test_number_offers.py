"""Numbers one tool returns are offered to numbers another takes; only a real need becomes a relation."""

from __future__ import annotations

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
