"""A customer-support back office over an orders database of a few megabytes.

The database is generated deterministically (5,000 customers, 15,000 orders with their lines, about 3.5 MB pickled) and
held by one
``OrderDesk`` instance. An agent must verify a customer (id and zip code) before reading or changing their orders.
Like many real services, this one reports refusals as data inside a normal reply: a list holding an error string,
a list holding an error object, a ``{"verified": False}`` flag, a ``"Database error: ..."`` string.

Designed relations:

- ``find_customers -> verify_customer``: the customer's id and zip code (a well-formed id or zip of
  someone else is refused).
- ``verify_customer`` enables ``list_orders``, ``place_order`` and ``cancel_order`` (state).
- ``list_orders -> get_order`` and ``list_orders -> cancel_order``: an order id.
- ``place_order -> get_order`` and ``place_order -> cancel_order``: the new order's id.
"""

from __future__ import annotations

import random
from typing import TypedDict

PRODUCTS = [
    "desk lamp",
    "office chair",
    "standing desk",
    "monitor arm",
    "usb-c hub",
    "mechanical keyboard",
    "wireless mouse",
    "webcam",
    "headset",
    "notebook",
    "fountain pen",
    "backpack",
    "water bottle",
    "phone stand",
    "cable organizer",
]
CITIES = [("Lyon", "69"), ("Austin", "78"), ("Leeds", "LS"), ("Porto", "40"), ("Kyoto", "60"), ("Dublin", "D0")]
FIRST = ["Ana", "Ben", "Chloe", "Dmitri", "Emeka", "Fatima", "Giulia", "Hana", "Ivan", "Jonas", "Keiko", "Liam"]
LAST = ["Martin", "Okafor", "Silva", "Novak", "Berg", "Haddad", "Rossi", "Tanaka", "Walsh", "Kowalski", "Moreau"]
CANCEL_REASONS = ("no longer needed", "ordered by mistake")


class OrderLine(TypedDict):
    """One line of an order."""

    product: str
    quantity: int


def _generate(seed: int = 2024, n_customers: int = 5000, n_orders: int = 15000) -> tuple[dict, dict]:
    rng = random.Random(seed)
    customers: dict[str, dict] = {}
    for i in range(n_customers):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        city, prefix = rng.choice(CITIES)
        cid = f"C{100000 + i}"
        customers[cid] = {
            "customer_id": cid,
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}{i}@example.net",
            "address1": f"{rng.randint(1, 300)} {rng.choice(['High', 'Mill', 'Park', 'Station'])} Street",
            "city": city,
            "zip_code": f"{prefix}{rng.randint(100, 999)}",
            "notes": " ".join(rng.choice(PRODUCTS) for _ in range(20)),
        }
    orders: dict[str, dict] = {}
    ids = list(customers)
    for j in range(n_orders):
        oid = f"#W{7000000 + j * 37}"
        lines = [
            {"product": rng.choice(PRODUCTS), "quantity": rng.randint(1, 4), "unit_price": rng.randint(5, 400)}
            for _ in range(rng.randint(1, 5))
        ]
        orders[oid] = {
            "order_id": oid,
            "customer_id": rng.choice(ids),
            "status": rng.choice(["pending", "pending", "delivered"]),
            "lines": lines,
        }
    return customers, orders


class OrderDesk:
    """The support desk's view of the orders database (customers, orders, order lines)."""

    def __init__(self) -> None:
        self.customers, self.orders = _generate()
        self.verified_customer: str | None = None
        self.next_order = 9000000

    def _verified(self, customer_id: str) -> bool:
        return self.verified_customer is not None and self.verified_customer == customer_id

    def find_customers(self, name: str | None = None, email: str | None = None, city: str | None = None) -> list[dict]:
        """Look customers up by name, email or city (any combination). At most 20 customers are returned.

        Args:
            name: Part of the customer's name, case-insensitive.
            email: The customer's email address.
            city: The city of the customer's address.

        Returns:
            The matching customers with their id, name, email and address.
        """
        found = []
        for c in self.customers.values():
            if name is not None and name.lower() not in c["name"].lower():
                continue
            if email is not None and email.lower() != c["email"]:
                continue
            if city is not None and city.lower() != c["city"].lower():
                continue
            found.append({k: c[k] for k in ("customer_id", "name", "email", "address1", "city", "zip_code")})
            if len(found) == 20:
                break
        return found

    def verify_customer(self, customer_id: str, zip_code: str) -> dict:
        """Verify the identity of the customer on the line before touching their orders.

        Args:
            customer_id: The customer's id.
            zip_code: The zip code of the customer's address, as the customer states it.

        Returns:
            Whether the customer is verified.
        """
        c = self.customers.get(customer_id)
        if c is None or c["zip_code"] != zip_code.strip().upper():
            return {"verified": False, "reason": "customer id and zip code do not match"}
        self.verified_customer = customer_id
        return {"verified": True, "customer_id": customer_id}

    def list_orders(self, customer_id: str) -> list:
        """List a verified customer's orders.

        Args:
            customer_id: The customer's id.

        Returns:
            The customer's orders with their id and status.
        """
        if not self._verified(customer_id):
            return ["Error: customer not verified. Please verify the customer before listing orders."]
        return [
            {"order_id": o["order_id"], "status": o["status"]}
            for o in self.orders.values()
            if o["customer_id"] == customer_id
        ]

    def get_order(self, order_id: str) -> list[dict]:
        """Show the lines of an order of the verified customer.

        Args:
            order_id: The order's id, e.g. #W7000037.

        Returns:
            The order's lines (product, quantity, unit price).
        """
        o = self.orders.get(order_id)
        if o is None or not self._verified(o["customer_id"]):
            return [{"error": f"order {order_id} not found for the verified customer"}]
        return [dict(line, order_id=order_id, status=o["status"]) for line in o["lines"]]

    def place_order(self, customer_id: str, items: list[OrderLine]) -> dict:
        """Place a new order for a verified customer.

        Args:
            customer_id: The customer's id.
            items: The products and quantities to order.

        Returns:
            The new order's id.
        """
        if not self._verified(customer_id):
            return {"error": "customer not verified"}
        if not items:
            raise ValueError("an order needs at least one item")
        lines = []
        for item in items:
            product, quantity = item.get("product"), item.get("quantity")
            if not isinstance(product, str) or not product.strip():
                raise ValueError("each item needs a product name")
            if not isinstance(quantity, int) or not 1 <= quantity <= 10:
                raise ValueError("each item's quantity must be a whole number from 1 to 10")
            lines.append({"product": product, "quantity": quantity, "unit_price": 25})
        oid = f"#W{self.next_order}"
        self.next_order += 1
        self.orders[oid] = {"order_id": oid, "customer_id": customer_id, "status": "pending", "lines": lines}
        return {"order_id": oid, "status": "pending"}

    def cancel_order(self, order_id: str, reason: str) -> str:
        """Cancel a pending order of the verified customer.

        Args:
            order_id: The order's id.
            reason: Why the order is cancelled: either 'no longer needed' or 'ordered by mistake'.

        Returns:
            A confirmation.
        """
        if reason not in CANCEL_REASONS:
            raise ValueError("reason must be 'no longer needed' or 'ordered by mistake'")
        o = self.orders.get(order_id)
        if o is None or not self._verified(o["customer_id"]):
            return f"Database error: no order {order_id} for the verified customer"
        if o["status"] != "pending":
            return f"Database error: order {order_id} is {o['status']} and cannot be cancelled"
        o["status"] = "cancelled"
        return f"Order {order_id} cancelled ({reason})"

    def update_address(self, customer_id: str, address1: str, city: str, zip_code: str) -> dict:
        """Change the address of the verified customer.

        Args:
            customer_id: The customer's id.
            address1: Street and number.
            city: City name.
            zip_code: Zip code.

        Returns:
            The updated address.
        """
        if not self._verified(customer_id):
            return {"error": "customer not verified"}
        c = self.customers[customer_id]
        c.update(address1=address1, city=city, zip_code=zip_code.strip().upper())
        return {"customer_id": customer_id, "address1": address1, "city": city, "zip_code": c["zip_code"]}


CLASSES = [OrderDesk]

# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("OrderDesk.find_customers", "OrderDesk.verify_customer", VALUE, "customer_id", "customer_id"),
    ("OrderDesk.find_customers", "OrderDesk.verify_customer", VALUE, "zip_code", "zip_code"),
    ("OrderDesk.verify_customer", "OrderDesk.list_orders", "state", None, None),
    ("OrderDesk.verify_customer", "OrderDesk.place_order", "state", None, None),
    ("OrderDesk.verify_customer", "OrderDesk.cancel_order", "state", None, None),
    ("OrderDesk.list_orders", "OrderDesk.get_order", VALUE, "order_id", "order_id"),
    ("OrderDesk.list_orders", "OrderDesk.cancel_order", VALUE, "order_id", "order_id"),
    ("OrderDesk.place_order", "OrderDesk.get_order", VALUE, "order_id", "order_id"),
    ("OrderDesk.place_order", "OrderDesk.cancel_order", VALUE, "order_id", "order_id"),
]

EXCLUDED = [
    # Free-text fields that coincide only when one literal fills them all.
    (None, None, None, "address1", "zip_code"),
    (None, None, None, "city", "zip_code"),
    (None, None, None, "name", "customer_id"),
    (None, None, None, "address1", "customer_id"),
    # get_order and cancel_order only hand back the order id they were given: echoes.
    ("OrderDesk.get_order", None, None, "order_id", None),
    ("OrderDesk.cancel_order", None, None, None, None),
    # update_address re-states the customer id it was given.
    ("OrderDesk.update_address", None, ("provenance", "compatibility"), "customer_id", None),
    # An error string or error object inside a reply is a refusal, not a value.
    (None, None, None, "error", None),
]
