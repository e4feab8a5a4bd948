"""Executable tool contracts: proposal, validation, outcome classification and runtime checking."""

from libra.contracts.check import (
    CheckSummary,
    Proposer,
    TemplateCheck,
    ToolCheck,
    check_contracts,
    contracts_from_json,
    contracts_to_json,
    get_proposer,
    load_contracts,
    propose_contracts,
    register_proposer,
    save_contracts,
)
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
from libra.contracts.offline.proposer import OfflineProposer, decide_parameter, propose, revise
from libra.contracts.outcome import Extracted, classify, extract
from libra.contracts.validate import contract_schema, validate_contract

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
