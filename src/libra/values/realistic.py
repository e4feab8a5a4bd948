"""Realistic values for what a parameter's name and type say it is: an e-mail, a password, a person's name, a city.

Why: ordinary validation rejects what is obviously not the thing asked for ("sample first name" is not a name,
"new_user" breaks a letters-and-digits rule, "hello" is not a phone number), and a maintained generator of fake
data knows the common kinds and their shapes far better than a table we would write. Faker draws them, seeded per
tool, parameter and draw, so a build makes the same calls every time.

Each kind is recognised by the words of the parameter's name (``contact_email``, ``firstName``), with the string
type; a kind is only a guess, so what it draws is still checked against the documented constraints and the
schema by the caller (:mod:`libra.values.generator`).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Callable
from typing import Any

from libra._util.text import compounds, words

# (words any of which names the kind, the Faker provider that draws it); the first matching entry wins, so the
# more specific kinds come first (``user_name`` before ``name``, ``email_address`` before ``address``).
KINDS: tuple[tuple[frozenset[str], str], ...] = (
    (frozenset({"email", "emailaddress", "mail"}), "email"),
    (frozenset({"password", "passwd", "passphrase", "passcode"}), "password"),
    (frozenset({"username", "login", "nickname", "screenname"}), "user_name"),
    (frozenset({"phone", "phonenumber", "mobile", "mobilenumber", "cellnumber", "telephone", "tel"}), "e164"),
    (frozenset({"url", "uri", "website", "homepage", "link"}), "url"),
    (frozenset({"firstname", "givenname", "forename"}), "first_name"),
    (frozenset({"lastname", "surname", "familyname"}), "last_name"),
    (frozenset({"fullname", "displayname", "realname"}), "name"),
    (frozenset({"city", "town"}), "city"),
    (frozenset({"countrycode"}), "country_code"),
    (frozenset({"country"}), "country"),
    (frozenset({"currency", "currencycode"}), "currency_code"),
    (frozenset({"company", "organization", "organisation", "employer"}), "company"),
    (frozenset({"street", "streetaddress", "address1", "addressline"}), "street_address"),
    (frozenset({"zip", "zipcode", "postcode", "postalcode"}), "postcode"),
    (frozenset({"language"}), "language_name"),
    (frozenset({"color", "colour"}), "color_name"),
    (frozenset({"job", "occupation", "profession"}), "job"),
    (frozenset({"ip", "ipaddress", "ipv4"}), "ipv4"),
    (frozenset({"iban"}), "iban"),
    (frozenset({"timezone", "tz"}), "timezone"),
)
#: Kinds named by a person's name only when nothing more specific matched (``name`` alone is a person's name only
#: on a person: ``patient_name``, ``guest_name``, ``member_name``).
PERSON_WORDS = frozenset(
    {
        "person",
        "patient",
        "guest",
        "member",
        "customer",
        "user",
        "contact",
        "employee",
        "owner",
        "author",
        "recipient",
        "sender",
        "attendee",
        "student",
        "teacher",
        "doctor",
        "client",
        "friend",
        "holder",
        "cardholder",
    }
)


#: Last words that make a parameter a reference to a record, not the thing itself (``job_id``, ``city_key``).
REFERENCE_WORDS = frozenset({"id", "ids", "uuid", "key", "token", "ref", "index", "idx"})


#: Kinds whose form a description names unambiguously ("the participants' e-mail addresses"): the name may say
#: who (``participants``), the description says what.
DESCRIBED_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\be-?mail(?:\s+address(?:es)?)?\b", re.I), "email"),
    (re.compile(r"\bphone\s+numbers?\b", re.I), "e164"),
    (re.compile(r"\b(?:url|web\s+address|link)s?\b", re.I), "url"),
)


def kind_of(name: str, schema_type: str | None, description: str = "") -> str | None:
    """The kind of value a string parameter named ``name`` holds, as a Faker provider name (None if unknown); a
    description that names an e-mail address, a phone number or a URL says so where the name does not."""
    if schema_type not in (None, "string"):
        return None
    kind = _kind_of_name(name)
    if kind is not None or not description:
        return kind
    if words(name) and words(name)[-1] in REFERENCE_WORDS:
        return None
    return next((k for rx, k in DESCRIBED_KINDS if rx.search(description)), None)


def _kind_of_name(name: str) -> str | None:
    parts = words(name)
    if not parts or parts[-1] in REFERENCE_WORDS:
        return None
    toks = compounds(parts)
    for names, kind in KINDS:
        if toks & names:
            return kind
    if "name" in toks and toks & PERSON_WORDS:
        return "name"
    return None


@functools.cache
def _faker() -> Any:
    from faker import Faker

    return Faker("en_US")


def _e164(fake: Any) -> str:
    """A phone number in the international form most validators accept (``+`` and digits only)."""
    return "+1" + "".join(c for c in fake.numerify("##########") if c.isdigit())


_SPECIAL: dict[str, Callable[[Any], str]] = {
    "e164": _e164,
    "password": lambda fake: fake.password(length=12, special_chars=True, digits=True, upper_case=True),
}


def seed_of(*parts: Any) -> int:
    """A stable seed from the parts (Python's ``hash`` of a string changes between processes)."""
    return int.from_bytes(hashlib.blake2b("\0".join(map(str, parts)).encode(), digest_size=8).digest(), "big")


def draw(kind: str, seed: int) -> str:
    """One value of ``kind``, the same for the same seed in every process."""
    fake = _faker()
    fake.seed_instance(seed)
    special = _SPECIAL.get(kind)
    return str(special(fake) if special else getattr(fake, kind)())
