"""A small stateful app for induction tests: sign up -> log in -> add an item -> read it, plus plain arithmetic.

Nothing in it is known to the engine: contracts come from the offline proposer, relations from execution.
"""

from __future__ import annotations

import sys
import time
from typing import Annotated, Any

from libra.benchmarks.base import Benchmark
from libra.catalog import Catalog
from libra.runtime.base import State


class Counted:
    """A real runtime whose invocations are counted (what the runtime actually ran, memo hits excluded)."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.invoked = 0

    def fresh(self) -> State:
        return self.runtime.fresh()

    def invoke(self, state: State, tool: str, args: dict[str, Any]):
        self.invoked += 1
        return self.runtime.invoke(state, tool, args)

    def close(self) -> None:
        self.runtime.close()


class Shop:
    """A shop whose items can only be added by a signed-in account."""

    def __init__(self) -> None:
        self.accounts: dict[str, str] = {}
        self.session: str | None = None
        self.items: dict[int, str] = {}
        self.delay = 0.0

    def signup(self, new_username: str, new_password: str) -> dict:
        """Create a new account with a newly chosen username and password."""
        time.sleep(self.delay)
        if new_username in self.accounts:
            return {"error": "username taken"}
        self.accounts[new_username] = new_password
        return {"created": True}

    def login(self, username: str, password: str) -> dict:
        """Sign in to an existing account.

        Args:
            username: The username of the existing account.
            password: The password of the existing account.
        """
        time.sleep(self.delay)
        if self.accounts.get(username) != password:
            return {"error": "invalid credentials"}
        self.session = f"token-{username}"
        return {"access_token": self.session}

    def add_item(self, access_token: str, title: str) -> dict:
        """Add an item to the shop.

        Args:
            access_token: The access token of the signed-in account.
            title: Title of the new item.
        """
        time.sleep(self.delay)
        if self.session is None or access_token != self.session:
            return {"error": "not signed in"}
        item_id = 100 + len(self.items)
        self.items[item_id] = title
        return {"item_id": item_id}

    def get_item(self, item_id: int) -> dict:
        """Show an existing item.

        Args:
            item_id: The id of the existing item to show.
        """
        time.sleep(self.delay)
        if item_id not in self.items:
            return {"error": "no such item"}
        return {"title": self.items[item_id]}

    def add(self, a: float, b: float) -> dict:
        """Add two numbers.

        Args:
            a: First number.
            b: Second number.
        """
        return {"result": a + b}

    def square_root(self, number: float) -> dict:
        """Square root of a number.

        Args:
            number: The number to take the square root of.
        """
        if number < 0:
            return {"error": "negative"}
        return {"result": number**0.5}


class _Vault:
    """One of several look-alike services: each accepts only the signed token it issues itself.

    Tokens are stateless (nothing is stored), so no state sweep finds the relation: only a value offer can.
    """

    def open_session(self) -> dict:
        """Open a session with this vault."""
        return {"access_token": f"session-{type(self).__name__}"}

    def read_secret(self, access_token: str) -> dict:
        """Read the vault's secret.

        Args:
            access_token: The access token of an open session.
        """
        if access_token != f"session-{type(self).__name__}":
            return {"error": "invalid session"}
        return {"secret": f"secret of {type(self).__name__}"}


class VaultA(_Vault):
    pass


class VaultB(_Vault):
    pass


class VaultC(_Vault):
    pass


class VaultD(_Vault):
    pass


class VaultE(_Vault):
    pass


class VaultF(_Vault):
    pass


VAULTS = [VaultA, VaultB, VaultC, VaultD, VaultE, VaultF]


class Keychain:
    """Lists one session per vault, each element labelled with the vault it opens."""

    def list_sessions(self) -> dict:
        """List the stored sessions of every vault."""
        return {"sessions": [{"vault": v.__name__, "access_token": f"session-{v.__name__}"} for v in VAULTS]}


class ClassesBenchmark(Benchmark):
    """Toy classes as a catalog with an in-process runtime."""

    def __init__(self, *classes: type) -> None:
        self.classes = list(classes)
        self.name = "-".join(c.__name__.lower() for c in classes)

    def catalog(self) -> Catalog:
        rt = self.runtime()
        cat = rt.catalog
        rt.close()
        return cat

    def tasks(self):
        return []

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw: Any):
        from libra.runtime.python.runtime import PythonRuntime

        return PythonRuntime(classes=self.classes, trusted=True, name=self.name)


class VaultsBenchmark(ClassesBenchmark):
    """Six services in six groups: the catalog where cross-group offers outnumber the useful ones."""

    def __init__(self, keychain: bool = False) -> None:
        super().__init__(*VAULTS, *([Keychain] if keychain else []))
        self.name = "vaults"


def make_shop_runtime(delay: float = 0.0):
    from libra.runtime.python.runtime import PythonRuntime

    def load(inst: Any, config: Any) -> None:
        inst.delay = delay

    return PythonRuntime(classes=[Shop], trusted=True, name="shop", load=load)


class ShopBenchmark(Benchmark):
    """The toy as a benchmark, so ``build_library`` can drive it like a real catalog."""

    name = "shop"

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self._catalog: Catalog | None = None

    def catalog(self) -> Catalog:
        if self._catalog is None:
            rt = make_shop_runtime(self.delay)
            self._catalog = rt.catalog
            rt.close()
        return self._catalog

    def tasks(self):
        return []

    def runtime(self, isolated: bool | None = None, n_workers: int = 1, **kw: Any):
        if not isolated:
            return make_shop_runtime(self.delay)
        import functools

        from libra.runtime.workers.isolation import IsolatedRuntime

        return IsolatedRuntime(functools.partial(make_shop_runtime, self.delay), n_workers=n_workers, **kw)


class SplitShopBenchmark(ShopBenchmark):
    """The shop with its tools in three groups (accounts, items, math), so the sign-in that enables adding an
    item is a state dependency across groups."""

    name = "split-shop"
    GROUPS = {"signup": "accounts", "login": "accounts", "add_item": "items", "get_item": "items"}

    def catalog(self) -> Catalog:
        import dataclasses

        base = super().catalog()
        return Catalog(
            [dataclasses.replace(t, group=self.GROUPS.get(t.short_name, "math")) for t in base], name="split-shop"
        )


class Portal:
    """A sign-in whose user name the operator knows, and which a profile read also reveals. Subscribing changes
    the state, so the sign-in is tried again there (a state sweep) once the profile has been read."""

    def __init__(self) -> None:
        self.signed_in = 0
        self.subscribers = 0

    def subscribe(self) -> dict:
        """Subscribe to the newsletter."""
        self.subscribers += 1
        return {"subscribed": True}

    def show_profile(self) -> dict:
        """Show the account holder's profile."""
        return {"email": "op@example.org"}

    def greeting(self) -> dict:
        """The greeting shown to visitors."""
        return {"username_hint": "guest"}

    def login(self, username: str) -> dict:
        """Sign in.

        Args:
            username: Your account email.
        """
        if username != "op@example.org":
            return {"error": "unknown account"}
        self.signed_in += 1
        return {"signed_in": self.signed_in}


class PortalBenchmark(ClassesBenchmark):
    """The operator knows the account's e-mail, as AppWorld's adapter knows its supervisor's."""

    def __init__(self) -> None:
        super().__init__(Portal)

    def fixtures(self) -> dict[str, Any]:
        return {"email": "op@example.org"}


class Shell:
    """A working directory over a fixed tree: a file inside a folder is readable only after changing into it."""

    TREE = {"": ["top.txt", "docs"], "docs": ["inner.txt"]}

    def __init__(self) -> None:
        self.cwd = ""

    def change_directory(self, folder: str) -> dict:
        """Change the current working directory to an existing folder.

        Args:
            folder: Name of an existing folder inside the current directory.
        """
        if folder not in self.TREE or folder not in self.TREE[self.cwd]:
            return {"error": "no such folder"}
        self.cwd = folder
        return {"current_directory": folder}

    def list_files(self) -> dict:
        """List the names in the current directory."""
        return {"names": list(self.TREE[self.cwd])}

    def read_file(self, file_name: str) -> dict:
        """Read a file of the current directory.

        Args:
            file_name: Name of an existing file in the current directory.
        """
        if file_name not in self.TREE[self.cwd] or file_name in self.TREE:
            return {"error": "no such file"}
        return {"content": f"contents of {file_name}"}


class Records:
    """Two kinds of small integer ids: only an item id opens an item, though a review id looks the same."""

    def list_reviews(self) -> dict:
        """List the reviews written so far."""
        return {"reviews": [{"review_id": 7}]}

    def list_items(self) -> dict:
        """List the items on sale."""
        return {"items": [{"item_id": 3}]}

    def show_item(self, item_id: int) -> dict:
        """Show an existing item.

        Args:
            item_id: The id of an existing item.
        """
        if item_id != 3:
            return {"error": "no such item"}
        return {"name": "lamp"}


class Mailbox:
    """Plain-text notes whose names sound like the input, and one list that really holds addresses."""

    def email_status(self) -> dict:
        """Report how the mailbox is doing."""
        return {"email_status": "All quiet."}

    def email_subject(self) -> dict:
        """The subject line of the newest mail."""
        return {"email_subject": "Lunch on Friday"}

    def email_greeting(self) -> dict:
        """The greeting used in new mails."""
        return {"email_greeting": "Hi there"}

    def list_contacts(self) -> dict:
        """List the saved contacts."""
        return {"contacts": [{"address": "ana@example.org"}]}

    def invite(self, email: Annotated[str, {"format": "email"}]) -> dict:
        """Invite a saved contact.

        Args:
            email: The email address of a saved contact.
        """
        if email != "ana@example.org":
            return {"error": "not a saved contact"}
        return {"invited": True}


def _stepper(step: int, words: str):
    def method(self: Any, entry_id: int) -> dict:
        return {"entry_id": entry_id + step}

    method.__doc__ = f"""The entry {words} after an existing entry.

    Args:
        entry_id: The id of an existing entry.
    """
    return method


class Ledger:
    """Entries numbered without end: every step names a new entry, so offers never run out."""

    def first_entry(self) -> dict:
        """The id of the first entry."""
        return {"entry_id": 1}

    next_entry = _stepper(1, "just")
    skip_entries = _stepper(10, "ten")
    jump_entries = _stepper(100, "a hundred")
    leap_entries = _stepper(1000, "a thousand")


def kill_after_checkpoint(proc: Any, ckpt: Any, wait_s: float = 180.0) -> None:
    """Wait until the build ``proc`` wrote its checkpoint ``ckpt`` and let it run a moment more, then SIGKILL it
    (what the resume tests interrupt: a build that dies with no chance to clean up)."""
    import signal

    deadline = time.monotonic() + wait_s
    while not ckpt.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ckpt.exists(), "the build wrote no checkpoint before finishing"
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)


def main(argv: list[str]) -> None:
    """``python -m tests.induction_toys OUT DELAY [EXECUTOR WORKERS]``: build the toy library (used by the resume
    tests; in-process unless an executor and a number of workers are given)."""
    from libra.induction.build import BuildOptions, build_library
    from libra.induction.config import BuildConfig

    out, delay = argv[0], float(argv[1])
    executor, workers = (argv[2], int(argv[3])) if len(argv) > 3 else ("local", 0)
    cfg = BuildConfig(batch_size=4, checkpoint_every_s=0.0)
    # the module by its import name, not __main__: a Ray actor must find the runtime factory by reference
    from tests.induction_toys import ShopBenchmark as Shop

    build_library(
        Shop(delay),
        out,
        BuildOptions(workers=workers, executor=executor, embedder="minilm", config=cfg, progress=False),
    )


if __name__ == "__main__":
    main(sys.argv[1:])
