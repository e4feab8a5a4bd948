"""Search over a built library: the API behind ``libra retrieve``, ``libra serve`` and Python callers.

:class:`Searcher` ranks tools for a request and promotes their verified prerequisites; :class:`SearchOptions`
says how. The rest is what makes a search cheap to start (the cached index) and what its results look like in
other formats (client tool-search formats, the explained ranking).
"""

from libra._util.lazy import exports

__all__ = ["Prerequisite", "Result", "SearchOptions", "Searcher"]
__getattr__, __dir__ = exports(
    __name__, {"Prerequisite": ".index", "Result": ".searcher", "SearchOptions": ".options", "Searcher": ".searcher"}
)
