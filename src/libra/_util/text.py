"""Words of identifiers and sentences: the one tokenizer every part of a build compares names with.

Why one: a parameter's name, an export's name and a description are matched word by word (``user_name`` and
``userName`` are one name); splitting them in one place keeps every comparison agreeing on what a word is.
"""

from __future__ import annotations

import functools
import re


def words(text: str) -> list[str]:
    """Lower-case word tokens of an identifier or sentence (snake_case, camelCase and trailing digits split)."""
    return list(_word_tuple(text or ""))


@functools.lru_cache(maxsize=1 << 16)
def _word_tuple(text: str) -> tuple[str, ...]:
    """:func:`words`, cached per text. Why: a build tokenizes the same few thousand field names and descriptions
    millions of times (every binding scores every pooled value by name), and the regular expressions cost more
    than everything else in that scoring."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", text)
    return tuple(w for w in re.split(r"[^a-zA-Z]+", text.lower()) if w)


def compounds(tokens: list[str]) -> set[str]:
    """Tokens plus adjacent pairs glued together, so ``user_name`` and ``username`` look alike."""
    out = set(tokens)
    out.update(a + b for a, b in zip(tokens, tokens[1:]))
    return out


def name_parts(name: str) -> list[str]:
    """Lower-case parts of an identifier with its digits kept (``address1`` -> ``address``, ``1``)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name or "").lower()
    return re.findall(r"[a-z]+|[0-9]+", text)
