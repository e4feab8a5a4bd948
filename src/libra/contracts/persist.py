"""Contracts on disk: the contracts file a build or ``libra contracts`` writes, and reading it back for the same
catalog."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from libra._util.io import atomic_write_json
from libra.catalog import Catalog
from libra.contracts.model import CONTRACT_VERSION, Contract, ContractError


def contracts_to_json(contracts: dict[str, Contract], catalog: Catalog | None = None) -> dict[str, Any]:
    doc: dict[str, Any] = {"contract_version": CONTRACT_VERSION, "contracts": [c.to_dict() for c in contracts.values()]}
    if catalog is not None:
        doc["catalog"] = catalog.name
        doc["catalog_fingerprint"] = catalog.fingerprint()
    return doc


def save_contracts(path: str | Path, contracts: dict[str, Contract], catalog: Catalog | None = None) -> None:
    atomic_write_json(path, contracts_to_json(contracts, catalog))


def contracts_from_json(doc: Any, catalog: Catalog | None = None) -> dict[str, Contract]:
    if not isinstance(doc, dict) or not isinstance(doc.get("contracts"), list):
        raise ContractError("a contracts file must be a JSON object with a 'contracts' list: regenerate it")
    if doc.get("contract_version") != CONTRACT_VERSION:
        raise ContractError(
            f"contracts file has version {doc.get('contract_version')!r}, expected {CONTRACT_VERSION!r}: regenerate it"
        )
    if catalog is not None and doc.get("catalog_fingerprint") not in (None, catalog.fingerprint()):
        raise ContractError(
            f"contracts file was built for another catalog than {catalog.name!r}: regenerate it for this catalog"
        )
    out: dict[str, Contract] = {}
    for d in doc["contracts"]:
        c = Contract.from_dict(d)
        if catalog is not None and c.tool not in catalog:
            raise ContractError(f"contracts file names tool {c.tool!r}, which catalog {catalog.name!r} does not have")
        out[c.tool] = c
    return out


def load_contracts(path: str | Path, catalog: Catalog | None = None) -> dict[str, Contract]:
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ContractError(f"contracts file {str(p)!r} does not exist: check the path") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ContractError(
            f"contracts file {str(p)!r} cannot be read ({exc.__class__.__name__}): regenerate it"
        ) from None
    return contracts_from_json(doc, catalog)
