"""Introspection on pydantic and docstring_parser, and schemas with ``$ref``: return annotations, sentinels and
the common docstring styles become schemas, and parameters that refer into ``$defs`` keep their definitions.

The tools below are written the way an ordinary developer writes them: type hints (TypedDict, dataclass, pydantic
models, Enum, Literal, datetime, UUID), docstrings in the three common styles, a sentinel default. Nothing
declares a JSON Schema by hand.
"""

from __future__ import annotations

import enum
import uuid
from dataclasses import dataclass
from datetime import date, datetime
from typing import Annotated, Literal, NotRequired, Optional, TypedDict

import pytest
from pydantic import BaseModel

from libra.catalog import Catalog, Tool
from libra.contracts.offline.proposer import propose
from libra.induction.build import BuildOptions, build_library
from libra.retrieval.documents import text_document
from libra.runtime.python.introspect import json_default, read_docstring, tool_document, type_schema
from libra.runtime.python.runtime import PythonRuntime
from libra.schema import dereference, fits

from .induction_toys import ClassesBenchmark

NOT_GIVEN = object()


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Contact(TypedDict):
    """A person in the address book."""

    name: str
    phone: NotRequired[str]


@dataclass
class Reminder:
    title: str
    due: datetime
    priority: Priority = Priority.LOW


class Address(BaseModel):
    street: str
    city: str


class Customer(BaseModel):
    """A customer record."""

    name: str
    address: Address
    tier: Priority = Priority.LOW


class Node(BaseModel):
    label: str
    children: list[Node] = []


class Marker:
    """An arbitrary class: its instances have no JSON form."""


def add_contact(
    contact: Contact, notify: bool = False, source: object = NOT_GIVEN, marker: Marker = Marker()
) -> Contact:
    """Add a contact to the address book.

    Args:
        contact: The contact to add.
        notify: Whether to text the contact,
            once it is saved.
        source: Where the contact came from.

    Returns:
        The saved contact.
    """
    return contact


def schedule(
    reminder: Reminder, when: Optional[date] = None, channel: Literal["sms", "email"] = "sms"
) -> list[Reminder]:
    """Schedule a reminder.

    Parameters
    ----------
    reminder : Reminder
        What to remind of.
    when : date, optional
        The day to remind on.

    Returns
    -------
    list of Reminder
        Every scheduled reminder.
    """
    return [reminder]


def register(
    customer: Customer,
    ref: uuid.UUID,
    priority: Priority = Priority.HIGH,
    email: Annotated[str, {"format": "email"}] = "a@b.c",
) -> Customer:
    """Register a customer.

    :param customer: The customer to register.
    :param ref: The request's id.
    :returns: The stored customer.
    """
    return customer


def untyped(x, y=3):  # noqa: ANN001, ANN201 - a benchmark-style function without annotations
    """No annotations at all."""
    return x


def test_typeddict_sentinel_defaults_and_google_docstring() -> None:
    doc = tool_document("book.add_contact", add_contact)
    assert doc["description"] == "Add a contact to the address book."
    params = doc["parameters"]
    assert params["required"] == ["contact"]
    props = params["properties"]
    # a typing.TypedDict (which pydantic refuses before Python 3.12) still becomes a record
    contact = props["contact"]
    assert contact["description"] == "The contact to add."
    assert (
        contact["type"] == "object"
        and contact["required"] == ["name"]
        and contact["properties"] == {"name": {"type": "string"}, "phone": {"type": "string"}}
    )
    assert props["notify"] == {
        "type": "boolean",
        "description": "Whether to text the contact, once it is saved.",
        "default": False,
    }
    # defaults without a JSON form are left out, not written as {}; the parameters stay optional
    assert props["source"] == {"description": "Where the contact came from."}
    assert "default" not in props["marker"]
    assert json_default(NOT_GIVEN) == (False, None) and json_default(Priority.HIGH) == (True, "high")
    # the return annotation is the response schema, its description the Returns section
    response = doc["response"]
    assert response["type"] == "object" and response["description"] == "The saved contact."
    tool = Tool(name=doc["name"], description=doc["description"], parameters=params, response=response)
    assert tool.param_schema("contact")["properties"]["name"] == {"type": "string"}
    assert tool.param_schema("contact")["description"] == "The contact to add."


def test_dataclass_datetime_literal_and_numpy_docstring() -> None:
    doc = tool_document("cal.schedule", schedule)
    props = doc["parameters"]["properties"]
    assert doc["parameters"]["required"] == ["reminder"]
    assert props["reminder"]["description"] == "What to remind of."
    assert props["when"] == {
        "type": ["string", "null"],
        "format": "date",
        "description": "The day to remind on.",
        "default": None,
    }
    assert props["channel"] == {"enum": ["sms", "email"], "type": "string", "default": "sms"}
    tool = Tool(name=doc["name"], parameters=doc["parameters"], response=doc["response"])
    reminder = tool.param_schema("reminder")
    assert reminder["properties"]["due"] == {"type": "string", "format": "date-time"}
    assert (
        reminder["properties"]["priority"]["enum"] == ["low", "high"]
        and reminder["properties"]["priority"]["default"] == "low"
    )
    assert fits(reminder, {"title": "call", "due": "2024-01-01T10:00:00Z"})
    assert not fits(reminder, {"title": "call", "due": "2024-01-01T10:00:00Z", "priority": "urgent"})
    assert doc["response"]["type"] == "array" and doc["response"]["description"] == "Every scheduled reminder."
    assert "$ref" in doc["response"]["items"]  # stored as pydantic writes it ...
    assert tool.response_schema["items"]["properties"]["title"] == {
        "type": "string"
    }  # ... read with references inlined
    # retrieval text lists the listed record's fields
    assert "due (string)" in text_document(tool) and "title (string)" in text_document(tool)


def test_model_uuid_enum_annotated_and_rest_docstring() -> None:
    doc = tool_document("crm.register", register)
    params = doc["parameters"]
    props = params["properties"]
    assert params["required"] == ["customer", "ref"]
    assert props["ref"] == {"type": "string", "format": "uuid", "description": "The request's id."}
    assert props["email"] == {"type": "string", "format": "email", "default": "a@b.c"}
    assert props["priority"]["default"] == "high"
    # the parameter's record is written in place, the records nested in it are shared in $defs
    assert props["customer"]["properties"]["address"] == {"$ref": "#/$defs/Address"} and set(params["$defs"]) == {
        "Address",
        "Priority",
    }
    response = doc["response"]
    assert response["description"] == "The stored customer." and response["type"] == "object"
    assert set(response["properties"]) == {"name", "address", "tier"}
    tool = Tool(name=doc["name"], parameters=params, response=response)
    customer = tool.param_schema("customer")
    assert customer["properties"]["address"]["properties"]["city"] == {"type": "string"}
    assert fits(customer, {"name": "Ann", "address": {"street": "1 Main St", "city": "Oslo"}})
    assert not fits(customer, {"name": "Ann"})
    assert not fits(tool.param_schema("ref"), "not-a-uuid") and fits(tool.param_schema("ref"), str(uuid.UUID(int=1)))


def test_unannotated_function_stays_opaque() -> None:
    doc = tool_document("m.untyped", untyped)
    assert "response" not in doc
    assert doc["parameters"] == {"type": "object", "properties": {"x": {}, "y": {"default": 3}}, "required": ["x"]}


def test_type_schema_of_plain_hints_is_unchanged() -> None:
    assert type_schema(Optional[list[str]])[0] == {"type": ["array", "null"], "items": {"type": "string"}}
    assert type_schema(Optional[Literal["a", "b"]]) == ({"enum": ["a", "b", None], "type": ["string", "null"]}, True)
    assert type_schema(list)[0] == {"type": "array"} and type_schema(dict)[0] == {"type": "object"}
    assert type_schema(Marker) == ({}, False)


def test_docstring_styles() -> None:
    google = read_docstring("Look up.\n\nArgs:\n    q (str): The query.\n\nReturns:\n    dict: The hit.")
    numpy = read_docstring(
        "Look up.\n\nParameters\n----------\nq : str\n    The query.\n\nReturns\n-------\ndict\n    The hit."
    )
    rest = read_docstring("Look up.\n\n:param q: The query.\n:returns: The hit.")
    for d in (google, numpy, rest):
        assert (d.description, d.params, d.returns) == ("Look up.", {"q": "The query."}, "The hit.")


def test_dereference_recursive_and_broken_references() -> None:
    schema = type_schema(Node)[0]
    flat = dereference(schema)
    assert "$defs" not in flat and flat["properties"]["label"] == {"type": "string"}
    # the recursion is cut where the reference repeats: nested children may be anything
    assert flat["properties"]["children"]["items"] == {}
    assert fits(flat, {"label": "root", "children": [{"label": "leaf"}]})
    # a reference to nowhere becomes "any value", and a broken schema is a False verdict, never an exception
    assert dereference({"$ref": "#/$defs/Missing", "description": "x"}) == {"description": "x"}
    assert fits({"type": "no-such-type"}, 1) is False
    assert fits({"$ref": "#/$defs/Missing"}, 1) is False
    assert fits({"type": "string", "format": "email"}, "nobody") is False


# ---------------------------------------------------------------------------------------------------------------
# A build over a catalog whose parameters refer into $defs
# ---------------------------------------------------------------------------------------------------------------


class CRM:
    """Customers and their orders."""

    def __init__(self) -> None:
        self.customers: dict[str, dict] = {}

    def create_customer(self, customer: Customer) -> dict:
        """Create a new customer.

        Args:
            customer: The new customer's record.
        """
        record = customer if isinstance(customer, dict) else customer.model_dump()
        if not isinstance(record.get("address"), dict):
            return {"error": "address required"}
        customer_id = f"c{len(self.customers) + 1}"
        self.customers[customer_id] = record
        return {"customer_id": customer_id}

    def get_customer(self, customer_id: str) -> Customer:
        """Show an existing customer.

        Args:
            customer_id: The id of the existing customer.
        """
        if customer_id not in self.customers:
            raise KeyError(f"no customer {customer_id}")
        return self.customers[customer_id]  # type: ignore[return-value]

    def move_customer(self, customer_id: str, address: Address) -> dict:
        """Change an existing customer's address.

        Args:
            customer_id: The id of the existing customer.
            address: The new address.
        """
        if customer_id not in self.customers:
            return {"error": "no such customer"}
        self.customers[customer_id]["address"] = address if isinstance(address, dict) else address.model_dump()
        return {"moved": True}


# What pydantic writes for CRM.move_customer, as a hand-written catalog would hold it (references into $defs).
_DEFS = {
    "Address": {
        "type": "object",
        "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        "required": ["street", "city"],
    }
}


class DocsBenchmark(ClassesBenchmark):
    """CRM with its documents given as JSON whose parameters use $ref (the catalog a user may bring)."""

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw):
        docs = Catalog(
            [
                Tool(
                    "CRM.create_customer",
                    "Create a new customer.",
                    {
                        "type": "object",
                        "properties": {"customer": {"$ref": "#/$defs/Customer"}},
                        "required": ["customer"],
                        "$defs": {
                            **_DEFS,
                            "Customer": {
                                "type": "object",
                                "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/Address"}},
                                "required": ["name", "address"],
                            },
                        },
                    },
                ),
                Tool(
                    "CRM.get_customer",
                    "Show an existing customer.",
                    {
                        "type": "object",
                        "properties": {
                            "customer_id": {"type": "string", "description": "The id of the existing customer."}
                        },
                        "required": ["customer_id"],
                    },
                ),
                Tool(
                    "CRM.move_customer",
                    "Change an existing customer's address.",
                    {
                        "type": "object",
                        "properties": {
                            "customer_id": {"type": "string", "description": "The id of the existing customer."},
                            "address": {"$ref": "#/$defs/Address"},
                        },
                        "required": ["customer_id", "address"],
                        "$defs": _DEFS,
                    },
                ),
            ],
            name="crm-docs",
        )
        return PythonRuntime(classes=[CRM], docs=docs, trusted=True, name="crm-docs")


@pytest.mark.parametrize("bench", [ClassesBenchmark(CRM), DocsBenchmark(CRM)], ids=["introspected", "json-docs"])
def test_build_over_refs(bench: ClassesBenchmark) -> None:
    catalog = bench.catalog()
    assert "$defs" in catalog["CRM.create_customer"].parameters
    customer = catalog["CRM.create_customer"].param_schema("customer")
    assert "$ref" not in str(customer) and fits(
        customer, {"name": "Ann", "address": {"street": "1 Main St", "city": "Oslo"}}
    )
    assert not fits(customer, {"name": "Ann", "address": {"street": "1 Main St"}})
    # the offline proposer's literal for a record parameter is a valid record
    contract = propose(catalog["CRM.create_customer"])
    arg = contract.templates[0].arguments["customer"]
    assert arg.kind == "literal" and fits(catalog["CRM.create_customer"].param_schema("customer"), arg.value)
    lib = build_library(bench, None, BuildOptions(workers=0, progress=False))  # used to raise PointerToNowhere
    assert set(lib.catalog.names) == set(catalog.names)
    # the record literal was accepted by the tool, so the customer it created fed the next tools
    found = {(r.provider, r.consumer, r.kind) for r in lib.relations}
    assert ("CRM.create_customer", "CRM.move_customer", "provenance") in found
    assert ("CRM.create_customer", "CRM.get_customer", "provenance") in found


def test_one_unresolvable_annotation_spares_the_others() -> None:
    # this module uses ``from __future__ import annotations``: every annotation is a string to resolve
    def find(name: str, limit: int = 5, hook: NoSuchType | None = None) -> list[Contact]:  # noqa: F821
        """Find contacts by name."""
        return []

    assert find.__annotations__["hook"] == "NoSuchType | None"
    doc = tool_document("book.find", find)
    assert doc["parameters"]["properties"]["limit"] == {"type": "integer", "default": 5}
    assert doc["parameters"]["properties"]["hook"] == {}
    assert dereference(doc["response"])["items"]["properties"]["name"] == {"type": "string"}


def test_optional_record_reads_as_a_typed_record() -> None:
    def update(
        customer: Optional[Customer] = None, emails: list[Annotated[str, {"format": "email"}]] | None = None
    ) -> None:
        """Update a customer."""

    doc = tool_document("crm.update", update)
    assert doc["parameters"]["required"] == [] and doc["response"] == {"type": "null"}
    assert doc["parameters"]["properties"]["emails"] == {
        "type": ["array", "null"],
        "items": {"type": "string", "format": "email"},
        "default": None,
    }
    customer = Tool(name="crm.update", parameters=doc["parameters"]).param_schema("customer")
    assert customer["type"] == ["object", "null"] and customer["required"] == ["name", "address"]
    assert fits(customer, None) and fits(customer, {"name": "Ann", "address": {"street": "1 Main St", "city": "Oslo"}})
