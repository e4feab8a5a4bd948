"""The offline proposer's literals and templates on small tools written here: booleans and choices tried every way,
searches that reveal records, literals repaired from rejections, and invented literals that fit their input.

Each test defines the smallest tool that shows one rule and fails on the proposer before the rule existed.
"""

from __future__ import annotations

from typing import Any

from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog, Tool
from libra.contracts.offline.decisions import decide_parameter
from libra.contracts.offline.proposer import propose
from libra.contracts.offline.templates import MAX_CRITERION_TEMPLATES, MAX_VALUE_VARIANTS
from libra.values.generator import literal_for
from libra.values.prose import described_choices


def _tool(name: str, properties: dict[str, Any], required: list[str] | None = None, description: str = "") -> Tool:
    return Tool(
        name=name,
        description=description or name,
        parameters={"type": "object", "properties": properties, "required": list(required or [])},
    )


def _success_values(tool: Tool, param: str) -> list[Any]:
    """The literal values a parameter takes across the proposal's success templates."""
    out = []
    for t in propose(tool).templates:
        arg = t.arguments.get(param)
        if t.expected == "success" and arg is not None and arg.kind == "literal":
            out.append(arg.value)
    return out


# ------------------------------------------------------------------------ booleans and choices are tried every way


def test_a_boolean_is_tried_both_ways() -> None:
    tool = _tool("set_wifi", {"enabled": {"type": "boolean", "description": "Whether wifi is on."}}, ["enabled"])
    assert sorted(_success_values(tool, "enabled")) == [False, True]


def test_an_effect_complete_boolean_still_gets_its_opposite() -> None:
    """``unlock`` against a tool named for locking is False first (F7), and True in a variant."""
    tool = _tool(
        "lock_doors",
        {"unlock": {"type": "boolean", "description": "True if unlock the doors, False if lock."}},
        ["unlock"],
    )
    assert _success_values(tool, "unlock") == [False, True]


def test_enum_values_are_covered_within_the_budget() -> None:
    tool = _tool("set_mode", {"mode": {"type": "string", "enum": ["eco", "normal", "sport", "race"]}}, ["mode"])
    values = _success_values(tool, "mode")
    assert values == ["eco", "normal", "sport"][: 1 + MAX_VALUE_VARIANTS]
    assert len(propose(tool).templates) == 1 + MAX_VALUE_VARIANTS


def test_extra_templates_stay_within_the_budget() -> None:
    props = {f"flag{i}": {"type": "boolean"} for i in range(5)} | {"mode": {"type": "string", "enum": ["a", "b", "c"]}}
    tool = _tool("configure", props, list(props))
    success = [t for t in propose(tool).templates if t.expected == "success"]
    assert len(success) == 1 + MAX_VALUE_VARIANTS


class Phone:
    """A phone whose wifi starts on and gates syncing."""

    def __init__(self) -> None:
        self.wifi = True
        self.synced = 0

    def set_wifi(self, enabled: bool) -> dict:
        """Turn wifi on or off.

        Args:
            enabled: Whether wifi should be on.
        """
        self.wifi = enabled
        return {"wifi": enabled}

    def sync_mail(self) -> dict:
        """Fetch new mail from the server."""
        if not self.wifi:
            raise RuntimeError("no network: wifi is off")
        self.synced += 1
        return {"synced": self.synced}


class PhoneBenchmark(Benchmark):
    name = "phone-toy"

    def catalog(self) -> Catalog:
        rt = self.runtime()
        try:
            return rt.catalog
        finally:
            rt.close()

    def tasks(self):
        return []

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw: Any):
        from libra.runtime.python.runtime import PythonRuntime

        return PythonRuntime(classes=[Phone], trusted=True, name="phone-toy")


def test_a_gate_that_starts_on_is_found_from_the_fresh_state() -> None:
    """Off then on is a chain of depth 2: it exists only when the toggle is also tried as False."""
    from libra.induction.build import BuildOptions, build_library

    lib = build_library(PhoneBenchmark(), None, BuildOptions(workers=0, progress=False))
    assert any(
        r.kind == "state" and (r.provider, r.consumer) == ("Phone.set_wifi", "Phone.sync_mail") for r in lib.relations
    ), lib.relations


# ----------------------------------------------------------------------------------------- searches reveal records


def test_a_search_reveals_with_no_criterion_or_one_at_a_time() -> None:
    tool = _tool(
        "search_contacts",
        {
            "query": {"type": "string", "description": "Text to search for."},
            "phone_number": {"type": "string", "description": "The phone number of an existing contact."},
            "relationship": {"type": "string", "enum": ["friend", "family", "work"]},
            "page_limit": {"type": "integer"},
        },
    )
    success = [t for t in propose(tool).templates if t.expected == "success"]
    used = [[p for p, a in t.arguments.items() if a.kind != "omit"] for t in success]
    assert [] in used, "no template without optional criteria"
    assert all(len(u) <= 1 for u in used), used
    criteria = [u[0] for u in used if u]
    assert criteria[0] == "phone_number"  # a reference first: it is bound to a value that exists
    assert "page_limit" not in criteria  # paging shows part of a result, it does not filter it
    assert len({c for c in criteria}) <= MAX_CRITERION_TEMPLATES + MAX_VALUE_VARIANTS


def test_an_action_still_gets_its_effect_complete_template() -> None:
    tool = _tool("update_profile", {"nickname": {"type": "string"}, "bio": {"type": "string"}})
    complete = next(t for t in propose(tool).templates if t.name == "complete")
    assert all(a.kind == "literal" for a in complete.arguments.values())


# ------------------------------------------------ invented literals fit their input: distinct, valid, as described


def test_free_strings_are_distinct_per_field() -> None:
    tool = _tool(
        "add_address",
        {p: {"type": "string"} for p in ("address1", "address2", "zip", "state", "note")},
        ["address1", "address2", "zip", "state", "note"],
    )
    values = [propose(tool).templates[0].arguments[p].value for p in tool.param_names]
    assert len(set(values)) == len(values), values
    # free text is deterministic, and shared by fields of the same name in another tool; a realistic kind (a zip
    # code) is drawn per tool, as two tools asking for one usually mean two places
    other = _tool("update_address", {p: {"type": "string"} for p in ("zip", "note")}, ["zip", "note"])
    mine, theirs = propose(tool).templates[0].arguments, propose(other).templates[0].arguments
    assert theirs["note"].value == mine["note"].value
    assert (
        theirs["zip"].value != mine["zip"].value
        and theirs["zip"].value == propose(other).templates[0].arguments["zip"].value
    )


def test_conventional_kinds_stay_valid_and_distinct() -> None:
    schema = {"type": "string", "format": "email"}
    assert literal_for("sender_email", schema) != literal_for("recipient_email", schema)
    assert literal_for("source_file", {"type": "string"}) != literal_for("destination_file", {"type": "string"})
    home, work = literal_for("home_phone", {"type": "string"}), literal_for("work_phone", {"type": "string"})
    assert home != work and all(p.startswith("+") and p[1:].isdigit() for p in (home, work))  # E.164


def test_choices_written_in_the_description_are_read() -> None:
    desc = "Why the item goes back: either 'no longer needed' or 'ordered by mistake'."
    tool = _tool("return_item", {"reason": {"type": "string", "description": desc}}, ["reason"])
    assert decide_parameter(tool, "reason", tool.param_schema("reason")).kind == "literal"
    assert _success_values(tool, "reason") == ["no longer needed", "ordered by mistake"]
    assert described_choices("Frequency, one of: daily, weekly, monthly.") == (["daily", "weekly", "monthly"], True)
    assert described_choices("One of the accounts the user owns.") == ([], False)


def test_quoted_alternatives_without_a_cue_are_the_choices() -> None:
    """Each allowed value glossed and quoted, the last after "or": the sentence names the whole set."""
    desc = "Whether to list local branches ('local'), remote branches ('remote') or all branches('all')."
    assert described_choices(desc) == (["local", "remote", "all"], True)
    tool = _tool("list_branches", {"branch_type": {"type": "string", "description": desc}}, ["branch_type"])
    assert decide_parameter(tool, "branch_type", tool.param_schema("branch_type")).kind == "literal"
    assert _success_values(tool, "branch_type")[0] == "local"
    assert described_choices("Sort order: 'asc' or 'desc'.") == (["asc", "desc"], True)
    # examples stay examples; one quoted word, or quotes not joined by "or", is no set
    assert described_choices("A name, e.g. 'Bob' or 'Alice'.") == (["Bob", "Alice"], False)
    assert described_choices("Pass 'HEAD' for the current commit.") == ([], False)
    assert described_choices("The 'name' and the 'title' of the page.") == ([], False)


def test_examples_in_a_description_become_literals() -> None:
    """A lookup with an invented key returns nothing and no message to learn from; a described example can."""
    tool = _tool(
        "find_doctors",
        {"specialty": {"type": "string", "description": "Medical specialty, e.g. dermatology, cardiology"}},
        ["specialty"],
    )
    assert _success_values(tool, "specialty") == ["dermatology"]  # examples are not the closed set: no variants
    assert described_choices("Medical specialty, e.g. dermatology, cardiology") == (
        ["dermatology", "cardiology"],
        False,
    )


def test_list_items_are_built_from_the_item_schema() -> None:
    item = {
        "type": "object",
        "properties": {
            "sku": {"type": "string"},
            "gift_note": {"type": "string"},
            "quantity": {"type": "integer", "minimum": 1},
        },
        "required": ["sku", "gift_note", "quantity"],
    }
    value = literal_for("items", {"type": "array", "items": item, "minItems": 1})
    assert isinstance(value, list) and len(value) == 1
    assert set(value[0]) == {"sku", "gift_note", "quantity"} and value[0]["sku"] != value[0]["gift_note"]


# ------------------------------------------------------------------------------------------- no benchmark literals


def test_the_generic_proposer_invents_no_airport_codes_or_molecules() -> None:
    """Domain values come from the catalog as JSON Schema ``examples``; the generic proposer reads them."""
    travel = {"type": "string", "description": "The location the travel is from"}
    assert literal_for("travel_from", travel) != "JFK"
    assert literal_for("travel_from", {**travel, "examples": ["JFK"]}) == "JFK"
    assert literal_for("smiles", {"type": "string", "description": "SMILES"}) != "CCO"


def test_scitooleval_parameters_carry_their_encoding_examples() -> None:
    from libra.benchmarks.scitooleval.adapter import load_catalog

    cat = load_catalog()
    with_examples = [t for t in cat for p in t.param_names if "examples" in t.param_schema(p)]
    assert with_examples
    smiles = next(t for t in cat if t.param_names == ["smiles"])
    assert smiles.param_schema("smiles")["examples"] == ["CCO"]
    assert literal_for("smiles", smiles.param_schema("smiles")) == "CCO"


def test_message_naming_another_input_blames_no_literal():
    """A rejection that names a non-literal input is not repaired into the only literal.

    Before, "phone_number must start with '+'" was written into a message's ``text`` literal, the only literal
    of the call, while the phone number (an observation) stayed malformed.
    """
    from libra.values.repair import message_parameter

    msg = "ValueError: phone_number must start with '+' and country code"
    assert message_parameter(msg, {"text": "sample text"}) == "text"  # no other input known: the only literal
    assert message_parameter(msg, {"text": "sample text"}, others=["phone_number"]) is None
    assert message_parameter(msg, {"phone_number": "555"}, others=["text"]) == "phone_number"
