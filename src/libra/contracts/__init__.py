"""Executable tool contracts: proposal, validation, outcome classification and runtime checking."""

from libra.contracts.check import check_contracts
from libra.contracts.llm.proposer import (
    LLMConfig,
    LLMProposer,
    LLMProposerError,
    LLMStats,
    build_messages,
    contract_rules,
    make_llm_proposer,
)
from libra.contracts.model import CONTRACT_VERSION, MAX_REVISIONS, Argument, Contract, ContractError, Export, Template
from libra.contracts.offline.decisions import decide_parameter
from libra.contracts.offline.proposer import OfflineProposer, propose
from libra.contracts.offline.revision import revise
from libra.contracts.outcome import Extracted, classify, extract
from libra.contracts.persist import contracts_from_json, contracts_to_json, load_contracts, save_contracts
from libra.contracts.registry import Proposer, get_proposer, propose_contracts, register_proposer
from libra.contracts.summary import CheckSummary, TemplateCheck, ToolCheck
from libra.contracts.validate import validate_contract
from libra.library.check import contract_schema

__all__ = [
    "Argument",
    "CONTRACT_VERSION",
    "CheckSummary",
    "Contract",
    "ContractError",
    "Export",
    "Extracted",
    "MAX_REVISIONS",
    "OfflineProposer",
    "Proposer",
    "Template",
    "TemplateCheck",
    "ToolCheck",
    "check_contracts",
    "classify",
    "contract_schema",
    "contracts_from_json",
    "contracts_to_json",
    "decide_parameter",
    "extract",
    "get_proposer",
    "load_contracts",
    "propose",
    "propose_contracts",
    "register_proposer",
    "revise",
    "save_contracts",
    "validate_contract",
]
__all__ += [
    "LLMConfig",
    "LLMProposer",
    "LLMProposerError",
    "LLMStats",
    "build_messages",
    "contract_rules",
    "make_llm_proposer",
]
