"""Several unrelated sources in one build find what their builds one by one find.

The three services of :mod:`tests.joint` (a bakery, a garage, a course catalogue, each with its own fixtures) are
built alone and then together. Together, each service's values are candidates for the others' inputs of their
type; the joint build must still keep at least 90% of the relations the separate builds find among each service's
own tools, and every designed relation a separate build finds.
"""

from __future__ import annotations

import pytest

from tests import joint


@pytest.fixture(scope="module")
def compared():
    return joint.compare()


def test_the_services_do_not_share_tool_names():
    names = [joint.tool_names(m) for m in joint.MODULES]
    assert all(names) and sum(map(len, names)) == len(set().union(*names))


def test_a_joint_build_keeps_what_the_separate_builds_find(compared):
    total = compared["total"]
    assert total["separate"] > 0
    assert total["kept_share"] >= 0.9, {m: v["lost"] for m, v in compared["modules"].items()}


def test_a_joint_build_finds_every_designed_relation_a_separate_build_finds(compared):
    for name, m in compared["modules"].items():
        missed_together = {tuple(s) for s in m["designed_missing_joint"]}
        missed_alone = {tuple(s) for s in m["designed_missing_separate"]}
        assert missed_together <= missed_alone, (name, sorted(missed_together - missed_alone))
