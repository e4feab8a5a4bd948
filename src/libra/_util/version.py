"""The release, in a module of its own: the package's ``__init__`` makes the search API reachable from ``libra``, so
code low in the layers that records the version (a built library) reads it here."""

VERSION = "0.1.0"
