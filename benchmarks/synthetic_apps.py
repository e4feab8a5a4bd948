"""A synthetic, AppWorld-shaped catalog for the memory benchmark (bench_memory.py).

Eight apps, each holding its records as one large value (like an app's database file), so that every write makes
a new snapshot of ~150 KB: the shape of state that made a build's memo of invocations grow with its calls.
"""

from __future__ import annotations

import json
from typing import Any


def make_app(name: str):
    class App:
        __doc__ = f"The {name} app: records with long bodies."

        def __init__(self) -> None:
            # one large value, like an app's database file: every write makes a new snapshot of all of it
            self.records = {i: f"{name}-seed-{i}-" + "x" * 1500 for i in range(100)}
            self.db = ""
            self._sync()

        def _sync(self) -> None:
            self.db = json.dumps(self.records)

        def create_record(self, title: str) -> dict:
            """Create a new record.

            Args:
                title: Title of the new record.
            """
            rid = len(self.records)
            self.records[rid] = f"{title}-{rid}-" + "y" * 1500
            self._sync()
            return {"record_id": rid}

        def copy_record(self, record_id: int) -> dict:
            """Copy an existing record into a new record.

            Args:
                record_id: The id of the existing record to copy.
            """
            if record_id not in self.records:
                return {"error": "no such record"}
            rid = len(self.records)
            self.records[rid] = self.records[record_id][::-1]
            self._sync()
            return {"record_id": rid}

        def tag_record(self, record_id: int, tag: str) -> dict:
            """Tag an existing record (as a new version of it).

            Args:
                record_id: The id of the existing record to tag.
                tag: The tag to add.
            """
            if record_id not in self.records:
                return {"error": "no such record"}
            self.records[record_id] = f"[{tag}]" + self.records[record_id]
            self._sync()
            return {"record_id": record_id, "tag": tag}

        def read_record(self, record_id: int) -> dict:
            """Read an existing record.

            Args:
                record_id: The id of the existing record to read.
            """
            if record_id not in self.records:
                return {"error": "no such record"}
            return {
                "record_id": record_id,
                "body": self.records[record_id][:200],
                "length": len(self.records[record_id]),
            }

    App.__name__ = App.__qualname__ = name
    App.__module__ = __name__
    globals()[name] = App
    return App


APPS = [make_app(n) for n in ("Notes", "Tasks", "Files", "Mail", "Photos", "Music", "Shop", "Bank")]


def make_runtime():
    from libra.runtime.python.runtime import PythonRuntime

    return PythonRuntime(classes=APPS, trusted=False, name="synth")


class SynthBenchmark:
    """The apps as a benchmark whose runtime runs in isolated workers, as a real catalog's does."""

    name = "synthetic-apps"

    def catalog(self):
        rt = make_runtime()
        cat = rt.catalog
        rt.close()
        return cat

    def tasks(self):
        return []

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw: Any) -> Any:
        if not isolated:
            return make_runtime()
        from libra.runtime.workers.isolation import IsolatedRuntime

        return IsolatedRuntime(make_runtime, n_workers=n_workers, **kw)
