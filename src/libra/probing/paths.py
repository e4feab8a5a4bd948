"""One spelling for a relative path: the form a value enters the pool in.

Why it exists: tools print a path relative to the working directory in more than one spelling. Unix ``find`` and
many listings print ``./notes.txt``, ``ls`` prints ``notes.txt``, and a tool that takes "the name of a file in the
current directory" often refuses the ``/`` of the first spelling. Both name the same file, so a value a tool
returned as ``./notes.txt`` is offered as ``notes.txt``: offered as printed, every test of a search that reveals
files fails for the spelling alone, and the search provides nothing (the ``workdir`` catalog of the generalization
suite:
``find`` prints ``./name`` and ``cat`` refuses a ``/``). Only a value that *is* spelled as a relative path changes: it
starts with ``./``, is one
line, and is not a URL; everything else (an id, a sentence, ``and/or``) is left as it is.
"""

from __future__ import annotations

import re
from typing import Any

#: A value longer than this is no path (a text that happens to start with "./").
MAX_PATH = 4096

_DOT_SEGMENTS = re.compile(r"(?:^|/)\.(?=/|$)")


def canonical_path(value: Any) -> Any:
    """``value`` with an equivalent relative-path spelling made plain, or ``value`` itself when it is no such path.

    Plain means: no leading ``./`` (repeated or not), no ``/./`` segment, no repeated ``/``, no trailing ``/``
    (``./docs//old/`` -> ``docs/old``). The working directory itself (``./``, ``.``) stays ``.``. Parent segments
    (``..``) are kept: resolving them needs the directory, and a tool may refuse them on purpose.
    """
    if (
        not isinstance(value, str)
        or not value.startswith("./")
        or len(value) > MAX_PATH
        or "\n" in value
        or "://" in value
    ):
        return value
    path = _DOT_SEGMENTS.sub("", re.sub(r"/{2,}", "/", value)).strip("/")
    return path or "."


__all__ = ["canonical_path"]
