"""A bakery's shop: products with codes, stock, and orders numbered from 1.

Module functions over module globals, the way a small shop back end is written. Products are known by their code;
order numbers count up from 1.
"""

from __future__ import annotations

FIXTURES = {"shop_email": "orders@bakery.test"}

_PRODUCTS: dict[str, dict] = {
    "BR-001": {"product_code": "BR-001", "name": "Sourdough loaf", "price_cents": 650, "stock": 12},
    "BR-002": {"product_code": "BR-002", "name": "Rye bread", "price_cents": 580, "stock": 4},
    "PA-001": {"product_code": "PA-001", "name": "Croissant", "price_cents": 220, "stock": 30},
    "PA-002": {"product_code": "PA-002", "name": "Cinnamon bun", "price_cents": 310, "stock": 0},
    "CK-001": {"product_code": "CK-001", "name": "Carrot cake", "price_cents": 2400, "stock": 2},
}
_ORDERS: dict[int, dict] = {
    1: {"order_id": 1, "product_code": "BR-001", "quantity": 2, "email": "kim@example.com", "status": "open"},
    2: {"order_id": 2, "product_code": "PA-001", "quantity": 6, "email": "lou@example.com", "status": "delivered"},
}
_NEXT_ORDER = 3


def _product(product_code: str) -> dict:
    if product_code not in _PRODUCTS:
        raise KeyError(f"no product {product_code}")
    return _PRODUCTS[product_code]


def _order(order_id: int) -> dict:
    if order_id not in _ORDERS:
        raise KeyError(f"no order {order_id}")
    return _ORDERS[order_id]


def list_products() -> list[dict]:
    """Every product on sale.

    :returns: Each product's code, name, price in cents and units in stock.
    """
    return [dict(p) for p in _PRODUCTS.values()]


def get_product(product_code: str) -> dict:
    """One product.

    :param product_code: The product's code.
    :returns: Its name, price in cents and units in stock.
    """
    return dict(_product(product_code))


def add_product(name: str, price_cents: int) -> dict:
    """Put a new product on sale, out of stock until restocked.

    :param name: What the product is called.
    :param price_cents: Its price, in cents.
    :returns: The new product, with the code it was given.
    """
    if not name.strip():
        raise ValueError("a product needs a name")
    if price_cents <= 0:
        raise ValueError("the price must be positive")
    prefix = "XX"
    number = 1 + sum(1 for s in _PRODUCTS if s.startswith(prefix))
    product_code = f"{prefix}-{number:03d}"
    _PRODUCTS[product_code] = {
        "product_code": product_code,
        "name": name.strip(),
        "price_cents": price_cents,
        "stock": 0,
    }
    return dict(_PRODUCTS[product_code])


def restock(product_code: str, quantity: int) -> dict:
    """Add units to a product's stock.

    :param product_code: The product's code.
    :param quantity: Units delivered.
    :returns: The code and the stock now.
    """
    product = _product(product_code)
    if quantity <= 0:
        raise ValueError("the quantity must be positive")
    product["stock"] += quantity
    return {"product_code": product_code, "stock": product["stock"]}


def place_order(product_code: str, quantity: int, email: str) -> dict:
    """Order a product for pick-up.

    :param product_code: The product's code.
    :param quantity: Units wanted.
    :param email: The customer's e-mail address.
    :returns: The order's number and total in cents.
    """
    global _NEXT_ORDER
    product = _product(product_code)
    if quantity <= 0:
        raise ValueError("the quantity must be positive")
    if "@" not in email:
        raise ValueError("the customer's e-mail address is needed")
    if product["stock"] < quantity:
        raise ValueError(f"only {product['stock']} left of {product_code}")
    product["stock"] -= quantity
    number = _NEXT_ORDER
    _NEXT_ORDER += 1
    _ORDERS[number] = {
        "order_id": number,
        "product_code": product_code,
        "quantity": quantity,
        "email": email,
        "status": "open",
    }
    return {"order_id": number, "total_cents": quantity * product["price_cents"]}


def list_orders() -> list[dict]:
    """Every order, oldest first.

    :returns: Each order's number, code, quantity and status.
    """
    return [{k: o[k] for k in ("order_id", "product_code", "quantity", "status")} for o in _ORDERS.values()]


def get_order(order_id: int) -> dict:
    """One order.

    :param order_id: The order's number.
    :returns: The order.
    """
    return dict(_order(order_id))


def cancel_order(order_id: int) -> dict:
    """Cancel an open order; its units go back in stock.

    :param order_id: The order's number.
    :returns: The order's number and status.
    """
    order = _order(order_id)
    if order["status"] != "open":
        raise ValueError(f"order {order_id} is {order['status']}")
    order["status"] = "cancelled"
    _PRODUCTS[order["product_code"]]["stock"] += order["quantity"]
    return {"order_id": order_id, "status": "cancelled"}


DESIGNED = [
    ("list_products", "get_product", None, "product_code", "product_code"),
    ("list_products", "restock", None, "product_code", "product_code"),
    ("list_products", "place_order", None, "product_code", "product_code"),
    ("add_product", "get_product", None, "product_code", "product_code"),
    ("add_product", "restock", None, "product_code", "product_code"),
    ("place_order", "get_order", None, "order_id", "order_id"),
    ("place_order", "cancel_order", None, "order_id", "order_id"),
    ("list_orders", "get_order", None, "order_id", "order_id"),
    ("list_orders", "cancel_order", None, "order_id", "order_id"),
]
