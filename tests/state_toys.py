"""Toy tool sets for the Python runtime's state handling (written here; no benchmark code).

- :class:`Warehouse`: a database-backed service of a few megabytes (thousands of product records in a dict, an
  order log in a list, a session) whose calls must stay cheap (issue 18, defect 14).
- :class:`Folders`: attributes that point into each other (a current folder inside the tree), which a
  per-attribute snapshot must not tear apart.
"""

from __future__ import annotations

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
        self.orders: list[dict] = [{"order_id": f"seed-{i}", "product_id": f"P{i:05d}", "quantity": 1} for i in range(1200)]
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
