"""Algorithm 1's three tests on hand-built invocation records, every verdict checked by hand."""

from libra.induction.explore.controls import control_choices
from libra.induction.judges import (
    Run,
    differs_substantively,
    is_empty,
    judge_compatibility,
    judge_provenance,
    judge_state,
)


def ok(output=None, changes=None) -> Run:
    return Run("success", {"status": "success", "output": output, "state_changes": changes or {}, "error": None})


def refused(error="no such record") -> Run:
    return Run("failure", {"status": "rejected", "output": None, "state_changes": {}, "error": error})


def odd(output="???") -> Run:
    """A record neither outcome schema describes."""
    return Run("unmatched", {"status": "success", "output": output, "state_changes": {}, "error": None})


def test_emptiness_by_hand():
    for v in (None, "", "  ", [], {}, {"results": []}, [[], {}], {"a": None, "b": ""}):
        assert is_empty(v), v
    for v in (0, False, "x", [0], {"results": [{"id": 1}]}, {"ok": False}):
        assert not is_empty(v), v


def test_provenance_needs_a_failing_control():
    assert judge_provenance(ok({"title": "lamp"}), refused()).kept  # lines 20-21
    v = judge_provenance(ok({"title": "lamp"}), ok({"title": "desk"}))
    assert v.decision == "rejected" and "control succeeds" in v.reason
    assert judge_provenance(refused(), refused()).decision == "rejected"  # line 16: no success to explain


def test_an_omission_control_needs_a_success_that_produced_something():
    # a search returns [] whatever the criterion and is refused without one: omitting the criterion shows that a
    # criterion is needed, not that the provider's value did anything
    assert judge_provenance(ok([]), refused("give at least one criterion"), omitted=True).decision == "rejected"
    assert judge_provenance(ok({"matches": []}), refused(), omitted=True).decision == "rejected"
    assert judge_provenance(ok(None), refused(), omitted=True).decision == "rejected"
    # ...but an action that returns nothing and changes the state did something
    assert judge_provenance(ok(None, {"items": {"added": [3]}}), refused(), omitted=True).kept
    assert judge_provenance(ok(0), refused(), omitted=True).kept  # zero is an answer
    # a control that replaced the value with a valid one differs from the use in that value only: reading an
    # empty file that exists, against "no such file", is the value's doing
    assert judge_provenance(ok({"content": ""}), refused("no such file")).kept


def test_provenance_is_inconclusive_on_an_unmatched_run():
    assert judge_provenance(ok({"a": 1}), odd()).inconclusive
    assert judge_provenance(odd(), refused()).decision == "rejected"  # the use itself was no success


def test_compatibility_needs_aligned_names_and_a_difference():
    use, ctrl = ok({"name": "ana"}), ok({"name": "bo"})
    assert judge_compatibility(use, ctrl, 0.9, 0.75).kept  # line 22
    assert judge_compatibility(use, ctrl, 0.75, 0.75).decision == "rejected"  # cos must exceed tau
    assert judge_compatibility(use, refused(), 0.9, 0.75).decision == "rejected"  # a provenance case, not this
    # [] on both sides, or the same answer on both sides: the value made no difference
    assert judge_compatibility(ok([]), ok([]), 0.99, 0.75).decision == "rejected"
    assert judge_compatibility(ok({"hits": []}), ok(None), 0.99, 0.75).decision == "rejected"
    assert judge_compatibility(ok({"n": 2}), ok({"n": 2}), 0.99, 0.75).decision == "rejected"
    # the control's empty result against the value's record is a difference
    assert judge_compatibility(ok([{"id": 7}]), ok([]), 0.99, 0.75).kept
    # so is a state change only the value's run made
    assert judge_compatibility(ok(None, {"sent": ["hi"]}), ok(None), 0.99, 0.75).kept
    assert judge_compatibility(ok({"a": 1}), odd(), 0.99, 0.75).inconclusive


def test_differs_substantively_by_hand():
    assert differs_substantively({"output": [1]}, {"output": []})
    assert not differs_substantively({"output": []}, {"output": [1]})  # the value's run produced nothing
    assert not differs_substantively({"output": [1], "state_changes": {}}, {"output": [1], "state_changes": {}})
    assert differs_substantively({"output": [1], "state_changes": {"x": 1}}, {"output": [1], "state_changes": {}})


def test_state_needs_failure_before_and_success_after():
    assert judge_state(refused("sign in first"), ok({"items": []})).kept  # lines 30-31; an empty success counts
    assert judge_state(ok([1]), ok([1])).decision == "rejected"  # already succeeded before
    assert judge_state(refused(), refused()).decision == "rejected"  # still fails after
    assert judge_state(odd(), ok([1])).inconclusive
    assert judge_state(refused(), odd()).inconclusive


def test_control_choices_are_valid_and_different():
    import jsonschema

    phone = {"type": "string", "pattern": r"^\+[0-9]{6,15}$"}
    got = control_choices("phone_number", phone, "+15550100", alternatives=["+15550100", "+15550199"])
    # the observed value is never proposed; constructed values come first (the placeholder, then the value
    # generator's, which meet the pattern), and the other observed phone number is among the valid choices
    assert "+15550100" not in got and got[0] == "libra_control_value"
    valid = [c for c in got if jsonschema.Draft202012Validator(phone).is_valid(c)]
    assert "+15550199" in valid and len(valid) == len(set(valid)) > 1
    # a literal input's control is the template's own literal, and never the observed value
    assert control_choices("amount", {"type": "number"}, 12.5, template_literal=2.0)[0] == 2.0
    assert all(c != 2.0 for c in control_choices("amount", {"type": "number"}, 2.0, template_literal=2.0))


def test_numeric_control_is_never_next_to_the_observed_number():
    lon = {"type": "number", "description": "Degrees east, -180 to 180."}
    # the template's literal 2.0 lies within a quarter of 2.35: a tool matching within a radius would accept both,
    # so the far observed longitude is the control instead
    assert control_choices("longitude", lon, 2.35, alternatives=[2.3, 139.7], template_literal=2.0) == [139.7]
    # with nothing far enough, there is no control (the test is inconclusive, not rejected)
    assert control_choices("longitude", lon, 2.35, alternatives=[2.4], template_literal=2.0) == []
    # far literals keep coming first: what the call does without the provider
    assert control_choices("amount", {"type": "number"}, 120.0, alternatives=[99.0], template_literal=2.0)[0] == 2.0
