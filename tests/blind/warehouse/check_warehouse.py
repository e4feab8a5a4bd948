"""Checks that every dependency listed in DEPENDENCIES.json is real.

Run with:  python check_warehouse.py
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from warehouse import (
    GoodsReceipt,
    InsufficientStockError,
    InvalidStateError,
    LocationKind,
    NewLocation,
    NewProduct,
    NewPurchaseOrder,
    NotFoundError,
    POLine,
    POStatus,
    ProductQuery,
    ReceiptLine,
    TransferRequest,
    Warehouse,
)

checked: set[tuple[str, str]] = set()


def expect(exc_type, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc_type as exc:
        return exc
    raise AssertionError(f"{fn.__name__} did not raise {exc_type.__name__}")


def mark(provider: str, consumer: str) -> None:
    checked.add((provider, consumer))


def new_product(wh: Warehouse, sku: str = "CRATE-01"):
    return wh.create_product(NewProduct(sku=sku, name="Plastic crate", unit_cost=Decimal("4.20")))


def po_for(wh: Warehouse, product_id: str, qty: int = 100):
    return wh.create_purchase_order(
        NewPurchaseOrder(supplier="ACME", lines=[POLine(product_id=product_id, quantity=qty, unit_cost=Decimal("4.00"))])
    )


# ---- product id providers --------------------------------------------------------
for provider in ("create_product", "search_products"):
    wh = Warehouse()
    if provider == "create_product":
        pid = new_product(wh).product_id
    else:
        pid = wh.search_products(ProductQuery(text="bolt"))[0].product_id
    bogus = "P-9999"

    expect(NotFoundError, wh.get_product, bogus)
    assert wh.get_product(pid).product_id == pid
    mark(provider, "get_product")

    expect(NotFoundError, wh.get_stock_level, bogus)
    assert wh.get_stock_level(pid).on_hand == 0
    mark(provider, "get_stock_level")

    expect(NotFoundError, wh.list_movements, bogus)
    assert wh.list_movements(pid) == []
    mark(provider, "list_movements")

    expect(NotFoundError, po_for, wh, bogus)
    po = po_for(wh, pid)
    mark(provider, "create_purchase_order")

    wh.submit_purchase_order(po.po_number)
    wh.receive_goods(GoodsReceipt(po_number=po.po_number, location_code="RECV-01",
                                  lines=[ReceiptLine(product_id=pid, quantity=100)]))
    expect(NotFoundError, wh.transfer_stock,
           TransferRequest(product_id=bogus, from_location="RECV-01", to_location="A-01-01", quantity=10))
    wh.transfer_stock(TransferRequest(product_id=pid, from_location="RECV-01", to_location="A-01-01", quantity=10))
    mark(provider, "transfer_stock")

# ---- location providers ----------------------------------------------------------
for provider in ("create_location", "list_locations"):
    wh = Warehouse()
    if provider == "create_location":
        dock = wh.create_location(NewLocation(code="RECV-02", kind=LocationKind.RECEIVING)).code
        bin_ = wh.create_location(NewLocation(code="B-02-01")).code
    else:
        dock = wh.list_locations(LocationKind.RECEIVING)[0].code
        bin_ = wh.list_locations(LocationKind.STORAGE)[0].code
    po = po_for(wh, "P-1001")
    wh.submit_purchase_order(po.po_number)

    expect(NotFoundError, wh.receive_goods, GoodsReceipt(po_number=po.po_number, location_code="RECV-77",
                                                        lines=[ReceiptLine(product_id="P-1001", quantity=50)]))
    wh.receive_goods(GoodsReceipt(po_number=po.po_number, location_code=dock,
                                  lines=[ReceiptLine(product_id="P-1001", quantity=50)]))
    mark(provider, "receive_goods")

    expect(NotFoundError, wh.transfer_stock,
           TransferRequest(product_id="P-1001", from_location="Z-99", to_location=bin_, quantity=5))
    expect(NotFoundError, wh.transfer_stock,
           TransferRequest(product_id="P-1001", from_location=dock, to_location="Z-99", quantity=5))
    wh.transfer_stock(TransferRequest(product_id="P-1001", from_location=dock, to_location=bin_, quantity=5))
    mark(provider, "transfer_stock")

# ---- purchase order chain --------------------------------------------------------
wh = Warehouse()
expect(NotFoundError, wh.submit_purchase_order, "PO-00001")
expect(NotFoundError, wh.cancel_purchase_order, "PO-00001", "not needed")
expect(NotFoundError, wh.receive_goods, GoodsReceipt(po_number="PO-00001", location_code="RECV-01",
                                                    lines=[ReceiptLine(product_id="P-1002", quantity=1)]))
po = po_for(wh, "P-1002", 1000)
assert po.status is POStatus.DRAFT

# draft PO cannot be received -> needs submit_purchase_order
receipt = GoodsReceipt(po_number=po.po_number, location_code="RECV-01",
                       lines=[ReceiptLine(product_id="P-1002", quantity=400)])
expect(InvalidStateError, wh.receive_goods, receipt)
wh.submit_purchase_order(po.po_number)
mark("create_purchase_order", "submit_purchase_order")

# no stock before receiving -> transfer fails
transfer = TransferRequest(product_id="P-1002", from_location="RECV-01", to_location="A-01-01", quantity=100)
expect(InsufficientStockError, wh.transfer_stock, transfer)
result = wh.receive_goods(receipt)
assert result.po_status is POStatus.PARTIALLY_RECEIVED
mark("create_purchase_order", "receive_goods")
mark("submit_purchase_order", "receive_goods")
wh.transfer_stock(transfer)
mark("receive_goods", "transfer_stock")
assert wh.get_stock_level("P-1002").by_location == {"RECV-01": 300, "A-01-01": 100}

# receipt lines must be products on the PO
expect(ValueError, wh.receive_goods, GoodsReceipt(po_number=po.po_number, location_code="RECV-01",
                                                 lines=[ReceiptLine(product_id="P-1001", quantity=1)]))

# cancel works on a fresh draft, not once goods are received
po2 = po_for(wh, "P-1003", 20)
assert wh.cancel_purchase_order(po2.po_number, "supplier out of stock").status is POStatus.CANCELLED
mark("create_purchase_order", "cancel_purchase_order")
expect(InvalidStateError, wh.cancel_purchase_order, po.po_number, "too late")

# ---- not_dependencies spot checks --------------------------------------------------
wh = Warehouse()
assert wh.get_stock_level("P-1001").on_hand == 0          # no receive_goods needed
po3 = po_for(wh, "P-1001")
wh.cancel_purchase_order(po3.po_number, "draft only")      # no submit needed

# ---- every listed dependency was exercised ----------------------------------------
deps = json.loads((Path(__file__).parent / "DEPENDENCIES.json").read_text())
listed = {(d["provider"], d["consumer"]) for d in deps["dependencies"]}
missing = listed - checked
extra = checked - listed
assert not missing, f"dependencies not exercised: {sorted(missing)}"
assert not extra, f"exercised but not listed: {sorted(extra)}"
print(f"warehouse: all {len(listed)} dependencies verified")
