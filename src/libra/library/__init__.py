"""The built artifact: a catalog, its contracts and the relations the induction kept, with their evidence.

``Library`` (load, save, query relations) is the one class most callers need; :mod:`.check` is what every load
runs before using a file, :mod:`.evidence` turns recorded calls into one line per relation.
"""

from libra.library.artifact import FORMAT, FORMAT_VERSION, KINDS, Candidate, Library, Relation

__all__ = ["FORMAT", "FORMAT_VERSION", "KINDS", "Candidate", "Library", "Relation"]
