"""Toy tool sets for the Python runtime's state handling (written here; no benchmark code).

- :class:`Warehouse`: a database-backed service of a few megabytes (thousands of product records in a dict, an
  order log in a list, a session) whose calls must stay cheap however big the state grows.
- :class:`Folders`: attributes that point into each other (a current folder inside the tree), which a
  per-attribute snapshot must not tear apart.
- :class:`Ledger`: big dict and list attributes written in every way a tool writes them (nested writes, inserts,
  deletions that shift entries, moves, sharing, unwatchable values, ``heapq`` from C, rebinding).
"""

from __future__ import annotations

import heapq
import random
import uuid

_WORDS = ("red", "blue", "steel", "oak", "large", "small", "quiet", "fast", "solid", "light", "dark", "round")
_TAGS = ("garden", "kitchen", "office", "outdoor", "tools", "toys")


class Warehouse:
    """A store with thousands of products; ordering needs a signed-in session."""

    def __init__(self, n_products: int = 6000) -> None:
        rng = random.Random(1)
        self.products: dict[str, dict] = {
            f"P{i:05d}": {
                "id": f"P{i:05d}",
                "name": f"product {i}",
                "description": " ".join(rng.choice(_WORDS) for _ in range(60)),
                "price": round(rng.uniform(1, 500), 2),
                "stock": rng.randint(0, 100),
                "tags": [rng.choice(_TAGS) for _ in range(3)],
            }
            for i in range(n_products)
        }
        self.orders: list[dict] = [
            {"order_id": f"seed-{i}", "product_id": f"P{i:05d}", "quantity": 1} for i in range(1200)
        ]
        self.session: str | None = None

    def sign_in(self, user: str) -> dict:
        """Open a session for a user."""
        self.session = user
        return {"user": user}

    def get_product(self, product_id: str) -> dict:
        """One product record by id."""
        if product_id not in self.products:
            return {"error": f"no product {product_id}"}
        return self.products[product_id]

    def order(self, product_id: str, quantity: int = 1) -> dict:
        """Order a product: takes it from stock and logs the order (needs a session)."""
        if self.session is None:
            return {"error": "sign in first"}
        product = self.products.get(product_id)
        if product is None or product["stock"] < quantity:
            return {"error": "not available"}
        product["stock"] -= quantity
        order_id = str(uuid.uuid4())
        self.orders.append({"order_id": order_id, "product_id": product_id, "quantity": quantity})
        return {"order_id": order_id}

    def discontinue(self, product_id: str) -> dict:
        """Remove a product from the catalog."""
        if self.products.pop(product_id, None) is None:
            return {"error": f"no product {product_id}"}
        return {"removed": product_id}


class _Folder:
    def __init__(self, name: str) -> None:
        self.name = name
        self.files: dict[str, str] = {}
        self.children: dict[str, "_Folder"] = {}


class Folders:
    """A folder tree with a current folder that points into it."""

    def __init__(self) -> None:
        self.root = _Folder("/")
        self.here = self.root
        self.history: list[str] = []

    def make(self, name: str) -> dict:
        """Create a sub-folder of the current folder."""
        self.here.children[name] = _Folder(name)
        return {"made": name}

    def enter(self, name: str) -> dict:
        """Move into a sub-folder of the current folder."""
        if name not in self.here.children:
            return {"error": f"no folder {name}"}
        self.here = self.here.children[name]
        self.history.append(name)
        return {"here": name}

    def write(self, file_name: str, text: str) -> dict:
        """Write a file in the current folder."""
        self.here.files[file_name] = text
        return {"written": file_name}

    def tree(self) -> dict:
        """Every file under the root, by path."""
        out: dict[str, str] = {}

        def walk(folder: _Folder, prefix: str) -> None:
            for k, v in folder.files.items():
                out[prefix + k] = v
            for k, child in folder.children.items():
                walk(child, prefix + k + "/")

        walk(self.root, "/")
        return out


class Ledger:
    """Accounts (a big dict of records with nested lists) and a job queue kept as a heap (a big list): every way
    a tool writes such state, for the write watch of big attributes (``libra.runtime.python.watch``) to see."""

    def __init__(self, n_accounts: int = 700, n_jobs: int = 600) -> None:
        self.accounts: dict[str, dict] = {
            f"A{i:04d}": {"id": f"A{i:04d}", "balance": i % 50, "history": [i % 7, i % 11], "meta": {"kind": "basic"}}
            for i in range(n_accounts)
        }
        self.queue: list[tuple[int, int]] = [(i % 97, i) for i in range(n_jobs)]
        heapq.heapify(self.queue)
        self.next_id = n_accounts

    def balance(self, account: str) -> int:
        """Read one balance."""
        return self.accounts[account]["balance"]

    def deposit(self, account: str, amount: int) -> int:
        """Write inside a record and append to its nested history."""
        record = self.accounts[account]
        record["balance"] += amount
        record["history"].append(amount)
        return record["balance"]

    def note(self, account: str, value: int) -> None:
        """Write only a nested list."""
        self.accounts[account]["history"].append(value)

    def open_account(self) -> str:
        """Insert a record at the end of the dict."""
        key = f"A{self.next_id:04d}"
        self.next_id += 1
        self.accounts[key] = {"id": key, "balance": 0, "history": [], "meta": {"kind": "new"}}
        return key

    def close_account(self, account: str) -> dict:
        """Delete a record: every later record moves to an earlier position."""
        return self.accounts.pop(account)

    def move_to_end(self, account: str) -> None:
        """Re-insert a record: its position changes, its content does not."""
        self.accounts[account] = self.accounts.pop(account)

    def share_history(self, account: str, other: str) -> None:
        """Make two records share one history list (objects shared across the attribute)."""
        self.accounts[account]["history"] = self.accounts[other]["history"]

    def tag(self, account: str, label: str) -> None:
        """Store a set in a record: a value whose writes cannot be watched."""
        self.accounts[account]["tags"] = {label}

    def sort_history(self, account: str) -> list:
        """Reorder a nested list in place."""
        self.accounts[account]["history"].sort(reverse=True)
        return self.accounts[account]["history"]

    def push_job(self, priority: int) -> None:
        """heapq writes the list from C, without calling its methods."""
        heapq.heappush(self.queue, (priority, self.next_id))
        self.next_id += 1

    def replace_job(self, priority: int) -> tuple:
        """Same length, new first item, sifted: written from C as well."""
        return heapq.heapreplace(self.queue, (priority, self.next_id))

    def rebuild_queue(self) -> int:
        """Rebind the attribute to a new list."""
        self.queue = sorted(self.queue)
        return len(self.queue)

    def total(self) -> int:
        """Read everything."""
        return sum(r["balance"] for r in self.accounts.values())
