"""A small message board: sign in for an API key, write posts, react to them. Module functions over module globals.

Its tools refuse the way hand-written services do, and the refusals that matter are met only after a precondition,
so contract checking (which calls from the starting state) never sees them, and a write returns a plain dict whose
fields no signature declares. What it exercises (engine rules,
generic):

- a write behind a sign-in: its key is the one a sign-in returned (its refusal, "Invalid API key. Call `sign_in` to
  obtain one.", names the tool; :mod:`tests.blind`'s bugtracker is where that refusal is all there is to go by);
- a refusal that quotes an invented value and says nothing has that name ("No post with id 'sample'") makes the
  input an observed one as well;
- a refusal of a literal's form met only once the call's other inputs are right ("'sample' is not a valid
  reaction, e.g. 'like' or 'laugh'": reacting needs an existing post first) repairs that literal, and the call is
  made again;
- the first reply of a tool that never succeeded in checking, and declares no fields, is read for its fields: the
  post id a write returns is what reacting and reading take.
"""

from __future__ import annotations

_MEMBERS = {"ana": "2468", "raj": "1357"}
_TICKETS: set[str] = set()  # the API keys handed out
_POSTS: dict[str, dict] = {
    "p1": {"post_id": "p1", "author": "ana", "text": "Welcome to the board!", "reactions": {}},
}
_NEXT = 2
_REACTIONS = ("like", "laugh", "wow")


def sign_in(member: str, pin: str) -> dict:
    """Sign in to the board.

    Args:
        member: Your member handle, e.g. 'ana'.
        pin: Your PIN, e.g. '2468'.

    Returns:
        The API key that lets you write, and your handle.
    """
    if _MEMBERS.get(member) != pin:
        raise PermissionError("Wrong member or PIN.")
    api_key = f"ak{len(_TICKETS) + 1:04d}{member}"
    _TICKETS.add(api_key)
    return {"api_key": api_key, "member": member}


def write_post(api_key: str, text: str) -> dict:
    """Write a post.

    Args:
        api_key: Your API key.
        text: What to say.
    """
    global _NEXT
    if api_key not in _TICKETS:
        raise PermissionError("Invalid API key. Call `sign_in` to obtain one.")
    if not text.strip():
        raise ValueError("A post needs some text.")
    post_id = f"p{_NEXT}"
    _NEXT += 1
    _POSTS[post_id] = {"post_id": post_id, "author": api_key[6:], "text": text, "reactions": {}}
    return {"post_id": post_id, "text": text}


def react(post_id: str, reaction: str) -> dict:
    """React to a post.

    Args:
        post_id: The post.
        reaction: Your reaction.
    """
    post = _POSTS.get(post_id)
    if post is None:
        raise KeyError(f"No post with id '{post_id}'.")
    if reaction not in _REACTIONS:
        raise ValueError(f"'{reaction}' is not a valid reaction, e.g. 'like' or 'laugh'.")
    post["reactions"][reaction] = post["reactions"].get(reaction, 0) + 1
    return {"post_id": post_id, "reactions": dict(post["reactions"])}


def read_post(post_id: str) -> dict:
    """Read a post with its reactions.

    Args:
        post_id: The post.
    """
    post = _POSTS.get(post_id)
    if post is None:
        raise KeyError(f"No post with id '{post_id}'.")
    return {"author": post["author"], "text": post["text"], "reactions": dict(post["reactions"])}


DESIGNED = [
    ("board.sign_in", "board.write_post", "provenance", "api_key", "api_key"),
    ("board.write_post", "board.react", "provenance", "post_id", "post_id"),
    ("board.write_post", "board.read_post", "provenance", "post_id", "post_id"),
]

EXCLUDED = [
    ("board.sign_in", "board.react", None, None, None),
    ("board.sign_in", "board.read_post", None, None, None),
    ("board.react", "board.write_post", None, None, None),
]
