"""A small document store: files are created with a random id and then described, renamed or deleted by it.

Written with reST docstrings. Ids come from :func:`uuid.uuid4` and timestamps from :func:`datetime.now`, as
real stores do, so two identical ``create_file`` calls return different ids.

Designed relations (all on ``file_id``): ``create_file`` and ``list_files`` provide the id that
``describe_file``, ``rename_file`` and ``delete_file`` need; a well-formed id of no file is refused.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timezone


class FileStore:
    """Files kept in memory, keyed by id; one welcome file exists from the start."""

    def __init__(self) -> None:
        self.files: dict[str, dict] = {
            "0b7e6c5a-3f4d-4a8e-9c1b-2d6f8e9a0b1c": {
                "name": "welcome.txt",
                "content": "Welcome to your document store.",
                "created_at": "2024-01-01T09:00:00+00:00",
            }
        }

    def _get(self, file_id: str) -> dict:
        try:
            key = str(uuid.UUID(file_id))
        except ValueError:
            raise ValueError(f"file_id {file_id!r} is not a valid file id") from None
        if key not in self.files:
            raise KeyError(f"no file with id {key}")
        return self.files[key]

    def create_file(self, name: str, content: str) -> dict:
        """Create a new file.

        :param name: File name, including its extension.
        :param content: The text to store in the file.
        :returns: The new file's id, name and creation time.
        """
        if not name.strip():
            raise ValueError("name must not be empty")
        if any(f["name"] == name for f in self.files.values()):
            raise ValueError(f"a file named {name!r} already exists")
        file_id = str(uuid.uuid4())
        created = datetime.now(timezone.utc).isoformat()
        self.files[file_id] = {"name": name, "content": content, "created_at": created}
        return {"file_id": file_id, "name": name, "created_at": created}

    def list_files(self) -> list[dict]:
        """List every stored file.

        :returns: Each file's id and name.
        """
        return [{"file_id": fid, "name": f["name"]} for fid, f in self.files.items()]

    def describe_file(self, file_id: str) -> dict:
        """Show a file's name, size and creation time.

        :param file_id: The id of the file.
        :returns: The file's metadata.
        """
        f = self._get(file_id)
        return {"file_id": file_id, "name": f["name"], "size": len(f["content"]), "created_at": f["created_at"]}

    def rename_file(self, file_id: str, new_name: str) -> dict:
        """Give a file a new name.

        :param file_id: The id of the file.
        :param new_name: The new file name.
        :returns: The file's id and new name.
        """
        f = self._get(file_id)
        if not new_name.strip():
            raise ValueError("new_name must not be empty")
        f["name"] = new_name
        return {"file_id": file_id, "name": new_name}

    def delete_file(self, file_id: str) -> dict:
        """Delete a file for good.

        :param file_id: The id of the file.
        :returns: Whether the file was deleted.
        """
        self._get(file_id)
        del self.files[str(uuid.UUID(file_id))]
        return {"deleted": True}


CLASSES = [FileStore]

# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("FileStore.create_file", "FileStore.describe_file", VALUE, "file_id", "file_id"),
    ("FileStore.create_file", "FileStore.rename_file", VALUE, "file_id", "file_id"),
    ("FileStore.create_file", "FileStore.delete_file", VALUE, "file_id", "file_id"),
    ("FileStore.list_files", "FileStore.describe_file", VALUE, "file_id", "file_id"),
    ("FileStore.list_files", "FileStore.delete_file", VALUE, "file_id", "file_id"),
]

EXCLUDED = [
    # describe and rename hand back the id they were given: echoes provide nothing.
    ("FileStore.describe_file", None, None, "file_id", None),
    ("FileStore.rename_file", None, None, "file_id", None),
    # A name, a size or a time is not a file id.
    (None, None, None, "name", "file_id"),
    (None, None, None, "created_at", None),
    # Deleting provides no value (it may free a name for create_file, a state relation, which is fine).
    ("FileStore.delete_file", None, ("provenance", "compatibility"), None, None),
]
