"""Offers in a state that refuses the consumer whatever value it is given (a sign-in gate) are not spent there."""

from __future__ import annotations

from libra.induction.build import BuildOptions, build_library
from libra.induction.config import BuildConfig
from libra.induction.explore.schedule import gate_message

from .induction_toys import ClassesBenchmark


class Desk:
    """A directory anyone may read; sending and the favourites list need a sign-in."""

    def __init__(self) -> None:
        self.signed_in = False

    def directory(self) -> dict:
        """List the people in the directory."""
        return {"recipients": ["ann", "bob", "cat"]}

    def staff(self) -> dict:
        """List the staff members."""
        return {"recipients": ["dan", "eve", "fay"]}

    def sign_in(self) -> dict:
        """Sign in to the desk."""
        self.signed_in = True
        return {"signed_in": True}

    def favourites(self) -> dict:
        """List the favourite recipients of the signed-in user."""
        if not self.signed_in:
            raise PermissionError("Not signed in.")
        return {"favourite_recipients": ["zed"]}

    def send(self, recipient: str) -> dict:
        """Send a greeting to a recipient.

        Args:
            recipient: The recipient to send to.
        """
        if not self.signed_in:
            raise PermissionError("Not signed in.")
        if recipient != "zed":
            raise KeyError(f"Unknown recipient {recipient!r}")
        return {"sent_to": recipient}


def test_gate_message_is_the_refusal_that_names_no_argument() -> None:
    assert (
        gate_message("No user is currently logged in.", {"receiver_id": "USR003"}) == "no user is currently logged in."
    )
    assert gate_message("Receiver ID 'USR003' not found.", {"receiver_id": "USR003"}) is None
    assert gate_message(None, {}) is None


def test_offers_refused_by_a_gate_leave_the_budget_for_the_open_state() -> None:
    # send may run four times with an offered value. Six directory and staff names are offered in the fresh state, where
    # every one is refused "Not signed in."; the favourite that send accepts is only listed after sign_in. Once two
    # offers got the same refusal naming none of their values, the fresh state is gated for send and the rest of
    # the budget is left for the signed-in state, where favourites -> send is found.
    lib = build_library(
        ClassesBenchmark(Desk),
        None,
        BuildOptions(workers=0, progress=False, config=BuildConfig(max_calls_per_tool=4, batch_size=2)),
    )
    edges = {(r.provider, r.consumer, r.kind) for r in lib.relations}
    assert ("Desk.favourites", "Desk.send", "provenance") in edges, sorted(edges)
    assert lib.stats["engine"].get("skipped_gated", 0) > 0


class Broker:
    """Quotes a symbol on the signed-in user's favourites; the favourites are only listed after sign_in."""

    def __init__(self) -> None:
        self.signed_in = False

    def sign_in(self) -> dict:
        """Sign in to the broker."""
        self.signed_in = True
        return {"signed_in": True}

    def favourites(self) -> dict:
        """List the favourite symbols of the signed-in user."""
        if not self.signed_in:
            raise PermissionError("Not signed in.")
        return {"symbols": ["ZED"]}

    def quote(self, symbol: str) -> dict:
        """Quote a symbol.

        Args:
            symbol: The symbol to quote.
        """
        if symbol != "ZED":
            raise KeyError(f"Unknown symbol {symbol!r}")
        return {"price": 3.5}


class Registry:
    """Another service whose listings look like symbols to the broker."""

    def list_codes(self) -> dict:
        """List the registry codes."""
        return {"symbols": ["AA", "BB", "CC"]}

    def list_more_codes(self) -> dict:
        """List more registry codes."""
        return {"symbols": ["DD", "EE", "FF"]}


def test_a_state_its_own_group_opened_is_read_before_offers_from_other_groups() -> None:
    # quote may run three times with an offered value. Another service's six look-alike symbols are offered
    # across groups; the favourite that quote accepts is listed only when favourites re-runs after sign_in. That
    # re-run (a probe of a state its own group created) goes before the cross-group offers, so the budget is
    # still there for favourites -> quote.
    lib = build_library(
        ClassesBenchmark(Broker, Registry),
        None,
        BuildOptions(workers=0, progress=False, config=BuildConfig(max_calls_per_tool=3, batch_size=2)),
    )
    edges = {(r.provider, r.consumer, r.kind) for r in lib.relations}
    assert ("Broker.favourites", "Broker.quote", "provenance") in edges, sorted(edges)


class Drive:
    """A drive behind a token: sign-in answers with three tokens, as OAuth does, and only the access token opens
    the reader; the listing holds a folder and a file."""

    def __init__(self) -> None:
        self.tokens: dict[str, str] = {}

    def sign_in(self) -> dict:
        """Sign in to the drive."""
        self.tokens = {"access_token": "at-5c1e9b", "refresh_token": "rt-77d0a2", "id_token": "it-0f3b64"}
        return dict(self.tokens)

    def list_files(self, access_token: str) -> list[str]:
        """List the files on the drive.

        Args:
            access_token: Access token from sign_in.
        """
        if not self.tokens or access_token != self.tokens["access_token"]:
            raise PermissionError("Not authorized.")
        return ["photos/", "photos/cat.png"]

    def read_file(self, access_token: str, file_path: str) -> dict:
        """Read a file.

        Args:
            access_token: Access token from sign_in.
            file_path: Path of the file.
        """
        if not self.tokens or access_token != self.tokens["access_token"]:
            raise PermissionError("Not authorized.")
        if file_path != "photos/cat.png":
            raise FileNotFoundError(f"No file at {file_path!r}")
        return {"size": 2048}


def test_wrong_tokens_refused_do_not_gate_a_signed_in_reader_for_its_other_input() -> None:
    # In the signed-in state, the refresh and id tokens offered to read_file's access token are refused "Not
    # authorized.", which names neither: two such refusals. Gated per consumer, the state would then skip the
    # listing's paths offered to file_path too, and list_files -> read_file would never be tested. Offers are
    # gated per input, so the file path is still offered there.
    lib = build_library(
        ClassesBenchmark(Drive), None, BuildOptions(workers=0, progress=False, config=BuildConfig(batch_size=2))
    )
    edges = {(r.provider, r.consumer, r.kind, r.consumer_input) for r in lib.relations}
    assert ("Drive.list_files", "Drive.read_file", "provenance", "file_path") in edges, sorted(edges)
    assert ("Drive.sign_in", "Drive.read_file", "provenance", "access_token") in edges, sorted(edges)
