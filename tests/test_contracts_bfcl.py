"""Every BFCL tool gets a valid offline contract, and checking them against the BFCL runtime works."""

from __future__ import annotations

import importlib.util
import json

import pytest

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("bfcl_eval") is None, reason="bfcl_eval is not installed (pip install --no-deps bfcl-eval)"
)


@pytest.fixture(scope="module")
def catalog():
    bfcl = pytest.importorskip("libra.benchmarks.bfcl.adapter", reason="libra.benchmarks.bfcl.adapter is not available")
    return bfcl.load_catalog()


def test_all_bfcl_tools_get_valid_contracts(catalog) -> None:
    from libra.contracts import Contract, propose_contracts, validate_contract

    contracts = propose_contracts(catalog)
    assert len(contracts) == len(catalog) == 128
    bad = {name: validate_contract(c.to_dict(), catalog[name]) for name, c in contracts.items()}
    assert {k: v for k, v in bad.items() if v} == {}
    for c in contracts.values():
        assert Contract.from_dict(json.loads(json.dumps(c.to_dict()))).to_dict() == c.to_dict()
    # the proposer only reads public metadata, so it is deterministic
    assert {k: v.to_dict() for k, v in propose_contracts(catalog).items()} == {
        k: v.to_dict() for k, v in contracts.items()
    }


def test_bfcl_contract_check(catalog) -> None:
    rt_mod = pytest.importorskip(
        "libra.benchmarks.bfcl.runtime", reason="libra.benchmarks.bfcl.runtime is not available"
    )
    from libra.contracts import check_contracts, validate_contract

    runtime = rt_mod.make_bfcl_runtime(catalog)
    try:
        summary = check_contracts(catalog, runtime)
    finally:
        runtime.close()
    assert summary.tools == 128 and summary.invalid == 0
    assert summary.matched >= summary.templates // 2
    assert all(c.revision <= 2 for c in summary.contracts.values())
    for name, c in summary.contracts.items():
        assert validate_contract(c.to_dict(), catalog[name]) == []
