"""SciToolEval tools that run offline, written for libra from the tools' public descriptions.

Why this module exists: SciToolEval's released wrappers call web services, model weights and local files, so most
of them cannot run in a sandbox. The chemistry tools are thin computations over RDKit and selfies and can be
re-implemented faithfully from their descriptions; that gives the benchmark an executable runtime for library
construction. Every public function here *is* a tool: its name is the catalog name, it takes the one string
argument of the catalog's parameter, and it returns a dict with named fields (``{"smiles": ...}``,
``{"npr2": ...}``) so that a provider's output can feed a consumer's input. Bad input gives ``{"error": ...}``
(a ``rejected`` record), never an exception escaping to the caller.

Conventions:

- Multi-value inputs are packed into the one string, as upstream: a JSON list, or values separated by commas,
  semicolons or whitespace; a SMILES pair written as one token is split on ``.`` (the upstream convention).
- 3D descriptors use one conformer embedded with ETKDGv3 and a fixed seed (:data:`CONFORMER_SEED`), without
  force-field optimisation; the values depend on the RDKit version, which the ``scitooleval`` extra pins.
- Floats are rounded to 6 decimals so that equal computations compare equal across runs.
- Helpers start with ``_`` so that :class:`~libra.runtime.python.runtime.PythonRuntime` does not expose them as tools.

Importing this module does not need RDKit (the catalog marks tools executable from this module's function
names); calling a tool does.
"""

from __future__ import annotations

import ast
import functools
import random
import re
from collections.abc import Callable
from typing import Any

try:  # RDKit is optional at import time: the benchmark's catalog reads our function names without it
    from rdkit import Chem, DataStructs, RDLogger
    from rdkit.Chem import AllChem, Descriptors
    from rdkit.Chem import rdMolDescriptors as rdMD

    RDLogger.DisableLog("rdApp.*")
except ImportError:  # pragma: no cover - exercised only without the extra
    Chem = None  # type: ignore[assignment]

CONFORMER_SEED = 0xF00D
_DIGITS = 6
_MAX_ATOMS_3D = 250


class _Reject(Exception):
    """Raised by helpers for unusable input; the tool wrapper turns it into ``{"error": ...}``."""


def _tool(func: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
    """Turn input problems into a rejection record instead of an exception."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        if Chem is None:
            raise ImportError("RDKit is not installed: pip install 'libra-tools[scitooleval]'")
        try:
            return func(*args, **kwargs)
        except _Reject as exc:
            return {"error": str(exc)}

    return wrapper


# ---------------------------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------------------------
def _r(x: Any) -> Any:
    if isinstance(x, float):
        return round(float(x), _DIGITS)
    if isinstance(x, (list, tuple)):
        return [_r(v) for v in x]
    try:  # numpy scalars and arrays
        import numpy as np

        if isinstance(x, np.ndarray):
            return _r(x.tolist())
        if isinstance(x, np.generic):
            return _r(x.item())
    except ImportError:  # pragma: no cover
        pass
    return x


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise _Reject(f"expected a {what} string, got {type(value).__name__}")
    text = value.strip().strip("`'\"").strip()
    if not text:
        raise _Reject(f"empty {what}: pass a {what} string")
    return text


def _mol(smiles: Any, sanitize: bool = True) -> Chem.Mol:
    text = _text(smiles, "SMILES")
    mol = Chem.MolFromSmiles(text, sanitize=sanitize)
    if mol is None or mol.GetNumAtoms() == 0:
        raise _Reject(f"invalid SMILES {text[:80]!r}: RDKit cannot parse it")
    return mol


def _items(value: Any, what: str = "SMILES", split_dots: bool = True) -> list[str]:
    """Unpack a packed multi-value string (JSON list, or separated by commas/semicolons/whitespace)."""
    if isinstance(value, (list, tuple)):
        parts = [str(v).strip() for v in value]
    else:
        text = _text(value, what)
        parts = []
        if text.startswith("[") and text.endswith("]") and ("'" in text or '"' in text):
            try:  # a JSON or Python list literal of strings
                loaded = ast.literal_eval(text)
                if isinstance(loaded, (list, tuple)):
                    parts = [str(v).strip() for v in loaded]
            except (ValueError, SyntaxError):
                parts = []
        if not parts:
            parts = [p for p in re.split(r"[,;\s]+", text) if p and p.lower() != "and"]
        if len(parts) == 1 and split_dots and "." in parts[0]:
            parts = parts[0].split(".")
    parts = [p.strip("`'\"") for p in parts]
    return [p for p in parts if p]


def _mols(value: Any, minimum: int = 1) -> list[tuple[str, Chem.Mol]]:
    items = _items(value)
    if len(items) < minimum:
        raise _Reject(f"expected at least {minimum} SMILES separated by commas (or '.'), got {len(items)}")
    return [(s, _mol(s)) for s in items]


def _smiles(mol: Chem.Mol) -> str:
    return Chem.MolToSmiles(mol)


def _conformer(mol: Chem.Mol) -> Chem.Mol:
    """The molecule with explicit hydrogens and one seeded ETKDGv3 conformer.

    Embedding is by far the most expensive step and every 3D descriptor needs it, so conformers are cached per
    canonical SMILES (the embedding is seeded, hence the same molecule always gets the same conformer).
    """
    if mol.GetNumConformers() and mol.GetConformer().Is3D():
        return mol
    kind, value = _embedded(Chem.MolToSmiles(mol))
    if kind == "reject":
        raise _Reject(value)
    return Chem.Mol(value)


@functools.lru_cache(maxsize=512)
def _embedded(smiles: str) -> tuple[str, Any]:
    try:
        return "ok", _embed(Chem.MolFromSmiles(smiles))
    except _Reject as exc:
        return "reject", str(exc)


def _embed(mol: Chem.Mol) -> Chem.Mol:
    molh = Chem.AddHs(mol)
    if molh.GetNumAtoms() > _MAX_ATOMS_3D:
        raise _Reject(f"molecule too large for a 3D conformer ({molh.GetNumAtoms()} atoms > {_MAX_ATOMS_3D})")
    params = AllChem.ETKDGv3()
    params.randomSeed = CONFORMER_SEED
    params.numThreads = 1
    for random_coords in (False, True):  # random starting coordinates rescue some failed embeddings
        params.useRandomCoords = random_coords
        try:
            if AllChem.EmbedMolecule(molh, params) == 0:
                return molh
        except RuntimeError:  # an RDKit invariant violation inside the embedder
            continue
    raise _Reject("cannot embed a 3D conformer for this molecule")


def _bits(fp: Any) -> dict[str, Any]:
    return {"num_bits": fp.GetNumBits(), "on_bits": list(fp.GetOnBits()), "num_on_bits": fp.GetNumOnBits()}


def _sparse(fp: Any) -> dict[str, Any]:
    elems = {str(k): int(v) for k, v in sorted(fp.GetNonzeroElements().items())}
    return {"length": int(fp.GetLength()), "nonzero_elements": elems, "num_nonzero": len(elems)}


def _int_arg(parts: list[str], i: int, name: str, default: int | None = None) -> int:
    if i >= len(parts):
        if default is None:
            raise _Reject(f"missing {name}: pack it after the SMILES, separated by a comma")
        return default
    try:
        return int(float(parts[i]))
    except ValueError:
        raise _Reject(f"{name} must be an integer, got {parts[i]!r}") from None


def _float_arg(parts: list[str], i: int, name: str, default: float) -> float:
    if i >= len(parts):
        return default
    try:
        return float(parts[i])
    except ValueError:
        raise _Reject(f"{name} must be a number, got {parts[i]!r}") from None


def _atom(mol: Chem.Mol, idx: int) -> Chem.Atom:
    if not 0 <= idx < mol.GetNumAtoms():
        raise _Reject(f"atom index {idx} out of range: the molecule has {mol.GetNumAtoms()} atoms (0-based)")
    return mol.GetAtomWithIdx(idx)


def _transform(smiles: Any, fn: Callable[[Chem.RWMol], Any], sanitize: bool = True) -> dict[str, Any]:
    mol = Chem.RWMol(_mol(smiles))
    out = fn(mol)
    mol = out if isinstance(out, Chem.Mol) else mol
    try:
        return {"smiles": Chem.MolToSmiles(mol)}
    except RuntimeError as exc:
        raise _Reject(f"cannot write the result as SMILES ({exc})") from None


def _define(name: str, field: str, compute: Callable[[Chem.Mol], Any], doc: str, three_d: bool = False) -> None:
    """Define a one-SMILES descriptor tool ``name`` returning ``{field: compute(mol)}`` in this module."""

    def tool(smiles: str) -> dict[str, Any]:
        mol = _mol(smiles)
        if three_d:
            mol = _conformer(mol)
        try:
            value = compute(mol)
        except (ValueError, RuntimeError) as exc:
            raise _Reject(f"{name} cannot be computed for this molecule ({exc})") from None
        return {field: _r(value)}

    tool.__name__ = tool.__qualname__ = name
    tool.__doc__ = f"{doc}\n\nArgs:\n    smiles: a SMILES string.\n\nReturns:\n    {{{field!r}: value}}"
    globals()[name] = _tool(tool)


# ---------------------------------------------------------------------------------------------------------------
# formats and identifiers
# ---------------------------------------------------------------------------------------------------------------
@_tool
def SMILESToInChI(smiles: str) -> dict[str, Any]:
    """Convert a SMILES string to a standard InChI."""
    inchi = Chem.MolToInchi(_mol(smiles))
    if not inchi:
        raise _Reject("InChI generation failed for this molecule")
    return {"inchi": inchi}


@_tool
def ConvertSmilesToInchi(smiles: str) -> dict[str, Any]:
    """Convert a SMILES string to its InChI string."""
    return SMILESToInChI(smiles)


def _inchi_mol(inchi: Any) -> Chem.Mol:
    text = _text(inchi, "InChI")
    if not text.startswith("InChI="):
        raise _Reject(f"invalid InChI {text[:80]!r}: an InChI starts with 'InChI='")
    mol = Chem.MolFromInchi(text)
    if mol is None:
        raise _Reject(f"invalid InChI {text[:80]!r}: RDKit cannot parse it")
    return mol


@_tool
def InChIToSMILES(inchi: str) -> dict[str, Any]:
    """Convert an InChI string to a canonical SMILES string."""
    return {"smiles": _smiles(_inchi_mol(inchi))}


@_tool
def InChIToInChIKey(inchi: str) -> dict[str, Any]:
    """Hash an InChI string into its InChIKey."""
    text = _text(inchi, "InChI")
    _inchi_mol(text)
    key = Chem.InchiToInchiKey(text)
    if not key:
        raise _Reject("InChIKey generation failed for this InChI")
    return {"inchikey": key}


_INCHIKEY = re.compile(r"^[A-Z]{14}-[A-Z]{8}[SN][A-Z]-[A-Z]$")


@_tool
def IsValidInChIKey(inchikey: str) -> dict[str, Any]:
    """Check offline that a string has the layout of a standard InChIKey (14-10-1 upper-case letters)."""
    text = _text(inchikey, "InChIKey")
    return {"valid": bool(_INCHIKEY.match(text))}


@_tool
def SlnToSmiles(sln: str) -> dict[str, Any]:
    """Convert a SYBYL line notation (SLN) string to SMILES."""
    from rdkit.Chem import rdSLNParse

    text = _text(sln, "SLN")
    mol = rdSLNParse.MolFromSLN(text)
    if mol is None or mol.GetNumAtoms() == 0:
        raise _Reject(f"invalid SLN {text[:80]!r}: RDKit cannot parse it")
    return {"smiles": _smiles(mol)}


@_tool
def ConvertingPeptide2SMILES(protein: str) -> dict[str, Any]:
    """Convert a peptide sequence (one-letter amino-acid codes) to SMILES."""
    text = re.sub(r"\s+", "", _text(protein, "peptide sequence")).upper()
    if not re.fullmatch(r"[ACDEFGHIKLMNPQRSTVWY]+", text):
        raise _Reject(f"invalid peptide sequence {text[:80]!r}: use one-letter codes of the 20 standard amino acids")
    mol = Chem.MolFromSequence(text)
    if mol is None:
        raise _Reject("RDKit cannot build this peptide")
    return {"smiles": _smiles(mol)}


def _selfies() -> Any:
    try:
        import selfies
    except ImportError:
        raise ImportError("selfies is not installed: pip install 'libra-tools[scitooleval]'") from None
    return selfies


@_tool
def SMILEStoSELFIES(smiles: str) -> dict[str, Any]:
    """Translate a SMILES string into SELFIES."""
    sf = _selfies()
    mol = _mol(smiles)
    try:
        return {"selfies": sf.encoder(Chem.MolToSmiles(mol, kekuleSmiles=False), strict=False)}
    except sf.EncoderError as exc:
        raise _Reject(f"cannot encode this SMILES as SELFIES ({exc})") from None


def _check_selfies(text: str) -> str:
    if not re.fullmatch(r"(\[[^\[\]]+\]|\.)+", text):
        raise _Reject(f"invalid SELFIES {text[:80]!r}: a SELFIES string is a sequence of [bracketed] symbols")
    return text


@_tool
def SELFIEStoSMILES(selfies: str) -> dict[str, Any]:
    """Translate a SELFIES string into SMILES."""
    sf = _selfies()
    text = _check_selfies(_text(selfies, "SELFIES"))
    try:
        smi = sf.decoder(text)
    except sf.DecoderError as exc:
        raise _Reject(f"cannot decode this SELFIES ({exc})") from None
    mol = Chem.MolFromSmiles(smi) if smi else None
    if mol is None:
        raise _Reject("the SELFIES decodes to no valid molecule")
    return {"smiles": _smiles(mol)}


@_tool
def Length_SELFIES(selfies: str) -> dict[str, Any]:
    """Count the symbols of a SELFIES string."""
    return {"length": _selfies().len_selfies(_check_selfies(_text(selfies, "SELFIES")))}


@_tool
def Split_SELFIES(selfies: str) -> dict[str, Any]:
    """Split a SELFIES string into its symbols."""
    return {"tokens": list(_selfies().split_selfies(_check_selfies(_text(selfies, "SELFIES"))))}


@_tool
def RandomMoelcule(length: str) -> dict[str, Any]:
    """A random molecule of ``length`` SELFIES symbols (seeded by the length, so a call is reproducible)."""
    sf = _selfies()
    try:
        n = int(float(_text(length, "length")))
    except ValueError:
        raise _Reject(f"length must be an integer, got {length!r}") from None
    if not 1 <= n <= 200:
        raise _Reject(f"length must be between 1 and 200, got {n}")
    alphabet = sorted(sf.get_semantic_robust_alphabet())
    rng = random.Random(n)
    text = "".join(rng.choice(alphabet) for _ in range(n))
    smi = sf.decoder(text)
    return {"selfies": sf.encoder(smi) if smi else text, "smiles": smi}


# ---------------------------------------------------------------------------------------------------------------
# whole-molecule descriptors (2D)
# ---------------------------------------------------------------------------------------------------------------
_define("SMILESToWeight", "molecular_weight", Descriptors.MolWt if Chem else None, "Average molecular weight (g/mol).")
_define(
    "GetExactMolceularWeight",
    "exact_molecular_weight",
    rdMD.CalcExactMolWt if Chem else None,
    "Monoisotopic (exact) molecular weight.",
)
_define("GetMolFormula", "formula", rdMD.CalcMolFormula if Chem else None, "Molecular formula (Hill order).")
_define("CalculateTPSA", "tpsa", rdMD.CalcTPSA if Chem else None, "Topological polar surface area (Ertl).")
_define("GetLabuteASA", "labute_asa", rdMD.CalcLabuteASA if Chem else None, "Labute approximate surface area.")
_define(
    "GetFractionCSP3",
    "fraction_csp3",
    rdMD.CalcFractionCSP3 if Chem else None,
    "Fraction of sp3 carbons among carbons.",
)
_define("GetHallKierAlpha", "hall_kier_alpha", rdMD.CalcHallKierAlpha if Chem else None, "Hall-Kier alpha shape index.")
_define("CalculatePhi", "phi", rdMD.CalcPhi if Chem else None, "Kier molecular flexibility index Phi.")
for _i in (1, 2, 3):
    _define(
        f"GetKappa{_i}",
        f"kappa{_i}",
        getattr(rdMD, f"CalcKappa{_i}") if Chem else None,
        f"Kier kappa-{_i} shape index.",
    )
for _i in range(5):
    for _k in ("n", "v"):
        _define(
            f"GetChi{_i}{_k}",
            f"chi{_i}{_k}",
            getattr(rdMD, f"CalcChi{_i}{_k}") if Chem else None,
            f"Kier-Hall connectivity index chi{_i}{_k}.",
        )
_define("GetFormalCharge", "formal_charge", Chem.GetFormalCharge if Chem else None, "Total formal charge.")
_define(
    "GetBCUT",
    "bcut2d",
    rdMD.BCUT2D if Chem else None,
    "BCUT2D eigenvalue descriptors (mass, Gasteiger charge, Crippen logP and MR).",
)
_define("GetAutocorrelation2D", "autocorr2d", rdMD.CalcAUTOCORR2D if Chem else None, "2D autocorrelation descriptors.")


def _crippen(mol: Chem.Mol) -> dict[str, float]:
    logp, mr = rdMD.CalcCrippenDescriptors(mol)
    return {"logp": round(logp, _DIGITS), "mr": round(mr, _DIGITS)}


@_tool
def GetCrippenDescriptors(smiles: str) -> dict[str, Any]:
    """Wildman-Crippen logP and molar refractivity."""
    return _crippen(_mol(smiles))


_COUNTS: dict[str, tuple[str, str]] = {
    "GetAliphaticCarbocyclesNum": ("num_aliphatic_carbocycles", "CalcNumAliphaticCarbocycles"),
    "GetAliphaticHeterocyclesNum": ("num_aliphatic_heterocycles", "CalcNumAliphaticHeterocycles"),
    "GetAliphaticRingsNum": ("num_aliphatic_rings", "CalcNumAliphaticRings"),
    "GetAmideBondsNum": ("num_amide_bonds", "CalcNumAmideBonds"),
    "GetAromaticCarbocyclesNum": ("num_aromatic_carbocycles", "CalcNumAromaticCarbocycles"),
    "GetAromaticHeterocyclesNum": ("num_aromatic_heterocycles", "CalcNumAromaticHeterocycles"),
    "GetAromaticRingsNum": ("num_aromatic_rings", "CalcNumAromaticRings"),
    "GetAtomStereoCentersNum": ("num_atom_stereo_centers", "CalcNumAtomStereoCenters"),
    "GetAtomsNum": ("num_atoms", "CalcNumAtoms"),
    "GetBridgeheadAtomsNum": ("num_bridgehead_atoms", "CalcNumBridgeheadAtoms"),
    "GetHBANum": ("num_hba", "CalcNumHBA"),
    "GetHBDNum": ("num_hbd", "CalcNumHBD"),
    "GetHeavyAtomsNum": ("num_heavy_atoms", "CalcNumHeavyAtoms"),
    "GetHeteroatomsNum": ("num_heteroatoms", "CalcNumHeteroatoms"),
    "GetHeterocyclesNum": ("num_heterocycles", "CalcNumHeterocycles"),
    "GetLipinskiHBANum": ("num_lipinski_hba", "CalcNumLipinskiHBA"),
    "GetLipinskiHBDNum": ("num_lipinski_hbd", "CalcNumLipinskiHBD"),
    "GetRingsNum": ("num_rings", "CalcNumRings"),
    "GetRotatableBondsNum": ("num_rotatable_bonds", "CalcNumRotatableBonds"),
    "GetSaturatedCarbocyclesNum": ("num_saturated_carbocycles", "CalcNumSaturatedCarbocycles"),
    "GetSaturatedHeterocyclesNum": ("num_saturated_heterocycles", "CalcNumSaturatedHeterocycles"),
    "GetSaturatedRingsNum": ("num_saturated_rings", "CalcNumSaturatedRings"),
    "GetSpiroAtomsNum": ("num_spiro_atoms", "CalcNumSpiroAtoms"),
    "GetUnspecifiedAtomStereoCentersNum": (
        "num_unspecified_atom_stereo_centers",
        "CalcNumUnspecifiedAtomStereoCenters",
    ),
}
for _name, (_field, _fn) in _COUNTS.items():
    _define(
        _name, _field, getattr(rdMD, _fn) if Chem else None, f"Count: {_field.replace('num_', '').replace('_', ' ')}."
    )


@_tool
def CustomPropertyVSA(smiles: str) -> dict[str, Any]:
    """VSA-binned sum of a per-atom property (here the Crippen logP contributions), as in MOE-type descriptors."""
    mol = _mol(smiles)
    contribs = rdMD._CalcCrippenContribs(mol)
    for atom, (logp, _) in zip(mol.GetAtoms(), contribs):
        atom.SetDoubleProp("crippen_logp", logp)
    bins = [-0.4, -0.2, 0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6]
    return {
        "custom_vsa": _r(list(rdMD.CustomProp_VSA_(mol, customPropName="crippen_logp", bins=bins))),
        "property": "crippen_logp",
        "bins": bins,
    }


@_tool
def CalculateEstateVsa(smiles: str) -> dict[str, Any]:
    """EState-VSA descriptors (VSA binned by EState index)."""
    from rdkit.Chem.EState import EState_VSA

    return {"estate_vsa": _r(list(EState_VSA.EState_VSA_(_mol(smiles))))}


@_tool
def CalculateEstateIndices(smiles: str) -> dict[str, Any]:
    """EState index of each atom."""
    from rdkit.Chem.EState import EState

    return {"estate_indices": _r(list(EState.EStateIndices(_mol(smiles))))}


@_tool
def TypeAtomsInMolecule(smiles: str) -> dict[str, Any]:
    """EState atom type(s) of each atom."""
    from rdkit.Chem.EState import AtomTypes

    return {"estate_types": [list(t) for t in AtomTypes.TypeAtoms(_mol(smiles))]}


@_tool
def GenerateEstateFingerprint(smiles: str) -> dict[str, Any]:
    """EState fingerprint: per EState type, the atom count and the summed EState index."""
    from rdkit.Chem.EState import Fingerprinter

    counts, sums = Fingerprinter.FingerprintMol(_mol(smiles))
    return {"counts": [int(c) for c in counts], "sums": _r(list(sums))}


@_tool
def AssignPattyTypes(smiles: str) -> dict[str, Any]:
    """Patty atom types (cation, anion, donor, acceptor, polar, hydrophobic, other) of each atom."""
    from rdkit.Chem.AtomPairs import Sheridan

    return {"patty_types": list(Sheridan.AssignPattyTypes(_mol(smiles)))}


@_tool
def FuncGroups(smiles: str) -> dict[str, Any]:
    """Functional groups present, from RDKit's fragment (fr_*) SMARTS catalogue, with their counts."""
    from rdkit.Chem import Fragments

    mol = _mol(smiles)
    found = {}
    for name in sorted(n for n in dir(Fragments) if n.startswith("fr_")):
        count = getattr(Fragments, name)(mol)
        if count:
            found[name[3:]] = int(count)
    return {"functional_groups": found}


# ---------------------------------------------------------------------------------------------------------------
# 3D descriptors (one seeded conformer)
# ---------------------------------------------------------------------------------------------------------------
for _name, _field, _fn, _doc in [
    ("GetNPR1", "npr1", "CalcNPR1", "Normalized principal moments ratio I1/I3."),
    ("GetNPR2", "npr2", "CalcNPR2", "Normalized principal moments ratio I2/I3."),
    ("CalculatePMI1", "pmi1", "CalcPMI1", "First (smallest) principal moment of inertia."),
    ("CalculatePMI2", "pmi2", "CalcPMI2", "Second principal moment of inertia."),
    ("CalculatePMI3", "pmi3", "CalcPMI3", "Third (largest) principal moment of inertia."),
    ("CalculatePBF", "pbf", "CalcPBF", "Plane of best fit descriptor."),
    ("CalculateRadiusOfGyration", "radius_of_gyration", "CalcRadiusOfGyration", "Radius of gyration."),
    ("CalculateSpherocityIndex", "spherocity_index", "CalcSpherocityIndex", "Spherocity index."),
    ("GetAsphericity", "asphericity", "CalcAsphericity", "Asphericity."),
    ("GetEccentricity", "eccentricity", "CalcEccentricity", "Eccentricity."),
    ("GetInertialShapeFactor", "inertial_shape_factor", "CalcInertialShapeFactor", "Inertial shape factor."),
    ("GetAutocorrelation3D", "autocorr3d", "CalcAUTOCORR3D", "3D autocorrelation descriptors."),
    ("CalculateRDF", "rdf", "CalcRDF", "Radial distribution function descriptors."),
    ("GetMORSE", "morse", "CalcMORSE", "3D-MoRSE descriptors."),
    ("CalculateWHIM", "whim", "CalcWHIM", "WHIM descriptors."),
    ("GetGETAWAY", "getaway", "CalcGETAWAY", "GETAWAY descriptors."),
    ("GetUSR", "usr", "GetUSR", "Ultrafast shape recognition descriptor."),
    ("GetUSRCAT", "usrcat", "GetUSRCAT", "USRCAT descriptor."),
]:
    _define(
        _name,
        _field,
        getattr(rdMD, _fn) if Chem else None,
        _doc + " Computed on one ETKDGv3 conformer with a fixed seed.",
        three_d=True,
    )


@_tool
def CalculatePmi(smiles: str) -> dict[str, Any]:
    """NPR1 and NPR2 of one seeded conformer."""
    mol = _conformer(_mol(smiles))
    return {"npr1": _r(rdMD.CalcNPR1(mol)), "npr2": _r(rdMD.CalcNPR2(mol))}


@_tool
def GetCoulombMat(smiles: str) -> dict[str, Any]:
    """Coulomb matrix of one seeded conformer (hydrogens included)."""
    mol = _conformer(_mol(smiles))
    mats = rdMD.CalcCoulombMat(mol)
    return {"coulomb_matrix": _r([list(row) for row in mats])}


@_tool
def GetEEMCharges(smiles: str) -> dict[str, Any]:
    """EEM partial charge of each atom (hydrogens included) of one seeded conformer."""
    mol = _conformer(_mol(smiles))
    return {"eem_charges": _r(list(rdMD.CalcEEMcharges(mol)))}


# ---------------------------------------------------------------------------------------------------------------
# fingerprints
# ---------------------------------------------------------------------------------------------------------------
def _morgan_bits(mol: Chem.Mol, radius: int = 2, size: int = 2048) -> Any:
    from rdkit.Chem import rdFingerprintGenerator

    return rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=size).GetFingerprint(mol)


_define(
    "GetMACCSKeysFingerprint",
    "maccs",
    lambda m: _bits(rdMD.GetMACCSKeysFingerprint(m)),
    "MACCS keys (167 bits); on-bit indices.",
)
_define(
    "GetMorganFingerprint",
    "morgan",
    lambda m: _morgan_sparse(m),
    "Morgan (radius 2) count fingerprint as sparse elements.",
)
_define(
    "BuildMorganFpFromSmiles",
    "morgan",
    lambda m: _bits(_morgan_bits(m)),
    "Morgan fingerprint (radius 2, 2048 bits); on-bit indices.",
)
_define(
    "GetRdkFingerprintFromSmiles",
    "rdkit_fingerprint",
    lambda m: _bits(Chem.RDKFingerprint(m)),
    "RDKit topological fingerprint (2048 bits); on-bit indices.",
)
_define(
    "BuildRdkitFpFromSmiles",
    "rdkit_fingerprint",
    lambda m: _bits(Chem.RDKFingerprint(m)),
    "RDKit topological fingerprint (2048 bits); on-bit indices.",
)
_define(
    "GetPatternFingerprint",
    "pattern_fingerprint",
    lambda m: _bits(Chem.PatternFingerprint(m)),
    "Substructure-screening pattern fingerprint; on-bit indices.",
)
_define(
    "GetAtomPairFingerprintAsBitVect",
    "atom_pair",
    lambda m: _bits(rdMD.GetHashedAtomPairFingerprintAsBitVect(m)),
    "Hashed atom-pair fingerprint (2048 bits); on-bit indices.",
)
_define(
    "GetAtomPairFingerprint",
    "atom_pair",
    lambda m: _sparse(rdMD.GetAtomPairFingerprint(m)),
    "Atom-pair count fingerprint as sparse elements.",
)
_define(
    "BuildAtomPairFpFromSmiles",
    "atom_pair",
    lambda m: _sparse(rdMD.GetAtomPairFingerprint(m)),
    "Atom-pair count fingerprint as sparse elements.",
)
_define(
    "GetTopologicalTorsionFingerprint",
    "topological_torsion",
    lambda m: _sparse(rdMD.GetTopologicalTorsionFingerprint(m)),
    "Topological-torsion count fingerprint as sparse elements.",
)
_define(
    "BuildTorsionsFpFromSmiles",
    "topological_torsion",
    lambda m: _sparse(rdMD.GetTopologicalTorsionFingerprint(m)),
    "Topological-torsion count fingerprint as sparse elements.",
)
_define(
    "GetConnectivityInvariants",
    "connectivity_invariants",
    lambda m: list(rdMD.GetConnectivityInvariants(m)),
    "ECFP-like atom invariants.",
)
_define(
    "GetFeatureInvariants",
    "feature_invariants",
    lambda m: list(rdMD.GetFeatureInvariants(m)),
    "FCFP-like atom feature invariants.",
)
_define(
    "GetAtomPairCode",
    "atom_codes",
    lambda m: [int(rdMD.GetAtomPairAtomCode(a)) for a in m.GetAtoms()],
    "Atom-pair atom code of each atom.",
)


def _morgan_sparse(mol: Chem.Mol) -> dict[str, Any]:
    from rdkit.Chem import rdFingerprintGenerator

    return _sparse(rdFingerprintGenerator.GetMorganGenerator(radius=2).GetSparseCountFingerprint(mol))


@_tool
def BuildAvalonFpFromSmiles(smiles: str) -> dict[str, Any]:
    """Avalon fingerprint (512 bits); on-bit indices."""
    from rdkit.Avalon import pyAvalonTools

    return {"avalon": _bits(pyAvalonTools.GetAvalonFP(_mol(smiles)))}


@_tool
def BuildPharm2DFpFromSmiles(input: str) -> dict[str, Any]:
    """2D pharmacophore fingerprint with the Gobbi-Poppinger feature definitions bundled with RDKit.

    Input: ``smiles[, fdef_file]``; a feature-definition file cannot be read in the sandbox, so it is ignored.
    """
    from rdkit.Chem.Pharm2D import Generate, Gobbi_Pharm2D

    parts = _items(input, split_dots=False)
    fp = Generate.Gen2DFingerprint(_mol(parts[0] if parts else ""), Gobbi_Pharm2D.factory)
    return {"pharm2d": {"num_bits": fp.GetNumBits(), "on_bits": list(fp.GetOnBits()), "num_on_bits": fp.GetNumOnBits()}}


@_tool
def ProcessFingerprintMol(smiles: str) -> dict[str, Any]:
    """RDKit fingerprint as a binary string and as hexadecimal."""
    fp = Chem.RDKFingerprint(_mol(smiles))
    binary = fp.ToBitString()
    return {"binary": binary, "hex": f"{int(binary, 2):0{len(binary) // 4}x}", "num_bits": fp.GetNumBits()}


@_tool
def FingerprintsFromSmiles(smiles_list: str) -> dict[str, Any]:
    """RDKit fingerprints (on-bit indices) of each SMILES of a list."""
    return {"fingerprints": [{"smiles": s, **_bits(Chem.RDKFingerprint(m))} for s, m in _mols(smiles_list)]}


@_tool
def FoldFingerprintFromSmiles(input: str) -> dict[str, Any]:
    """RDKit fingerprint folded until its bit density reaches ``tgtDensity`` (default 0.3) or ``minSize`` bits (default
    64).

    Input: ``smiles[, tgtDensity[, minSize]]``.
    """
    parts = _items(input, split_dots=False)
    if not parts:
        raise _Reject("pass a SMILES string")
    fp = Chem.RDKFingerprint(_mol(parts[0]))
    density = _float_arg(parts, 1, "tgtDensity", 0.3)
    min_size = _int_arg(parts, 2, "minSize", 64)
    folded = DataStructs.FoldToTargetDensity(fp, density=density, minLength=min_size)
    return {
        "original": {"num_bits": fp.GetNumBits(), "num_on_bits": fp.GetNumOnBits()},
        "folded": _bits(folded),
        "density": _r(folded.GetNumOnBits() / folded.GetNumBits()),
    }


def _mhfp() -> Any:
    from rdkit.Chem import rdMHFPFingerprint

    return rdMHFPFingerprint.MHFPEncoder(128, 42)


@_tool
def EncodeMolecule(smiles: str) -> dict[str, Any]:
    """MHFP6 MinHash vector (128 permutations, seed 42)."""
    return {"mhfp": [int(v) for v in _mhfp().EncodeMol(_mol(smiles))]}


@_tool
def EncodeSECFP(smiles: str) -> dict[str, Any]:
    """SECFP6 folded fingerprint (2048 bits); on-bit indices."""
    return {"secfp": _bits(_mhfp().EncodeSECFPMol(_mol(smiles)))}


@_tool
def CreateShingling(smiles: str) -> dict[str, Any]:
    """MHFP shingling: the circular substructure SMILES strings of the molecule."""
    shingles = _mhfp().CreateShinglingFromMol(_mol(smiles))
    return {"shingling": [s.decode() if isinstance(s, bytes) else str(s) for s in shingles]}


# ---------------------------------------------------------------------------------------------------------------
# atoms, bonds, graphs
# ---------------------------------------------------------------------------------------------------------------
@_tool
def GetAtomFeature(smiles: str) -> dict[str, Any]:
    """Per-atom features: element, atomic number, degree, valence, formal charge, hybridization, aromaticity."""
    mol = _mol(smiles)
    return {
        "atom_features": [
            {
                "index": a.GetIdx(),
                "symbol": a.GetSymbol(),
                "atomic_number": a.GetAtomicNum(),
                "degree": a.GetDegree(),
                "valence": a.GetTotalValence(),
                "formal_charge": a.GetFormalCharge(),
                "hybridization": str(a.GetHybridization()),
                "aromatic": a.GetIsAromatic(),
                "num_hs": a.GetTotalNumHs(),
            }
            for a in mol.GetAtoms()
        ]
    }


@_tool
def GetHybridization(smiles: str) -> dict[str, Any]:
    """Hybridization of each atom."""
    return {"hybridization": [str(a.GetHybridization()) for a in _mol(smiles).GetAtoms()]}


@_tool
def GetFormalChargeOfAtoms(smiles: str) -> dict[str, Any]:
    """Formal charge of each atom."""
    return {"formal_charges": [a.GetFormalCharge() for a in _mol(smiles).GetAtoms()]}


@_tool
def GetRingSystems(smiles: str) -> dict[str, Any]:
    """Ring systems (fused rings merged) as sorted atom-index lists."""
    mol = _mol(smiles)
    systems: list[set[int]] = []
    for ring in mol.GetRingInfo().AtomRings():
        ring_set = set(ring)
        merged = [s for s in systems if len(s & ring_set) > 1]
        for s in merged:
            ring_set |= s
            systems.remove(s)
        systems.append(ring_set)
    return {"ring_systems": [sorted(s) for s in systems], "num_ring_systems": len(systems)}


@_tool
def GetAdjacencyMatrix(smiles: str) -> dict[str, Any]:
    """Adjacency matrix of the heavy-atom graph."""
    return {"adjacency_matrix": Chem.GetAdjacencyMatrix(_mol(smiles)).tolist()}


@_tool
def GetDistanceMatrix(smiles: str) -> dict[str, Any]:
    """Topological (bond-count) distance matrix."""
    return {"distance_matrix": _r(Chem.GetDistanceMatrix(_mol(smiles)).tolist())}


@_tool
def GetMolFrags(smiles: str) -> dict[str, Any]:
    """Disconnected fragments: atom indices and SMILES of each."""
    mol = _mol(smiles)
    frags = Chem.GetMolFrags(mol)
    return {
        "fragments": [list(f) for f in frags],
        "fragment_smiles": [_smiles(m) for m in Chem.GetMolFrags(mol, asMols=True)],
    }


@_tool
def ExplainAtomCode(input: str) -> dict[str, Any]:
    """Decode the atom-pair code of one atom. Input: ``smiles, atom_idx[, include_chirality]`` (0-based index)."""
    from rdkit.Chem.AtomPairs import Utils

    parts = _items(input, split_dots=False)
    mol = _mol(parts[0] if parts else "")
    idx = _int_arg(parts, 1, "atom_idx")
    chiral = len(parts) < 3 or parts[2].lower() not in ("false", "0", "no")
    code = rdMD.GetAtomPairAtomCode(_atom(mol, idx), includeChirality=chiral)
    symbol, neighbors, pi = Utils.ExplainAtomCode(code, includeChirality=chiral)[:3]
    return {"atom_code": int(code), "symbol": symbol, "num_neighbors": int(neighbors), "num_pi_electrons": int(pi)}


@_tool
def ExplainAtomPairScore(input: str) -> dict[str, Any]:
    """Explain the atom-pair score of two atoms. Input: ``smiles, atom_idx1, atom_idx2`` (0-based)."""
    from rdkit.Chem.AtomPairs import Pairs

    parts = _items(input, split_dots=False)
    mol = _mol(parts[0] if parts else "")
    a1 = _atom(mol, _int_arg(parts, 1, "atom_idx1"))
    a2 = _atom(mol, _int_arg(parts, 2, "atom_idx2"))
    dist = int(Chem.GetDistanceMatrix(mol)[a1.GetIdx(), a2.GetIdx()])
    score = rdMD.GetAtomPairCode(rdMD.GetAtomPairAtomCode(a1), rdMD.GetAtomPairAtomCode(a2), dist)
    (s1, n1, p1), d, (s2, n2, p2) = Pairs.ExplainPairScore(score)
    return {
        "pair_score": int(score),
        "distance": int(d),
        "atom1": {"symbol": s1, "num_neighbors": n1, "num_pi_electrons": p1},
        "atom2": {"symbol": s2, "num_neighbors": n2, "num_pi_electrons": p2},
    }


# ---------------------------------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------------------------------
@_tool
def TestMolecule(smiles: str) -> dict[str, Any]:
    """Sanitize, remove hydrogens and check that canonical SMILES is stable under a round trip."""
    mol = _mol(smiles, sanitize=False)
    try:
        Chem.SanitizeMol(mol)
    except Exception as exc:  # noqa: BLE001 - RDKit raises several sanitization exception types
        return {"valid": False, "reason": f"sanitization failed: {exc}"}
    mol = Chem.RemoveHs(mol)
    first = Chem.MolToSmiles(mol)
    again = Chem.MolFromSmiles(first)
    if again is None or Chem.MolToSmiles(again) != first:
        return {"valid": False, "reason": "canonical SMILES is not stable under a round trip"}
    return {"valid": True, "canonical_smiles": first}


@_tool
def CheckValidRingCut(smiles: str) -> dict[str, Any]:
    """Whether a fragment (with [*] attachment points) is a valid Fraggle ring cut."""
    from rdkit.Chem.Fraggle import FraggleSim

    return {"valid_ring_cut": bool(FraggleSim.isValidRingCut(_mol(smiles)))}


@_tool
def GenerateFraggleFragments(smiles: str) -> dict[str, Any]:
    """All Fraggle fragmentations of a molecule (SMILES with attachment points)."""
    from rdkit.Chem.Fraggle import FraggleSim

    return {"fragments": sorted(FraggleSim.generate_fraggle_fragmentation(_mol(smiles)))}


@_tool
def GetFraggleSimilarity(input: str) -> dict[str, Any]:
    """Fraggle similarity of a query to a reference. Input: ``smiles1, smiles2[, tverskyThresh]``."""
    from rdkit.Chem.Fraggle import FraggleSim

    parts = _items(input)
    if len(parts) < 2:
        raise _Reject("pass two SMILES separated by a comma (query, reference)")
    thresh = _float_arg(parts, 2, "tverskyThresh", 0.8)
    sim, match = FraggleSim.GetFraggleSimilarity(_mol(parts[0]), _mol(parts[1]), tverskyThresh=thresh)
    return {"similarity": _r(float(sim)), "match": match}


@_tool
def GenerateMolKeyFromSmiles(smiles: str) -> dict[str, Any]:
    """RDKit MolKey (hash of the normalised structure) of a molecule."""
    from rdkit.Chem.MolKey import MolKey

    res = MolKey.GetKeyForCTAB(Chem.MolToMolBlock(_mol(smiles)))
    if res.error:
        raise _Reject(f"MolKey failed: {MolKey.ErrorBitsToText(res.error)}")
    return {"mol_key": res.mol_key}


@_tool
def GetStereoCodeFromSmiles(smiles: str) -> dict[str, Any]:
    """MolKey stereo category of a molecule (e.g. S_ACHIR, S_ABS, S_PART)."""
    from rdkit.Chem.MolKey import MolKey

    mol = _mol(smiles)
    try:
        return {"stereo_code": MolKey.GetKeyForCTAB(Chem.MolToMolBlock(mol)).stereo_code}
    except NotImplementedError:  # MolKey refuses structures its checker flags; classify the centres ourselves
        centers = Chem.FindMolChiralCenters(mol, includeUnassigned=True, useLegacyImplementation=False)
        known = sum(1 for _, label in centers if label != "?")
        code = "S_ACHIR" if not centers else "S_ABS" if known == len(centers) else "S_PART" if known else "S_UNKN"
        return {"stereo_code": code}


@_tool
def HasQueryHs(smiles: str) -> dict[str, Any]:
    """Whether the molecule has query hydrogens."""
    has, has_complex = Chem.HasQueryHs(_mol(smiles))
    return {"has_query_hs": bool(has), "has_complex_query_hs": bool(has_complex)}


@_tool
def GetAllowNontetrahedralChirality(smiles: str) -> dict[str, Any]:
    """Whether RDKit perceives non-tetrahedral chirality from 3D structures (a global setting)."""
    _mol(smiles)
    return {"allow_nontetrahedral_chirality": bool(Chem.GetAllowNontetrahedralChirality())}


@_tool
def GetUseLegacyStereoPerception(smiles: str) -> dict[str, Any]:
    """Whether RDKit uses its legacy stereo perception (a global setting)."""
    _mol(smiles)
    return {"use_legacy_stereo_perception": bool(Chem.GetUseLegacyStereoPerception())}


def _pair(value: Any) -> tuple[Chem.Mol, Chem.Mol]:
    parts = _items(value)
    if len(parts) != 2:
        raise _Reject(f"expected two SMILES (separated by '.' or a comma), got {len(parts)}")
    return _mol(parts[0]), _mol(parts[1])


@_tool
def IsSubstructof(target_template: str) -> dict[str, Any]:
    """Whether the first molecule (target) is a substructure of the second (template)."""
    target, template = _pair(target_template)
    return {"is_substructure": bool(template.HasSubstructMatch(target))}


@_tool
def MolSimilarity(smiles_pair: str) -> dict[str, Any]:
    """Tanimoto similarity of two molecules on Morgan fingerprints (radius 2, 2048 bits)."""
    a, b = _pair(smiles_pair)
    return {"tanimoto": _r(DataStructs.TanimotoSimilarity(_morgan_bits(a), _morgan_bits(b)))}


# ---------------------------------------------------------------------------------------------------------------
# tautomer queries
# ---------------------------------------------------------------------------------------------------------------
def _tautomer_query(smiles: Any) -> Any:
    from rdkit.Chem import rdTautomerQuery

    try:
        return rdTautomerQuery.TautomerQuery(_mol(smiles))
    except RuntimeError as exc:
        raise _Reject(f"cannot build a tautomer query ({exc})") from None


@_tool
def GetTemplateMolecule(smiles: str) -> dict[str, Any]:
    """Template molecule of the tautomer query (tautomeric bonds as query bonds)."""
    return {"smiles": Chem.MolToSmiles(_tautomer_query(smiles).GetTemplateMolecule())}


@_tool
def GetTautomers(template_smiles: str) -> dict[str, Any]:
    """Tautomers enumerated by the tautomer query."""
    tauts = sorted({Chem.MolToSmiles(t) for t in _tautomer_query(template_smiles).GetTautomers()})
    return {"tautomers": tauts, "num_tautomers": len(tauts)}


@_tool
def GetModifiedAtoms(template_smiles: str) -> dict[str, Any]:
    """Indices of atoms that change between tautomers."""
    return {"modified_atoms": sorted(int(i) for i in _tautomer_query(template_smiles).GetModifiedAtoms())}


@_tool
def GetModifiedBonds(smiles: str) -> dict[str, Any]:
    """Indices of bonds that change between tautomers."""
    return {"modified_bonds": sorted(int(i) for i in _tautomer_query(smiles).GetModifiedBonds())}


@_tool
def GetSubstructMatches(smiles_pair: str) -> dict[str, Any]:
    """Matches of the tautomer query of the second SMILES (template) in the first (target)."""
    parts = _items(smiles_pair)
    if len(parts) != 2:
        raise _Reject(f"expected two SMILES (target.template), got {len(parts)}")
    target = _mol(parts[0])
    matches = _tautomer_query(parts[1]).GetSubstructMatches(target)
    return {"matches": [list(m) for m in matches], "num_matches": len(matches)}


@_tool
def GetPatternFingerprintTemplate(smiles: str) -> dict[str, Any]:
    """Pattern fingerprint of the tautomer query's template; on-bit indices."""
    return {"pattern_fingerprint": _bits(_tautomer_query(smiles).PatternFingerprintTemplate())}


@_tool
def CanSerialize(smiles: str) -> dict[str, Any]:
    """Whether a tautomer query of the molecule can be pickled."""
    import pickle

    query = _tautomer_query(smiles)
    try:
        pickle.loads(pickle.dumps(query))
        ok = True
    except Exception:  # noqa: BLE001 - any failure means "cannot serialize"
        ok = False
    return {"can_serialize": ok}


# ---------------------------------------------------------------------------------------------------------------
# structure edits (SMILES -> SMILES)
# ---------------------------------------------------------------------------------------------------------------
@_tool
def AddHydrogens(smiles: str) -> dict[str, Any]:
    """Make hydrogens explicit atoms."""
    return {"smiles": Chem.MolToSmiles(Chem.AddHs(_mol(smiles)))}


@_tool
def RemoveHydrogens(smiles: str) -> dict[str, Any]:
    """Remove explicit hydrogen atoms."""
    return {"smiles": Chem.MolToSmiles(Chem.RemoveHs(_mol(smiles)))}


@_tool
def RemoveStereochemistry(smiles: str) -> dict[str, Any]:
    """Remove all stereochemistry."""
    return _transform(smiles, Chem.RemoveStereochemistry)


@_tool
def Kekulize(smiles: str) -> dict[str, Any]:
    """Kekulé form (explicit single/double bonds instead of aromatic ones)."""
    mol = _mol(smiles)
    Chem.Kekulize(mol, clearAromaticFlags=True)
    return {"smiles": Chem.MolToSmiles(mol, kekuleSmiles=True)}


@_tool
def SetAromaticity(smiles: str) -> dict[str, Any]:
    """Perceive aromaticity (RDKit model) on the Kekulé form."""
    mol = _mol(smiles)
    Chem.Kekulize(mol, clearAromaticFlags=True)
    Chem.SetAromaticity(mol)
    return {"smiles": Chem.MolToSmiles(mol)}


@_tool
def MurckoDecompose(smiles: str) -> dict[str, Any]:
    """Bemis-Murcko scaffold."""
    from rdkit.Chem.Scaffolds import MurckoScaffold

    return {"smiles": Chem.MolToSmiles(MurckoScaffold.GetScaffoldForMol(_mol(smiles)))}


@_tool
def MergeQueryHs(smiles: str) -> dict[str, Any]:
    """Merge explicit hydrogens into their neighbours as query counts."""
    return {"smiles": Chem.MolToSmiles(Chem.MergeQueryHs(Chem.AddHs(_mol(smiles))))}


@_tool
def AddWavyBondsForStereoAny(smiles: str) -> dict[str, Any]:
    """Mark double bonds of unknown (STEREOANY) geometry with wavy neighbouring bonds."""
    return _transform(smiles, Chem.AddWavyBondsForStereoAny)


@_tool
def AssignAtomChiralTagsFromStructure(smiles: str) -> dict[str, Any]:
    """Set atom chiral tags from 3D coordinates (one seeded conformer)."""
    mol = _conformer(_mol(smiles))
    Chem.AssignAtomChiralTagsFromStructure(mol)
    return {"smiles": Chem.MolToSmiles(Chem.RemoveHs(mol))}


@_tool
def AssignRadicals(smiles: str) -> dict[str, Any]:
    """Assign radical electrons from valences; reports the count per atom."""
    mol = _mol(smiles)
    Chem.AssignRadicals(mol)
    return {"smiles": Chem.MolToSmiles(mol), "radical_electrons": [a.GetNumRadicalElectrons() for a in mol.GetAtoms()]}


@_tool
def AssignStereoChemistry(smiles: str) -> dict[str, Any]:
    """Assign CIP codes (R/S, E/Z)."""
    mol = _mol(smiles)
    Chem.AssignStereochemistry(mol, cleanIt=True, force=True)
    centers = [
        {"atom": i, "label": lab}
        for i, lab in Chem.FindMolChiralCenters(mol, includeUnassigned=True, useLegacyImplementation=False)
    ]
    return {"smiles": Chem.MolToSmiles(mol), "chiral_centers": centers}


@_tool
def AssignCIPLabels(smiles: str) -> dict[str, Any]:
    """CIP labels from the new (2020) labelling algorithm, for atoms and bonds."""
    from rdkit.Chem import rdCIPLabeler

    mol = _mol(smiles)
    rdCIPLabeler.AssignCIPLabels(mol)
    atoms = [{"atom": a.GetIdx(), "label": a.GetProp("_CIPCode")} for a in mol.GetAtoms() if a.HasProp("_CIPCode")]
    bonds = [{"bond": b.GetIdx(), "label": b.GetProp("_CIPCode")} for b in mol.GetBonds() if b.HasProp("_CIPCode")]
    return {"smiles": Chem.MolToSmiles(mol), "atom_labels": atoms, "bond_labels": bonds}


@_tool
def SetBondStereoFromDirections(smiles: str) -> dict[str, Any]:
    """Set cis/trans stereo of double bonds from the directions of their neighbouring single bonds."""
    return _transform(smiles, Chem.SetBondStereoFromDirections)


@_tool
def HapticBondsToDative(smiles: str) -> dict[str, Any]:
    """Replace haptic (dummy-atom) bonds by dative bonds to the metal."""
    return {"smiles": Chem.MolToSmiles(Chem.HapticBondsToDative(_mol(smiles)))}


@_tool
def AssignOxidationNumbers(smiles: str) -> dict[str, Any]:
    """Oxidation number of each atom."""
    mol = _mol(smiles)
    rdMD.CalcOxidationNumbers(mol)
    return {
        "smiles": Chem.MolToSmiles(mol),
        "oxidation_numbers": [a.GetIntProp("OxidationNumber") for a in mol.GetAtoms()],
    }


@_tool
def Deprotect(smiles: str) -> dict[str, Any]:
    """Remove common protecting groups (RDKit's default deprotection set)."""
    from rdkit.Chem import rdDeprotect

    return {"smiles": Chem.MolToSmiles(rdDeprotect.Deprotect(_mol(smiles)))}


@_tool
def CondenseAbbreviationSubstanceGroups(smiles: str) -> dict[str, Any]:
    """Condense common groups into abbreviations (RDKit default abbreviations); returns CXSMILES."""
    from rdkit.Chem import rdAbbreviations

    mol = rdAbbreviations.CondenseMolAbbreviations(_mol(smiles), rdAbbreviations.GetDefaultAbbreviations())
    return {"smiles": Chem.MolToCXSmiles(mol)}


@_tool
def Enumerate(smiles: str) -> dict[str, Any]:
    """Enumerate the molecules of a query (link nodes, position variation); plain molecules give themselves."""
    from rdkit.Chem import rdMolEnumerator

    mol = _mol(smiles)
    bundle = rdMolEnumerator.Enumerate(mol)
    out = [Chem.MolToSmiles(m) for m in bundle] or [Chem.MolToSmiles(mol)]
    return {"smiles_list": out, "count": len(out)}


def _determine(smiles: Any, orders: bool) -> dict[str, Any]:
    from rdkit.Chem import rdDetermineBonds

    mol = _mol(smiles)
    charge = Chem.GetFormalCharge(mol)
    mol3d = _conformer(mol)
    raw = Chem.MolFromXYZBlock(Chem.MolToXYZBlock(mol3d))
    if raw is None:
        raise _Reject("cannot rebuild the molecule from its coordinates")
    try:
        if orders:
            rdDetermineBonds.DetermineBonds(raw, charge=charge)
        else:
            rdDetermineBonds.DetermineConnectivity(raw)
    except (ValueError, RuntimeError) as exc:
        raise _Reject(f"bond perception failed ({exc})") from None
    out = Chem.RemoveHs(raw, sanitize=orders)
    res = {"num_atoms": out.GetNumAtoms(), "num_bonds": out.GetNumBonds()}
    if orders:
        res.update(
            formula=rdMD.CalcMolFormula(out),
            molecular_weight=_r(Descriptors.MolWt(out)),
            smiles=Chem.MolToSmiles(out),
            inchi=Chem.MolToInchi(out),
            inchikey=Chem.MolToInchiKey(out),
        )
    return res


@_tool
def DetermineBonds(smiles: str) -> dict[str, Any]:
    """Re-derive connectivity and bond orders from 3D coordinates of one seeded conformer."""
    return _determine(smiles, True)


@_tool
def DetermineBondOrders(smiles: str) -> dict[str, Any]:
    """Re-derive bond orders from 3D coordinates (connectivity perceived first)."""
    return _determine(smiles, True)


# ---------------------------------------------------------------------------------------------------------------
# sets of molecules
# ---------------------------------------------------------------------------------------------------------------
@_tool
def CalculateDistanceMatrix(smiles_list: str) -> dict[str, Any]:
    """Tanimoto distance matrix (1 - similarity) on RDKit fingerprints."""
    fps = [Chem.RDKFingerprint(m) for _, m in _mols(smiles_list)]
    return {"distance_matrix": [[_r(1.0 - DataStructs.TanimotoSimilarity(a, b)) for b in fps] for a in fps]}


@_tool
def ClusterMolecules(input: str) -> dict[str, Any]:
    """Butina clustering of molecules on RDKit fingerprints at Tanimoto distance 0.5. Input: a SMILES list."""
    from rdkit.ML.Cluster import Butina

    mols = _mols(input)
    fps = [Chem.RDKFingerprint(m) for _, m in mols]
    dists = [1.0 - DataStructs.TanimotoSimilarity(fps[i], fps[j]) for i in range(1, len(fps)) for j in range(i)]
    clusters = Butina.ClusterData(dists, len(fps), 0.5, isDistData=True)
    return {"clusters": [sorted(int(i) for i in c) for c in clusters], "num_clusters": len(clusters)}


@_tool
def CalculateShapeSimilarity(smiles_list: str) -> dict[str, Any]:
    """USRCAT shape similarity of every pair of molecules (one seeded conformer each)."""
    mols = _mols(smiles_list, minimum=2)
    descs = [rdMD.GetUSRCAT(_conformer(m)) for _, m in mols]
    pairs = [
        {"i": i, "j": j, "score": _r(rdMD.GetUSRScore(descs[i], descs[j]))}
        for i in range(len(descs))
        for j in range(i + 1, len(descs))
    ]
    return {"smiles": [s for s, _ in mols], "scores": pairs}


@_tool
def ShowMol(smiles: str) -> dict[str, Any]:
    """2D depiction of the molecule as SVG text."""
    from rdkit.Chem.Draw import rdMolDraw2D

    drawer = rdMolDraw2D.MolDraw2DSVG(300, 300)
    rdMolDraw2D.PrepareAndDrawMolecule(drawer, _mol(smiles))
    drawer.FinishDrawing()
    return {"svg": drawer.GetDrawingText()}


# ---------------------------------------------------------------------------------------------------------------
# sequences (pure Python)
# ---------------------------------------------------------------------------------------------------------------
_BASES = "TCAG"
_AMINO = "FFLLSSSSYY**CC*WLLLLPPPPHHQQRRRRIIIMTTTTNNKKSSRRVVVVAAAADDEEGGGG"
_CODONS = {
    a + b + c: _AMINO[16 * i + 4 * j + k]
    for i, a in enumerate(_BASES)
    for j, b in enumerate(_BASES)
    for k, c in enumerate(_BASES)
}


def _dna(value: Any) -> str:
    text = re.sub(r"\s+", "", _text(value, "DNA sequence")).upper().replace("U", "T")
    if not re.fullmatch(r"[ACGTN]+", text):
        raise _Reject(f"invalid DNA sequence {text[:80]!r}: use the letters A, C, G, T (or U)")
    return text


@_tool
def TranslateDNAtoAminoAcidSequence(sequence: str) -> dict[str, Any]:
    """Translate DNA in the three forward reading frames with the standard genetic code ('*' = stop)."""
    dna = _dna(sequence)
    frames = ["".join(_CODONS.get(dna[i : i + 3], "X") for i in range(f, len(dna) - 2, 3)) for f in range(3)]
    return {"protein_sequence": frames[0], "frames": frames}


@_tool
def GetReverseComplement(sequence: str) -> dict[str, Any]:
    """Reverse complement of a DNA sequence."""
    return {"sequence": _dna(sequence).translate(str.maketrans("ACGTN", "TGCAN"))[::-1]}


@_tool
def RandomDNAGeneration(length: str) -> dict[str, Any]:
    """A random DNA sequence of the given length (seeded by the length, so reproducible)."""
    try:
        n = int(float(_text(length, "length")))
    except ValueError:
        raise _Reject(f"length must be an integer, got {length!r}") from None
    if not 1 <= n <= 100_000:
        raise _Reject(f"length must be between 1 and 100000, got {n}")
    rng = random.Random(n)
    return {"sequence": "".join(rng.choice("ACGT") for _ in range(n))}


def _protein(value: Any) -> str:
    text = re.sub(r"\s+", "", _text(value, "protein sequence")).upper()
    if not re.fullmatch(r"[ACDEFGHIKLMNPQRSTVWYXBZUO*]+", text):
        raise _Reject(f"invalid protein sequence {text[:80]!r}: use one-letter amino-acid codes")
    return text


@_tool
def GetAminoAcidFrequency(sequence: str) -> dict[str, Any]:
    """Relative frequency of each amino acid in a protein sequence."""
    seq = _protein(sequence)
    return {"frequencies": {aa: _r(seq.count(aa) / len(seq)) for aa in sorted(set(seq))}}


@_tool
def AminoAcidStatistics(protein: str) -> dict[str, Any]:
    """Count and proportion of each amino acid in a protein sequence."""
    seq = _protein(protein)
    return {
        "length": len(seq),
        "counts": {aa: seq.count(aa) for aa in sorted(set(seq))},
        "proportions": {aa: _r(seq.count(aa) / len(seq)) for aa in sorted(set(seq))},
    }


# tidy the module namespace: loop variables are not tools
for _leftover in ("_i", "_k", "_name", "_field", "_fn", "_doc", "_leftover"):
    globals().pop(_leftover, None)
