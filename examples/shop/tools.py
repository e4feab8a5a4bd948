"""A small online shop written as ordinary Python functions: the module the README builds with ``libra build --tools``.

Nothing here is written for libra except the optional ``@tool`` marks (examples for free-text inputs,
read-only hints) and ``FIXTURES``, the demo account any caller of a fresh shop knows. The relations libra finds
are the ones an agent must know: signing in comes before anything on the account, a product id comes from a
search, a checkout needs a non-empty cart, an order id comes from a checkout.
"""

from __future__ import annotations

from typing import TypedDict

from libra import tool

#: The demo account of a fresh shop.
FIXTURES = {"username": "demo", "password": "demo-pass"}

PRODUCTS: dict[str, dict] = {
    "p-100": {"title": "Blue ceramic mug", "price": 12.5},
    "p-101": {"title": "Brass desk lamp", "price": 49.0},
    "p-102": {"title": "Linen notebook", "price": 8.0},
    "p-103": {"title": "Walnut pen holder", "price": 19.0},
}
ACCOUNTS: dict[str, str] = {"demo": "demo-pass"}
SESSION: dict[str, str | None] = {"token": None}
CART: dict[str, int] = {}
ADDRESSES: dict[str, str] = {}
ORDERS: dict[str, dict] = {}
REVIEWS: list[dict] = []


class ProductHit(TypedDict):
    product_id: str
    title: str


class SearchResult(TypedDict):
    products: list[ProductHit]


class Product(TypedDict, total=False):
    title: str
    price: float
    error: str


class Session(TypedDict, total=False):
    access_token: str
    error: str


class Cart(TypedDict, total=False):
    items: dict[str, int]
    error: str


class Address(TypedDict, total=False):
    address_id: str
    error: str


class Order(TypedDict, total=False):
    order_id: str
    status: str
    error: str


def _signed_in(access_token: str) -> bool:
    return SESSION["token"] is not None and access_token == SESSION["token"]


@tool(read_only=True, examples={"query": ["mug", "lamp", "notebook"]})
def search_products(query: str) -> SearchResult:
    """Search the product catalog by words of the title.

    Args:
        query: Words to look for in product titles.
    """
    words = query.lower().split()
    return {
        "products": [
            {"product_id": pid, "title": p["title"]}
            for pid, p in PRODUCTS.items()
            if words and all(w in p["title"].lower() for w in words)
        ]
    }


@tool(read_only=True)
def get_product(product_id: str) -> Product:
    """Show the title and price of a product.

    Args:
        product_id: The id of an existing product.
    """
    if product_id not in PRODUCTS:
        return {"error": "no such product"}
    return dict(PRODUCTS[product_id])  # type: ignore[return-value]


def login(username: str, password: str) -> Session:
    """Sign in to an existing account.

    Args:
        username: The username of the existing account.
        password: The password of the existing account.
    """
    if ACCOUNTS.get(username) != password:
        return {"error": "invalid credentials"}
    SESSION["token"] = f"token-{username}"
    return {"access_token": SESSION["token"]}


@tool(examples={"street": ["1 Main Street"], "city": ["Springfield"]})
def add_address(access_token: str, street: str, city: str) -> Address:
    """Save a shipping address on the signed-in account.

    Args:
        access_token: The access token of the signed-in account.
        street: Street and number.
        city: City.
    """
    if not _signed_in(access_token):
        return {"error": "not signed in"}
    address_id = f"a-{len(ADDRESSES) + 1}"
    ADDRESSES[address_id] = f"{street}, {city}"
    return {"address_id": address_id}


def add_to_cart(access_token: str, product_id: str, quantity: int = 1) -> Cart:
    """Put a product in the signed-in account's cart.

    Args:
        access_token: The access token of the signed-in account.
        product_id: The id of the product to add.
        quantity: How many units.
    """
    if not _signed_in(access_token):
        return {"error": "not signed in"}
    if product_id not in PRODUCTS or quantity < 1:
        return {"error": "no such product"}
    CART[product_id] = CART.get(product_id, 0) + quantity
    return {"items": dict(CART)}


@tool(read_only=True)
def view_cart(access_token: str) -> Cart:
    """Show what is in the signed-in account's cart.

    Args:
        access_token: The access token of the signed-in account.
    """
    if not _signed_in(access_token):
        return {"error": "not signed in"}
    return {"items": dict(CART)}


@tool(examples={"shipping_address": ["1 Main Street, Springfield"]})
def checkout(access_token: str, shipping_address: str) -> Order:
    """Order everything in the cart, shipped to an address.

    Args:
        access_token: The access token of the signed-in account.
        shipping_address: Where to ship the order.
    """
    if not _signed_in(access_token):
        return {"error": "not signed in"}
    if not CART:
        return {"error": "the cart is empty"}
    order_id = f"o-{len(ORDERS) + 1}"
    ORDERS[order_id] = {"items": dict(CART), "address": shipping_address, "status": "placed"}
    CART.clear()
    return {"order_id": order_id, "status": "placed"}


@tool(read_only=True)
def order_status(order_id: str) -> Order:
    """Show the status of an order.

    Args:
        order_id: The id of an existing order.
    """
    if order_id not in ORDERS:
        return {"error": "no such order"}
    return {"order_id": order_id, "status": ORDERS[order_id]["status"]}


def cancel_order(access_token: str, order_id: str) -> Order:
    """Cancel an order that has not shipped yet.

    Args:
        access_token: The access token of the signed-in account.
        order_id: The id of the order to cancel.
    """
    if not _signed_in(access_token):
        return {"error": "not signed in"}
    if order_id not in ORDERS:
        return {"error": "no such order"}
    ORDERS[order_id]["status"] = "cancelled"
    return {"order_id": order_id, "status": "cancelled"}


@tool(examples={"rating": [5], "text": ["Lovely, as described."]})
def write_review(access_token: str, product_id: str, rating: int, text: str) -> dict:
    """Publish a review of a product.

    Args:
        access_token: The access token of the signed-in account.
        product_id: The id of the reviewed product.
        rating: Stars from 1 to 5.
        text: The review.
    """
    if not _signed_in(access_token):
        return {"error": "not signed in"}
    if product_id not in PRODUCTS:
        return {"error": "no such product"}
    if not 1 <= rating <= 5:
        return {"error": "rating must be 1 to 5"}
    REVIEWS.append({"product_id": product_id, "rating": rating, "text": text})
    return {"review_id": f"r-{len(REVIEWS)}"}
