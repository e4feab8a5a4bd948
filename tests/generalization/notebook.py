"""A notebook kept under version control: folders, notes, labels, a staging index and snapshots.

Shaped like the file and version-control tools agents get over MCP, written as plain Python (no schemas beyond
the annotations). What it exercises, each a generic rule of the proposer or the engine:

- ``save_note`` writes a note at a path whose folder must exist (``make_folder`` creates one, ``make_folders``
  creates missing parents too): a creating tool's path input takes a produced path as the folder to create in,
  and the control changes only the folder (engine ``placed_path``), so ``make_folder -> save_note`` is found and
  ``make_folder -> make_folders`` (which needs no folder) is not.
- ``create_label`` refuses names with spaces ("cannot contain spaces"): the proposer's literal is repaired from the
  message (``schema.repair_literal``), so labels get created and ``use_label`` is reached.
- ``add_to_index`` is named with a creating verb, yet its ``paths`` must name existing notes; it says so with
  "did not match any notes" quoting the invented path, and the revision makes the input an observation
  (``feedback.missing_references``), so ``save_note -> add_to_index`` and ``add_to_index -> take_snapshot`` are found.
- ``annotate`` takes a list of objects, each naming a label by ``label_name``; the refusal quotes the invented
  name, so that leaf alone becomes a reference (``Contract.nested_references``) and created labels are offered
  there, the rest of the literal unchanged.
- Every refusal is raised, as validation in code does.
"""

from __future__ import annotations

from typing import TypedDict

from . import VALUE


class Annotation(TypedDict):
    """A comment attached to a label."""

    label_name: str
    comment: str


class Notebook:
    """Folders and notes in memory (the root folder exists), labels, a staging index and snapshots."""

    def __init__(self) -> None:
        self.folders: set[str] = {""}
        self.notes: dict[str, str] = {"readme": "A notebook."}
        self.labels: set[str] = {"main"}
        self.current_label = "main"
        self.index: dict[str, str] = {}
        self.snapshots: list[dict] = []

    @staticmethod
    def _parent(path: str) -> str:
        return path.rsplit("/", 1)[0] if "/" in path else ""

    def make_folder(self, path: str) -> dict:
        """Create a folder; its parent folder must exist.

        :param path: Path of the folder to create, relative to the notebook's root.
        :returns: The folder's path.
        """
        path = path.strip("/")
        if not path:
            raise ValueError("path must not be empty")
        if self._parent(path) not in self.folders:
            raise FileNotFoundError(f"no folder {self._parent(path)!r}")
        if path in self.notes:
            raise FileExistsError(f"a note exists at {path!r}")
        self.folders.add(path)
        return {"path": path}

    def make_folders(self, path: str) -> dict:
        """Create a folder and any missing parent folders.

        :param path: Path of the folder to create, relative to the notebook's root.
        :returns: The folder's path.
        """
        path = path.strip("/")
        if not path:
            raise ValueError("path must not be empty")
        parts = path.split("/")
        for i in range(1, len(parts) + 1):
            if "/".join(parts[:i]) in self.notes:
                raise FileExistsError(f"a note exists at {'/'.join(parts[:i])!r}")
        for i in range(1, len(parts) + 1):
            self.folders.add("/".join(parts[:i]))
        return {"path": path}

    def save_note(self, path: str, text: str) -> dict:
        """Save a note; the folder it goes in must exist.

        :param path: Path of the note, relative to the notebook's root.
        :param text: The note's text.
        :returns: The note's path and length.
        """
        path = path.strip("/")
        if not path:
            raise ValueError("path must not be empty")
        if path in self.folders:
            raise IsADirectoryError(f"{path!r} is a folder")
        if self._parent(path) not in self.folders:
            raise FileNotFoundError(f"no folder {self._parent(path)!r}")
        self.notes[path] = text
        return {"path": path, "length": len(text)}

    def read_note(self, path: str) -> str:
        """Read a note.

        :param path: Path of the note.
        :returns: The note's text.
        """
        if path.strip("/") not in self.notes:
            raise FileNotFoundError(f"no note {path!r}")
        return self.notes[path.strip("/")]

    def create_label(self, label_name: str) -> str:
        """Create a label at the current snapshot.

        :param label_name: Name of the label.
        :returns: A confirmation.
        """
        if not label_name or any(c.isspace() for c in label_name):
            raise ValueError(f"invalid label {label_name!r}: labels cannot contain spaces")
        if label_name in self.labels:
            raise ValueError(f"label {label_name!r} already exists")
        self.labels.add(label_name)
        return f"Created label {label_name}"

    def use_label(self, label_name: str) -> str:
        """Switch to a label.

        :param label_name: Name of the label.
        :returns: A confirmation.
        """
        if label_name not in self.labels:
            raise KeyError(f"label {label_name!r} not found")
        self.current_label = label_name
        return f"Switched to {label_name}"

    def annotate(self, annotations: list[Annotation]) -> dict:
        """Attach comments to labels.

        :param annotations: Each comment with the label it is about.
        :returns: How many comments were attached.
        """
        for a in annotations:
            if a["label_name"] not in self.labels:
                raise KeyError(f"label {a['label_name']} not found")
        return {"attached": len(annotations)}

    def add_to_index(self, paths: list[str]) -> str:
        """Stage notes for the next snapshot.

        :param paths: Notes to stage.
        :returns: A confirmation.
        """
        if not paths:
            raise ValueError("give at least one path")
        for p in paths:
            if p.strip("/") not in self.notes:
                raise FileNotFoundError(f"pathspec {p!r} did not match any notes")
        for p in paths:
            self.index[p.strip("/")] = self.notes[p.strip("/")]
        return "Staged"

    def take_snapshot(self, message: str) -> str:
        """Record the staged notes as a snapshot.

        :param message: What the snapshot is about.
        :returns: A confirmation with the snapshot's number.
        """
        if not self.index:
            raise ValueError("nothing staged: add notes to the index first")
        self.snapshots.append({"message": message, "notes": dict(self.index)})
        self.index = {}
        return f"Snapshot {len(self.snapshots)} taken"


CLASSES = [Notebook]

DESIGNED = [
    # The folder is where the note goes: saved inside it only once it exists.
    ("Notebook.make_folder", "Notebook.save_note", "state", None, None),
    ("Notebook.save_note", "Notebook.read_note", VALUE, "path", "path"),
    # A label must be created (with a name the tool accepts) before it can be used.
    ("Notebook.create_label", "Notebook.use_label", VALUE, "label_name", "label_name"),
    # The label a comment is about is one that exists, named inside each list item.
    ("Notebook.create_label", "Notebook.annotate", VALUE, "label_name", "annotations"),
    # Staging takes the path of a saved note; a snapshot needs something staged.
    ("Notebook.save_note", "Notebook.add_to_index", VALUE, "path", "paths"),
    ("Notebook.add_to_index", "Notebook.take_snapshot", "state", None, None),
]

EXCLUDED = [
    # make_folders creates missing parents: it needs no folder another call made.
    ("Notebook.make_folder", "Notebook.make_folders", None, None, None),
    ("Notebook.make_folders", "Notebook.make_folders", None, None, None),
    # The index is not fed by labels or snapshots.
    ("Notebook.create_label", "Notebook.add_to_index", None, None, None),
    ("Notebook.take_snapshot", "Notebook.add_to_index", None, None, None),
]
