"""Exercise docstore.py and show that every dependency in DEPENDENCIES.json is real."""

import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path, PurePosixPath
from uuid import uuid4

sys.path.insert(0, str(Path(__file__).parent))
from docstore import (  # noqa: E402
    DocStoreError, DocumentNotFoundError, DocumentStore, EntryKind, InvalidPathError,
    PathExistsError, PathNotFoundError, ShareLinkError, ShareLinkExpiredError,
)

checked: list[tuple[str, str]] = []


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:
        return e
    raise AssertionError(f"{fn.__name__}{args} should have failed with {exc.__name__}")


def ok(provider, consumer):
    checked.append((provider, consumer))


def docs(store, folder="/", recursive=True):
    return {e["path"]: e for e in store.list_folder(folder, recursive) if e["kind"] is EntryKind.DOCUMENT}


# --- create_folder as provider ---------------------------------------------
s = DocumentStore()
fails(s.upload_document, "/Projects", "plan.md", "# plan", exc=PathNotFoundError)
f = s.create_folder("/Projects")
up = s.upload_document(f.path, "plan.md", "# plan\n")
assert up.path == PurePosixPath("/Projects/plan.md") and up.content_type == "text/markdown"
ok("create_folder", "upload_document")

fails(s.list_folder, "/Projects/2024", exc=PathNotFoundError)
f2 = s.create_folder("/Projects/2024")
assert s.list_folder(f2.path) == []
ok("create_folder", "list_folder")

fails(s.move, up.path, "/Archive", exc=PathNotFoundError)
arch = s.create_folder("/Archive")
assert s.move(up.path, arch.path) == PurePosixPath("/Archive/plan.md")
ok("create_folder", "move")

fails(s.move_to_trash, "/Scratch", exc=PathNotFoundError)
tmp = s.create_folder("/Scratch")
assert s.move_to_trash(tmp.path).kind is EntryKind.FOLDER
ok("create_folder", "move_to_trash")

# --- list_folder as provider -----------------------------------------------
s = DocumentStore()
root = s.list_folder("/")
photos = next(e for e in root if e["name"] == "Photos")
fails(s.upload_document, "/Pictures", "cat.jpg", b"\xff\xd8", exc=PathNotFoundError)
assert s.upload_document(photos["path"], "cat.jpg", b"\xff\xd8\xff").content_type == "image/jpeg"
ok("list_folder", "upload_document")

entries = docs(s, "/Documents")
welcome = entries[PurePosixPath("/Documents/welcome.txt")]
report = entries[PurePosixPath("/Documents/Reports/q1-summary.md")]
fails(s.get_document, "/Documents/Welcome.txt", exc=PathNotFoundError)  # case-sensitive
assert s.get_document(welcome["path"]).version == 2
ok("list_folder", "get_document")

bogus_id = uuid4()
fails(s.upload_new_version, bogus_id, "x", exc=DocumentNotFoundError)
assert s.upload_new_version(report["document_id"], "# Q1 summary\n\nRevised.\n").version == 2
ok("list_folder", "upload_new_version")

fails(s.list_versions, bogus_id, exc=DocumentNotFoundError)
assert [v.version for v in s.list_versions(welcome["document_id"])] == [1, 2]
ok("list_folder", "list_versions")

fails(s.create_share_link, bogus_id, exc=DocumentNotFoundError)
assert s.create_share_link(str(welcome["document_id"])).document_id == welcome["document_id"]
ok("list_folder", "create_share_link")

fails(s.move, "/Documents/report.md", new_name="x.md", exc=PathNotFoundError)
assert s.move(report["path"], new_name="q1.md") == PurePosixPath("/Documents/Reports/q1.md")
ok("list_folder", "move")

fails(s.move_to_trash, "/Photos/dog.jpg", exc=PathNotFoundError)
cat = docs(s, "/Photos")[PurePosixPath("/Photos/cat.jpg")]
assert s.move_to_trash(cat["path"]).document_count == 1
ok("list_folder", "move_to_trash")

# --- upload_document as provider ------------------------------------------
s = DocumentStore()
fails(s.get_document, "/Documents/budget.csv", exc=PathNotFoundError)
fails(s.upload_new_version, uuid4(), "a,b\n", exc=DocumentNotFoundError)
fails(s.list_versions, uuid4(), exc=DocumentNotFoundError)
fails(s.create_share_link, uuid4(), exc=DocumentNotFoundError)
fails(s.move, "/Documents/budget.csv", "/Photos", exc=PathNotFoundError)
fails(s.move_to_trash, "/Documents/budget.csv", exc=PathNotFoundError)
b = s.upload_document("/Documents", "budget.csv", "item,amount\n")
assert s.get_document(b.path).text == "item,amount\n"
ok("upload_document", "get_document")
assert s.upload_new_version(b.document_id, "item,amount\nrent,900\n", comment="rent").version == 2
ok("upload_document", "upload_new_version")
assert len(s.list_versions(b.document_id)) == 2
ok("upload_document", "list_versions")
link = s.create_share_link(b.document_id, timedelta(hours=1))
assert link.url.endswith(link.token)
ok("upload_document", "create_share_link")
b2 = s.upload_document("/Documents", "draft.txt", "draft")
assert s.move(b2.path, "/Photos", "draft-moved.txt") == PurePosixPath("/Photos/draft-moved.txt")
ok("upload_document", "move")
assert s.move_to_trash(b.path).original_path == b.path
ok("upload_document", "move_to_trash")

# --- get_document as provider of document ids for known paths -------------
s = DocumentStore()
known = "/Documents/Reports/q1-summary.md"  # from the README
got = s.get_document(known)
fails(s.upload_new_version, known, "x", exc=ValueError)  # a path is not a document id
assert s.upload_new_version(got.document_id, "# Q1\n").version == 2
ok("get_document", "upload_new_version")
fails(s.list_versions, known, exc=ValueError)
assert len(s.list_versions(got.document_id)) == 2
ok("get_document", "list_versions")
fails(s.create_share_link, known, exc=ValueError)
assert s.create_share_link(got.document_id).document_id == got.document_id
ok("get_document", "create_share_link")

# --- versions ---------------------------------------------------------------
s = DocumentStore()
fails(s.get_document, known, version=2, exc=ValueError)
nv = s.upload_new_version(s.get_document(known).document_id, "# Q1 v2\n")
assert s.get_document(known, version=nv.version).text == "# Q1 v2\n"
assert s.get_document(known, version=1).version == 1
ok("upload_new_version", "get_document")

w = s.get_document("/Documents/welcome.txt")
history = s.list_versions(w.document_id)
fails(s.get_document, w.path, version=history[-1].version + 1, exc=ValueError)
for v in history:
    assert s.get_document(w.path, version=v.version).version == v.version
ok("list_versions", "get_document")

# --- move returns the new path ---------------------------------------------
s = DocumentStore()
new = s.move("/Documents/welcome.txt", new_name="hello.txt")
fails(s.get_document, "/Documents/welcome.txt", exc=PathNotFoundError)
assert s.get_document(new).path == new
ok("move", "get_document")
moved_folder = s.move("/Documents/Reports", "/Photos")
fails(s.move_to_trash, "/Documents/Reports", exc=PathNotFoundError)
assert s.get_document(moved_folder / "q1-summary.md").version == 1
assert s.move_to_trash(moved_folder).document_count == 1
ok("move", "move_to_trash")
fails(s.move, "/Photos", "/Photos", exc=InvalidPathError)
fails(s.move, "/", new_name="x", exc=InvalidPathError)

# --- share links ------------------------------------------------------------
now = [datetime(2024, 1, 1, 12, 0, tzinfo=timezone.utc)]
s = DocumentStore(clock=lambda: now[0])
wid = s.get_document("/Documents/welcome.txt").document_id
fails(s.open_share_link, "not-a-token", exc=ShareLinkError)
fails(s.revoke_share_link, "not-a-token", exc=ShareLinkError)
link = s.create_share_link(wid, timedelta(days=1))
shared = s.open_share_link(link.token)
assert shared.name == "welcome.txt" and shared.version == 2
assert not hasattr(shared, "document_id") and not hasattr(shared, "path")
assert s.open_share_link(link.url).content == shared.content
ok("create_share_link", "open_share_link")
now[0] += timedelta(days=2)
fails(s.open_share_link, link.token, exc=ShareLinkExpiredError)
now[0] -= timedelta(days=2)
trashed = s.move_to_trash("/Documents/welcome.txt")
fails(s.open_share_link, link.token, exc=ShareLinkError)
s.restore_from_trash(trashed.trash_id)
assert s.open_share_link(link.token).name == "welcome.txt"
assert s.revoke_share_link(link.token).revoked
fails(s.open_share_link, link.token, exc=ShareLinkError)
fails(s.revoke_share_link, link.token, exc=ShareLinkError)
ok("create_share_link", "revoke_share_link")
fails(s.create_share_link, wid, timedelta(days=31), exc=ValueError)

# --- trash -----------------------------------------------------------------
s = DocumentStore()
fails(s.restore_from_trash, "trash-00000000", exc=KeyError)
seeded = s.list_trash()
assert len(seeded) == 1 and seeded[0].original_path == PurePosixPath("/Documents/old-notes.txt")
fails(s.get_document, "/Documents/old-notes.txt", exc=PathNotFoundError)
restored = s.restore_from_trash(seeded[0].trash_id)
ok("list_trash", "restore_from_trash")
assert s.get_document(restored).text.startswith("scratch notes")
ok("restore_from_trash", "get_document")

item = s.move_to_trash("/Documents")
assert item.document_count == 3
fails(s.list_folder, "/Documents", exc=PathNotFoundError)
fails(s.move, "/Documents/Reports", "/Photos", exc=PathNotFoundError)
back = s.restore_from_trash(item.trash_id)
ok("move_to_trash", "restore_from_trash")
assert len(docs(s, back)) == 3
assert s.move(back / "Reports", "/Photos") == PurePosixPath("/Photos/Reports")
ok("restore_from_trash", "move")
fails(s.restore_from_trash, item.trash_id, exc=KeyError)

# restoring into a removed parent folder fails until it is recreated
t = s.move_to_trash("/Photos/Reports/q1-summary.md")
s.move_to_trash("/Photos")
fails(s.restore_from_trash, t.trash_id, exc=PathNotFoundError)

# --- validation --------------------------------------------------------------
s = DocumentStore()
fails(s.create_folder, "relative/path", exc=InvalidPathError)
fails(s.create_folder, "/a/../b", exc=InvalidPathError)
fails(s.create_folder, "/Documents", exc=PathExistsError)
fails(s.create_folder, "/x/y", exc=PathNotFoundError)
assert s.create_folder("/x/y", parents=True).path == PurePosixPath("/x/y")
fails(s.upload_document, "/Documents", "welcome.txt", "dup", exc=PathExistsError)
fails(s.upload_document, "/Documents", "a/b.txt", "x", exc=InvalidPathError)
fails(s.upload_document, "/Documents/welcome.txt", "x.txt", "x", exc=PathNotFoundError)
wid = s.get_document("/Documents/welcome.txt")
fails(s.upload_new_version, wid.document_id, wid.content, exc=ValueError)
small = DocumentStore(seed_demo=False, max_document_bytes=4)
fails(small.upload_document, "/", "big.bin", b"12345", exc=ValueError)
assert isinstance(PathNotFoundError("x"), DocStoreError)

# --- every listed dependency was exercised -----------------------------------
spec = json.loads((Path(__file__).parent / "DEPENDENCIES.json").read_text())
listed = {(d["provider"], d["consumer"]) for d in spec["dependencies"]}
assert not listed - set(checked), f"not exercised: {listed - set(checked)}"
assert not set(checked) - listed, f"exercised but not listed: {set(checked) - listed}"
ops = {n for n in dir(DocumentStore) if not n.startswith("_") and callable(getattr(DocumentStore, n))}
for d in spec["dependencies"] + spec["not_dependencies"]:
    assert d["provider"] in ops and d["consumer"] in ops, d
print(f"docstore: all {len(listed)} dependencies verified ({len(ops)} operations)")
