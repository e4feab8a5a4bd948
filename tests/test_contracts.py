"""Contracts end to end on a small login-gated class run through the generic Python runtime (no mocks)."""

from __future__ import annotations

import json

import pytest

from libra.catalog import Catalog, Tool
from libra.contracts import (
    Argument,
    Contract,
    ContractError,
    Template,
    check_contracts,
    classify,
    contract_schema,
    extract,
    load_contracts,
    propose,
    propose_contracts,
    revise,
    save_contracts,
    validate_contract,
)
from libra.runtime.python.runtime import PythonRuntime


class Board:
    """A tiny message board: accounts, sessions and posts."""

    def __init__(self) -> None:
        self.accounts: dict[str, str] = {}
        self.sessions: dict[str, str] = {}
        self.posts: list[dict[str, str]] = []

    def register(self, username: str, password: str) -> dict:
        """Create a new account.

        Args:
            username: Name for the new account.
            password: Password for the new account.
        """
        if username in self.accounts:
            return {"error": "username taken"}
        self.accounts[username] = password
        return {"registered": True}

    def login(self, username: str, password: str) -> dict:
        """Sign in to an existing account.

        Args:
            username: Username of the account.
            password: Password of the account.
        """
        if self.accounts.get(username) != password:
            return {"error": "bad credentials"}
        token = f"tok-{len(self.sessions) + 1}-{username}"
        self.sessions[token] = username
        return {"token": token}

    def post_message(self, token: str, text: str) -> dict:
        """Post a message to the board.

        Args:
            token: Session token returned by login.
            text: Message text to post.
        """
        if token not in self.sessions:
            return {"error": "not signed in"}
        self.posts.append({"author": self.sessions[token], "text": text})
        return {"post_id": len(self.posts), "author": self.sessions[token]}


@pytest.fixture()
def runtime() -> PythonRuntime:
    rt = PythonRuntime.from_classes([Board], trusted=True)
    yield rt
    rt.close()


def _template(contract: Contract, name: str) -> Template:
    return next(t for t in contract.templates if t.name == name)


def test_proposer_marks_references_as_observations(runtime: PythonRuntime) -> None:
    cat = runtime.catalog
    login = propose(cat["Board.login"])
    post = propose(cat["Board.post_message"])
    register = propose(cat["Board.register"])
    full = _template(login, "complete").arguments
    assert full["username"].kind == "observation" and full["password"].kind == "observation"  # rule 12 sign-in
    args = _template(post, "complete").arguments
    assert args["token"].kind == "observation"
    assert args["text"].kind == "literal" and isinstance(args["text"].value, str)
    reg = _template(register, "complete").arguments
    assert reg["username"].kind == "literal" and reg["password"].kind == "literal"  # account creation constructs
    # a failure template exists only where a required reference exists
    assert [t.expected for t in post.templates].count("failure") == 1
    assert all(t.expected == "success" for t in register.templates)
    for tool in cat:
        assert validate_contract(propose(tool).to_dict(), tool) == []


def test_contract_json_round_trip_and_schema(runtime: PythonRuntime, tmp_path) -> None:
    contracts = propose_contracts(runtime.catalog)
    for c in contracts.values():
        d = c.to_dict()
        assert Contract.from_dict(json.loads(json.dumps(d))).to_dict() == d
    assert contract_schema()["$schema"].endswith("2020-12/schema")
    path = tmp_path / "contracts.json"
    save_contracts(path, contracts, runtime.catalog)
    loaded = load_contracts(path, runtime.catalog)
    assert {k: v.to_dict() for k, v in loaded.items()} == {k: v.to_dict() for k, v in contracts.items()}
    other = Catalog([Tool("Other.tool")], name="other")
    with pytest.raises(ContractError):
        load_contracts(path, other)
    with pytest.raises(ContractError):
        load_contracts(tmp_path / "missing.json")


def test_validate_contract_reports_semantic_errors(runtime: PythonRuntime) -> None:
    tool = runtime.catalog["Board.post_message"]
    d = propose(tool).to_dict()
    d["templates"][0]["arguments"]["bogus"] = {"kind": "literal", "value": 1}
    d["templates"][0]["arguments"]["text"] = {"kind": "literal", "value": 5}
    d["templates"][0]["arguments"]["token"] = {"kind": "omit"}
    d["exports"].append({"name": "x", "source": "response", "path": "$..[", "schema": {}, "propagate": True})
    d["success"] = {"type": "nonsense"}
    errors = "\n".join(validate_contract(d, tool))
    for needle in (
        "'bogus' is not a parameter",
        "literal for 'text'",
        "required parameter 'token'",
        "does not parse",
        "success: not a valid",
    ):
        assert needle in errors
    d2 = propose(tool).to_dict()
    d2["templates"] = [t for t in d2["templates"] if t["expected"] == "failure"]
    assert any("no template is expected to succeed" in e for e in validate_contract(d2, tool))
    assert validate_contract({"tool": "x"}, tool)  # document-schema errors


def test_classify_and_extract_on_real_records(runtime: PythonRuntime) -> None:
    cat = runtime.catalog
    s0 = runtime.fresh()
    rec, s1 = runtime.invoke(s0, "Board.register", {"username": "ann", "password": "pw"})
    login = propose(cat["Board.login"])
    good, s2 = runtime.invoke(s1, "Board.login", {"username": "ann", "password": "pw"})
    bad, _ = runtime.invoke(s1, "Board.login", {"username": "ann", "password": "nope"})
    assert classify(login, good) == "success"
    assert classify(login, bad) == "failure"
    assert classify(login, good.to_dict()) == "success"
    odd = good.to_dict() | {"status": "weird"}
    assert classify(login, odd) == "unmatched"
    # the mechanical argument exports always fire; response structure is unknown before feedback
    got = extract(login, {"username": "ann", "password": "pw"}, good)
    assert ("username", "arguments", "$['username']", "ann") in [tuple(x) for x in got]
    assert not any(x.source == "response" for x in got)
    # [*] paths give one concrete path per element
    c = login.copy()
    c.exports = [type(c.exports[0])("item", "response", "$.items[*].id", {"type": "integer"}, True)]
    vals = extract(
        c,
        {},
        {
            "status": "success",
            "output": {"items": [{"id": 3}, {"id": 4}, {"id": {"deep": 1}}]},
            "state_changes": {},
            "error": None,
            "duration_ms": 0,
        },
    )
    assert [(x.path, x.value) for x in vals] == [("$['items'][0]['id']", 3), ("$['items'][1]['id']", 4)]
    # a documented return name ("items (List[Dict])") for a list the tool returns bare still reads the list
    bare = extract(
        c, {}, {"status": "success", "output": [{"id": 5}], "state_changes": {}, "error": None, "duration_ms": 0}
    )
    assert [(x.path, x.value) for x in bare] == [("$[0]['id']", 5)]


def test_revision_adds_structure_without_copying_values(runtime: PythonRuntime) -> None:
    tool = runtime.catalog["Board.login"]
    contract = propose(tool)
    s0 = runtime.fresh()
    _, s1 = runtime.invoke(s0, "Board.register", {"username": "ann", "password": "pw"})
    args = {"username": "ann", "password": "pw"}
    rec, _ = runtime.invoke(s1, "Board.login", args)
    token = rec.output["token"]
    new = revise(contract, tool, [{"arguments": args, "record": rec.to_dict(), "expected": "success"}])
    assert new is not None and new.revision == 1 and "revised" in new.flags
    exp = new.export("token")
    assert exp is not None and exp.source == "response" and exp.path == "$.token" and exp.propagate
    assert exp.schema == {"type": "string"}
    assert any(e.source == "state_changes" for e in new.exports)
    text = json.dumps(new.to_dict())
    assert token not in text and "ann" not in text and '"pw"' not in text
    assert validate_contract(new.to_dict(), tool) == []
    # nothing new to learn from the same feedback, and never more than two revisions
    assert revise(new, tool, [{"arguments": args, "record": rec.to_dict()}]) is None
    capped = new.copy()
    capped.revision = 2
    assert revise(capped, tool, [{"arguments": args, "record": rec.to_dict()}]) is None


def test_check_binds_token_from_login_and_matches(runtime: PythonRuntime) -> None:
    summary = check_contracts(runtime.catalog, runtime)
    assert summary.tools == 3 and summary.invalid == 0
    per = summary.per_tool
    post = {t.template: t for t in per["Board.post_message"].templates}
    assert post["complete"].observed == "success", post["complete"]
    bind = post["complete"].bindings["token"]
    assert bind["tool"] == "Board.login" and bind["export"] == "token" and bind["path"] == "$['token']"
    assert post["nonexistent_token"].observed == "failure"
    login = {t.template: t for t in per["Board.login"].templates}
    assert login["complete"].bindings["username"]["tool"] == "Board.register"
    assert login["complete"].matched and login["nonexistent_username"].matched
    assert summary.matched == summary.templates and summary.unbound == 0
    assert summary.revised >= 1 and summary.contracts["Board.login"].revision >= 1
    d = summary.to_dict()
    assert {"tools", "templates", "matched", "revised", "invalid", "unbound", "per_tool"} <= set(d)
    json.dumps(d)


def test_argument_constructors_round_trip() -> None:
    for a in (
        Argument.literal([1, {"a": None}]),
        Argument.observation("an existing file", field="file_name"),
        Argument.omit(),
    ):
        assert Argument.from_dict(a.to_dict()) == a
    with pytest.raises(ContractError):
        Argument.from_dict({"kind": "guess"})


def _decide(tool_name: str, param: str, description: str, type_: str = "string") -> str:
    from libra.contracts.offline.decisions import decide_parameter

    tool = Tool.from_dict(
        {
            "name": f"App.{tool_name}",
            "description": "",
            "parameters": {"type": "object", "properties": {param: {"type": type_, "description": description}}},
        }
    )
    return decide_parameter(tool, param, tool.param_schema(param)).kind


def test_account_rules_fire_only_on_account_tools() -> None:
    # sign-up and account creation construct the new identifier and secret (rule 12)
    assert _decide("signup", "email", "Your email address.") == "literal"
    assert _decide("create_account", "username", "User name for the account.") == "literal"
    # creating anything else for a signed-in user does not invent the people it names
    assert _decide("create_transaction", "receiver_email", "Email address of the receiver.") == "observation"
    assert (
        _decide("create_draft", "response_to_email_id", "The ID of the email to respond to.", "integer")
        == "observation"
    )
    # a password reset sets a new secret for an account that must already exist
    assert _decide("reset_password", "new_password", "Your new password.") == "literal"
    assert _decide("reset_password", "email", "Your email address.") == "observation"


def test_phone_numbers_address_people_but_stay_free_in_new_records() -> None:
    assert (
        _decide("send_text_message", "phone_number", "The phone number of the contact to send the message to.")
        == "observation"
    )
    assert _decide("add_contact", "phone_number", "Phone number of the new contact.") == "literal"
    assert _decide("set_alarm", "number", "How many alarms to set.") == "literal"  # a bare number is a quantity
    from libra.values.generator import literal_for

    number = literal_for("phone_number", {"type": "string"})
    assert number.startswith("+") and number[1:].isdigit()  # the international form validation accepts


def test_observed_leaves_keep_numbered_field_names():
    """A record with one numbered field (``address1``) is still a record: its keys are fields, not data.

    Before, a single digit in any key made the whole mapping data-keyed, so a search's customers were exported as
    one ``$[*][*]`` blob and no tool could be given a customer's id or zip code.
    """
    from libra.contracts.leaves import observed_leaves

    leaves = observed_leaves([{"customer_id": "C100001", "address1": "1 Mill Street", "zip_code": "LS123"}])
    assert set(leaves) == {"$[*].customer_id", "$[*].address1", "$[*].zip_code"}
    # ids and dates used as keys stay data
    assert set(observed_leaves({"C100001": {"name": "a"}, "C100002": {"name": "b"}})) == {"$[*].name"}
    assert set(observed_leaves({"user_42": 1})) == {"$[*]"}


def test_exports_without_a_field_name_are_named_after_the_tool():
    """A scalar reply, or the elements of a bare list of scalars, is named by the tool minus its read verb: the
    name is what offers are ranked by and what propagation picks providers by; ``response_value`` resembles no
    input."""
    from libra.contracts.offline.exports import response_exports

    genres = Tool(
        "show_genres",
        "Show the music genres.",
        {"type": "object", "properties": {}},
        response={"type": "array", "items": {"type": "string"}},
    )
    assert [(e.name, e.path) for e in response_exports(genres, set())] == [("genres", "$[*]")]
    zipcode = Tool(
        "get_zipcode", "Zip code of a city.", {"type": "object", "properties": {}}, response={"type": "string"}
    )
    assert [e.name for e in response_exports(zipcode, set())][0] == "zipcode"
    # no read verb: nothing to name it by
    tick = Tool(
        "tick",
        "Advance the clock.",
        {"type": "object", "properties": {}},
        response={"type": "array", "items": {"type": "integer"}},
    )
    assert [e.name for e in response_exports(tick, set())] == ["response_value"]
    # fields keep their own names
    rec = Tool(
        "show_song",
        "Show a song.",
        {"type": "object", "properties": {}},
        response={"type": "object", "properties": {"song_id": {"type": "integer"}}},
    )
    assert [e.name for e in response_exports(rec, set())] == ["song_id"]
