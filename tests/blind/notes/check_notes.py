"""Exercise notes.py and show that each dependency in DEPENDENCIES.json is real.

Run: /work/blind/.venv/bin/python check_notes.py
"""

import importlib
import json
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import notes  # noqa: E402


def fresh():
    """Reload the module to get the fresh state."""
    global notes
    notes = importlib.reload(notes)
    return notes


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc as e:  # noqa: BLE001
        return e
    raise AssertionError(f"{fn.__name__} unexpectedly succeeded")


checked = set()


def mark(provider, consumer):
    checked.add((provider, consumer))


# ---- login -> every token consumer ---------------------------------------
def token_call(name, token):
    m = notes
    if name == "logout":
        return m.logout(token)
    if name == "create_note":
        return m.create_note(token, "t", "b")
    if name == "get_note":
        nid = m.list_notes(m.login("demo", "demo-password")["token"])[0]["id"]
        return m.get_note(token, nid)
    if name == "update_note":
        nid = m.list_notes(m.login("demo", "demo-password")["token"])[0]["id"]
        return m.update_note(token, nid, title="x")
    if name == "delete_note":
        t = m.login("demo", "demo-password")["token"]
        nid = m.create_note(t, "to delete")["id"]
        return m.delete_note(token, nid)
    if name == "list_notes":
        return m.list_notes(token)
    if name == "search_notes":
        return m.search_notes(token, "welcome")
    if name == "share_note":
        try:
            m.register("bob_check", "bobpassword")
        except ValueError:
            pass
        nid = m.list_notes(m.login("demo", "demo-password")["token"])[0]["id"]
        return m.share_note(token, nid, "bob_check")
    if name == "list_shared_notes":
        return m.list_shared_notes(token)
    raise ValueError(name)


for consumer in ["logout", "create_note", "get_note", "update_note", "delete_note",
                 "list_notes", "search_notes", "share_note", "list_shared_notes"]:
    fresh()
    fails(token_call, consumer, "not-a-token", exc=notes.AuthenticationError)
    fails(token_call, consumer, "", exc=notes.AuthenticationError)
    token = notes.login("demo", "demo-password")["token"]
    token_call(consumer, token)
    mark("login", consumer)


# ---- note id providers -> note id consumers ------------------------------
def provide_note_id(provider, token):
    if provider == "create_note":
        return notes.create_note(token, "Budget plan", "quarterly zebra numbers", tags=["work"])["id"]
    if provider == "list_notes":
        return notes.list_notes(token, tag="errands")[0]["id"]
    if provider == "search_notes":
        return notes.search_notes(token, "welcome")[0]["id"]
    raise ValueError(provider)


def consume_note_id(consumer, token, note_id):
    if consumer == "get_note":
        return notes.get_note(token, note_id)
    if consumer == "update_note":
        return notes.update_note(token, note_id, tags=["changed"])
    if consumer == "delete_note":
        return notes.delete_note(token, note_id)
    if consumer == "share_note":
        return notes.share_note(token, note_id, "carol_check")
    raise ValueError(consumer)


for provider in ["create_note", "list_notes", "search_notes"]:
    for consumer in ["get_note", "update_note", "delete_note", "share_note"]:
        fresh()
        notes.register("carol_check", "carolpassword")
        token = notes.login("demo", "demo-password")["token"]
        fails(consume_note_id, consumer, token, "00000000-0000-0000-0000-000000000000",
              exc=notes.NoteNotFoundError)
        nid = provide_note_id(provider, token)
        consume_note_id(consumer, token, nid)
        mark(provider, consumer)

# ---- list_shared_notes -> get_note ----------------------------------------
fresh()
notes.register("dave_check", "davepassword")
demo = notes.login("demo", "demo-password")["token"]
dave = notes.login("dave_check", "davepassword")["token"]
fails(notes.get_note, dave, "missing-id", exc=notes.NoteNotFoundError)
assert notes.list_shared_notes(dave) == []
nid = notes.list_notes(demo)[0]["id"]
notes.share_note(demo, nid, "dave_check")
shared_id = notes.list_shared_notes(dave)[0]["id"]
assert notes.get_note(dave, shared_id)["id"] == nid
mark("list_shared_notes", "get_note")

# ---- register -> share_note (state) ---------------------------------------
fresh()
demo = notes.login("demo", "demo-password")["token"]
nid = notes.list_notes(demo)[0]["id"]
fails(notes.share_note, demo, nid, "erin_check", exc=KeyError)
fails(notes.share_note, demo, nid, "demo", exc=ValueError)  # only user in fresh state
notes.register("erin_check", "erinpassword")
notes.share_note(demo, nid, "erin_check")
mark("register", "share_note")

# ---- share_note -> get_note (state) ---------------------------------------
fresh()
notes.register("frank_check", "frankpassword")
demo = notes.login("demo", "demo-password")["token"]
frank = notes.login("frank_check", "frankpassword")["token"]
nid = notes.list_notes(demo)[0]["id"]
fails(notes.get_note, frank, nid, exc=PermissionError)
notes.share_note(demo, nid, "frank_check")
assert notes.get_note(frank, nid)["title"]
fails(notes.update_note, frank, nid, title="nope", exc=PermissionError)  # read-only share
mark("share_note", "get_note")

# ---- a few not_dependencies -----------------------------------------------
fresh()
notes.register("gina_check", "ginapassword")
demo = notes.login("demo", "demo-password")["token"]
gina = notes.login("gina_check", "ginapassword")["token"]
nid = notes.list_notes(demo)[0]["id"]
notes.share_note(demo, nid, "gina_check", can_edit=True)
sid = notes.list_shared_notes(gina)[0]["id"]
fails(notes.delete_note, gina, sid, exc=PermissionError)
fails(notes.share_note, gina, sid, "demo", exc=PermissionError)
notes.update_note(gina, sid, body="edited by gina")  # can_edit share
reg = notes.register("hank_check", "hankpassword")
fails(notes.create_note, reg["user_id"], "x", exc=notes.AuthenticationError)

# ---- validation sanity ------------------------------------------------------
fails(notes.register, "Bad Name", "password123", exc=ValueError)
fails(notes.register, "demo", "password123", exc=ValueError)
fails(notes.login, "demo", "wrong", exc=notes.AuthenticationError)
fails(notes.create_note, demo, "   ", exc=ValueError)
fails(notes.create_note, demo, "ok", tags=["bad tag!"], exc=ValueError)
fails(notes.search_notes, demo, "  ", exc=ValueError)
assert notes.search_notes(demo, "#errands")
notes.logout(demo)
fails(notes.list_notes, demo, exc=notes.AuthenticationError)

# ---- every listed dependency was exercised ---------------------------------
spec = json.loads((HERE / "DEPENDENCIES.json").read_text())
listed = {(d["provider"], d["consumer"]) for d in spec["dependencies"]}
missing = listed - checked
extra = checked - listed
assert not missing, f"unchecked dependencies: {missing}"
assert not extra, f"checked but not listed: {extra}"
print(f"OK: {len(checked)} dependencies verified")
