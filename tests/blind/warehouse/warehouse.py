"""Warehouse inventory service.

A small, in-memory inventory backend for a single warehouse: a product
catalogue, stock locations (receiving docks, storage bins, shipping lanes),
stock movements, purchase orders and goods receiving.

Typical flow::

    wh = Warehouse()
    product = wh.create_product(NewProduct(sku="BOLT-M8-40", name="Hex bolt M8x40",
                                           unit_cost=Decimal("0.12")))
    po = wh.create_purchase_order(NewPurchaseOrder(
        supplier="Fasteners Ltd",
        lines=[POLine(product_id=product.product_id, quantity=500, unit_cost=Decimal("0.11"))],
    ))
    wh.submit_purchase_order(po.po_number)
    wh.receive_goods(GoodsReceipt(po_number=po.po_number, location_code="RECV-01",
                                  lines=[ReceiptLine(product_id=product.product_id, quantity=500)]))
    wh.transfer_stock(TransferRequest(product_id=product.product_id, from_location="RECV-01",
                                      to_location="A-01-01", quantity=200))

All operations raise a subclass of :class:`InventoryError` when a request
cannot be honoured; malformed input is rejected by pydantic with a
``pydantic.ValidationError`` when the request model is built.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timezone
from decimal import Decimal
from enum import Enum
from typing import Optional
from uuid import UUID, uuid4

from pydantic import BaseModel, ConfigDict, Field, computed_field, field_validator, model_validator

__all__ = [
    "Warehouse",
    "InventoryError",
    "NotFoundError",
    "DuplicateError",
    "InsufficientStockError",
    "InvalidStateError",
    "UnitOfMeasure",
    "LocationKind",
    "MovementType",
    "POStatus",
    "NewProduct",
    "Product",
    "ProductQuery",
    "NewLocation",
    "Location",
    "StockLevel",
    "TransferRequest",
    "StockMovement",
    "POLine",
    "NewPurchaseOrder",
    "PurchaseOrderLine",
    "PurchaseOrder",
    "ReceiptLine",
    "GoodsReceipt",
    "ReceiptResult",
]


# --------------------------------------------------------------------------- errors


class InventoryError(Exception):
    """Base class for all errors raised by :class:`Warehouse`."""


class NotFoundError(InventoryError):
    """A product, location or purchase order does not exist."""


class DuplicateError(InventoryError):
    """A record with the same natural key (SKU, location code) already exists."""


class InsufficientStockError(InventoryError):
    """The source location does not hold enough stock for the request."""


class InvalidStateError(InventoryError):
    """The operation is not allowed in the record's current state."""


# --------------------------------------------------------------------------- enums


class UnitOfMeasure(str, Enum):
    EACH = "each"
    BOX = "box"
    PALLET = "pallet"
    KG = "kg"


class LocationKind(str, Enum):
    RECEIVING = "receiving"
    STORAGE = "storage"
    SHIPPING = "shipping"


class MovementType(str, Enum):
    RECEIPT = "receipt"
    TRANSFER = "transfer"


class POStatus(str, Enum):
    DRAFT = "draft"
    SUBMITTED = "submitted"
    PARTIALLY_RECEIVED = "partially_received"
    RECEIVED = "received"
    CANCELLED = "cancelled"


# --------------------------------------------------------------------------- models

_SKU_PATTERN = r"^[A-Z0-9][A-Z0-9-]{2,31}$"
_LOCATION_PATTERN = r"^[A-Z]{1,4}(-[0-9A-Z]{1,4}){0,3}$"


def _utcnow() -> datetime:
    return datetime.now(timezone.utc)


class NewProduct(BaseModel):
    """Data needed to add a product to the catalogue.

    ``sku`` is upper-case letters, digits and dashes, 3-32 characters, e.g.
    ``"BOLT-M8-40"``. ``unit_cost`` is in the warehouse currency with at most
    two decimals.
    """

    model_config = ConfigDict(str_strip_whitespace=True)

    sku: str = Field(pattern=_SKU_PATTERN, examples=["BOLT-M8-40"])
    name: str = Field(min_length=1, max_length=120)
    unit: UnitOfMeasure = UnitOfMeasure.EACH
    unit_cost: Decimal = Field(ge=0, max_digits=12, decimal_places=2)
    reorder_point: int = Field(default=0, ge=0, description="Reorder when on-hand stock falls below this.")


class Product(BaseModel):
    product_id: str = Field(description="Catalogue id, e.g. 'P-1001'.")
    sku: str
    name: str
    unit: UnitOfMeasure
    unit_cost: Decimal
    reorder_point: int
    created_at: datetime


class ProductQuery(BaseModel):
    """Filters for :meth:`Warehouse.search_products`. All filters are ANDed."""

    text: Optional[str] = Field(default=None, description="Case-insensitive substring of the SKU or name.")
    unit: Optional[UnitOfMeasure] = None
    below_reorder_point: bool = Field(
        default=False, description="Only products whose total on-hand stock is below their reorder point."
    )
    limit: int = Field(default=50, ge=1, le=500)


class NewLocation(BaseModel):
    """A stock location to create.

    ``code`` is 1-4 upper-case letters optionally followed by up to three
    dash-separated segments, e.g. ``"A-01-03"`` (aisle A, bay 01, level 03) or
    ``"RECV-02"``. ``capacity`` is the maximum number of units the location can
    hold, or ``None`` for unlimited.
    """

    model_config = ConfigDict(str_strip_whitespace=True)

    code: str = Field(pattern=_LOCATION_PATTERN, examples=["A-01-03"])
    kind: LocationKind = LocationKind.STORAGE
    description: str = Field(default="", max_length=200)
    capacity: Optional[int] = Field(default=None, gt=0)


class Location(BaseModel):
    code: str
    kind: LocationKind
    description: str
    capacity: Optional[int]
    created_at: datetime


class StockLevel(BaseModel):
    """On-hand quantity of one product, overall or at one location."""

    product_id: str
    location_code: Optional[str] = Field(description="The location asked about, or None for all locations.")
    on_hand: int
    by_location: dict[str, int] = Field(description="Non-zero quantities keyed by location code.")


class TransferRequest(BaseModel):
    """Move a quantity of one product between two locations (put-away, replenishment, picking)."""

    product_id: str
    from_location: str
    to_location: str
    quantity: int = Field(gt=0)
    note: Optional[str] = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _distinct_locations(self) -> "TransferRequest":
        if self.from_location == self.to_location:
            raise ValueError("from_location and to_location must differ")
        return self


class StockMovement(BaseModel):
    movement_id: UUID
    movement_type: MovementType
    product_id: str
    quantity: int
    from_location: Optional[str] = Field(description="None for receipts from a supplier.")
    to_location: str
    reference: Optional[str] = Field(description="PO number for receipts, free-text note for transfers.")
    occurred_at: datetime


class POLine(BaseModel):
    product_id: str
    quantity: int = Field(gt=0)
    unit_cost: Decimal = Field(ge=0, max_digits=12, decimal_places=2)


class NewPurchaseOrder(BaseModel):
    """A purchase order to raise with a supplier. Each product may appear on one line only."""

    model_config = ConfigDict(str_strip_whitespace=True)

    supplier: str = Field(min_length=1, max_length=120)
    expected_date: Optional[date] = None
    lines: list[POLine] = Field(min_length=1, max_length=100)

    @field_validator("lines")
    @classmethod
    def _unique_products(cls, lines: list[POLine]) -> list[POLine]:
        seen: set[str] = set()
        for line in lines:
            if line.product_id in seen:
                raise ValueError(f"product {line.product_id} appears on more than one line")
            seen.add(line.product_id)
        return lines


class PurchaseOrderLine(BaseModel):
    product_id: str
    quantity_ordered: int
    quantity_received: int
    unit_cost: Decimal

    @computed_field  # type: ignore[prop-decorator]
    @property
    def quantity_outstanding(self) -> int:
        return self.quantity_ordered - self.quantity_received


class PurchaseOrder(BaseModel):
    po_number: str = Field(description="e.g. 'PO-00001'")
    supplier: str
    expected_date: Optional[date]
    status: POStatus
    lines: list[PurchaseOrderLine]
    created_at: datetime
    submitted_at: Optional[datetime] = None
    cancelled_reason: Optional[str] = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total_cost(self) -> Decimal:
        return sum((line.unit_cost * line.quantity_ordered for line in self.lines), Decimal("0.00"))


class ReceiptLine(BaseModel):
    product_id: str
    quantity: int = Field(gt=0)


class GoodsReceipt(BaseModel):
    """Goods physically received against a submitted purchase order.

    ``location_code`` must be a receiving location (e.g. ``"RECV-01"``).
    Partial deliveries are allowed; each line may not exceed the quantity still
    outstanding on the order.
    """

    po_number: str
    location_code: str
    lines: list[ReceiptLine] = Field(min_length=1)


class ReceiptResult(BaseModel):
    receipt_id: UUID
    po_number: str
    location_code: str
    movements: list[StockMovement]
    po_status: POStatus
    received_at: datetime


# --------------------------------------------------------------------------- service


class Warehouse:
    """In-memory inventory for one warehouse.

    A fresh instance is seeded with three catalogue products
    (``P-1001`` .. ``P-1003``) and four locations (``RECV-01`` receiving dock,
    storage bins ``A-01-01`` and ``A-01-02``, shipping lane ``SHIP-01``). No
    stock is on hand and there are no purchase orders.

    Args:
        seed: Load the demo catalogue and locations (default ``True``).
    """

    def __init__(self, seed: bool = True) -> None:
        self._products: dict[str, Product] = {}
        self._skus: dict[str, str] = {}
        self._locations: dict[str, Location] = {}
        self._stock: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        self._movements: list[StockMovement] = []
        self._orders: dict[str, PurchaseOrder] = {}
        self._next_product = 1001
        self._next_po = 1
        if seed:
            self._seed()

    def _seed(self) -> None:
        for sku, name, unit, cost, rop in [
            ("WRAP-500", "Stretch wrap 500mm", UnitOfMeasure.BOX, "18.50", 10),
            ("BOLT-M8-40", "Hex bolt M8x40", UnitOfMeasure.EACH, "0.12", 1000),
            ("PAL-EUR", "EUR pallet 1200x800", UnitOfMeasure.EACH, "9.00", 20),
        ]:
            self.create_product(
                NewProduct(sku=sku, name=name, unit=unit, unit_cost=Decimal(cost), reorder_point=rop)
            )
        for code, kind, desc, cap in [
            ("RECV-01", LocationKind.RECEIVING, "Inbound dock 1", None),
            ("A-01-01", LocationKind.STORAGE, "Aisle A, bay 01, level 01", 5000),
            ("A-01-02", LocationKind.STORAGE, "Aisle A, bay 01, level 02", 5000),
            ("SHIP-01", LocationKind.SHIPPING, "Outbound lane 1", None),
        ]:
            self.create_location(NewLocation(code=code, kind=kind, description=desc, capacity=cap))

    # ------------------------------------------------------------ helpers

    def _product(self, product_id: str) -> Product:
        try:
            return self._products[product_id]
        except KeyError:
            raise NotFoundError(f"unknown product id {product_id!r}") from None

    def _location(self, code: str) -> Location:
        try:
            return self._locations[code]
        except KeyError:
            raise NotFoundError(f"unknown location {code!r}") from None

    def _order(self, po_number: str) -> PurchaseOrder:
        try:
            return self._orders[po_number]
        except KeyError:
            raise NotFoundError(f"unknown purchase order {po_number!r}") from None

    def _location_total(self, code: str) -> int:
        return sum(per_loc.get(code, 0) for per_loc in self._stock.values())

    def _check_capacity(self, location: Location, incoming: int) -> None:
        if location.capacity is not None and self._location_total(location.code) + incoming > location.capacity:
            raise InvalidStateError(
                f"location {location.code} would exceed its capacity of {location.capacity} units"
            )

    # ------------------------------------------------------------ products

    def create_product(self, product: NewProduct) -> Product:
        """Add a product to the catalogue.

        Args:
            product: SKU, name, unit of measure, unit cost and reorder point.

        Returns:
            The stored product, with its generated ``product_id`` (``"P-1004"``, ...).

        Raises:
            DuplicateError: A product with this SKU already exists.
        """
        if product.sku in self._skus:
            raise DuplicateError(f"SKU {product.sku} already exists as {self._skus[product.sku]}")
        product_id = f"P-{self._next_product}"
        self._next_product += 1
        record = Product(product_id=product_id, created_at=_utcnow(), **product.model_dump())
        self._products[product_id] = record
        self._skus[product.sku] = product_id
        return record

    def get_product(self, product_id: str) -> Product:
        """Look up one product by its catalogue id (e.g. ``"P-1001"``).

        Raises:
            NotFoundError: No such product.
        """
        return self._product(product_id)

    def search_products(self, query: Optional[ProductQuery] = None) -> list[Product]:
        """Search the catalogue.

        Args:
            query: Optional filters; with no query every product is returned
                (up to the default limit of 50), ordered by product id.

        Returns:
            Matching products.
        """
        query = query or ProductQuery()
        needle = (query.text or "").strip().lower()
        results: list[Product] = []
        for product in self._products.values():
            if needle and needle not in product.sku.lower() and needle not in product.name.lower():
                continue
            if query.unit is not None and product.unit != query.unit:
                continue
            if query.below_reorder_point:
                on_hand = sum(self._stock[product.product_id].values())
                if on_hand >= product.reorder_point:
                    continue
            results.append(product)
            if len(results) >= query.limit:
                break
        return results

    # ------------------------------------------------------------ locations

    def create_location(self, location: NewLocation) -> Location:
        """Create a stock location.

        Returns:
            The stored location. Its ``code`` is how every other operation refers to it.

        Raises:
            DuplicateError: The code is already in use.
        """
        if location.code in self._locations:
            raise DuplicateError(f"location {location.code} already exists")
        record = Location(created_at=_utcnow(), **location.model_dump())
        self._locations[record.code] = record
        return record

    def list_locations(self, kind: Optional[LocationKind] = None) -> list[Location]:
        """List locations, optionally only those of one kind, sorted by code."""
        return sorted(
            (loc for loc in self._locations.values() if kind is None or loc.kind == kind),
            key=lambda loc: loc.code,
        )

    # ------------------------------------------------------------ stock

    def get_stock_level(self, product_id: str, location_code: Optional[str] = None) -> StockLevel:
        """Report how much of a product is on hand.

        Args:
            product_id: Catalogue id of the product.
            location_code: Restrict the figure to one location; ``None`` for the
                whole warehouse.

        Returns:
            The on-hand quantity (0 if the product has never been received) and
            a per-location breakdown.

        Raises:
            NotFoundError: Unknown product or location.
        """
        self._product(product_id)
        if location_code is not None:
            self._location(location_code)
        per_loc = {code: qty for code, qty in self._stock[product_id].items() if qty}
        if location_code is not None:
            per_loc = {location_code: per_loc[location_code]} if location_code in per_loc else {}
        return StockLevel(
            product_id=product_id,
            location_code=location_code,
            on_hand=sum(per_loc.values()),
            by_location=dict(sorted(per_loc.items())),
        )

    def transfer_stock(self, request: TransferRequest) -> StockMovement:
        """Move stock from one location to another.

        The whole quantity must be on hand at ``from_location``; the destination
        must have room for it if it has a capacity.

        Raises:
            NotFoundError: Unknown product or location.
            InsufficientStockError: Not enough stock at the source location.
            InvalidStateError: Transfer into a receiving dock, or the destination is full.
        """
        self._product(request.product_id)
        self._location(request.from_location)
        destination = self._location(request.to_location)
        if destination.kind is LocationKind.RECEIVING:
            raise InvalidStateError("stock cannot be transferred into a receiving location")
        available = self._stock[request.product_id].get(request.from_location, 0)
        if available < request.quantity:
            raise InsufficientStockError(
                f"only {available} of {request.product_id} at {request.from_location}, "
                f"{request.quantity} requested"
            )
        self._check_capacity(destination, request.quantity)
        self._stock[request.product_id][request.from_location] -= request.quantity
        self._stock[request.product_id][request.to_location] += request.quantity
        movement = StockMovement(
            movement_id=uuid4(),
            movement_type=MovementType.TRANSFER,
            product_id=request.product_id,
            quantity=request.quantity,
            from_location=request.from_location,
            to_location=request.to_location,
            reference=request.note,
            occurred_at=_utcnow(),
        )
        self._movements.append(movement)
        return movement

    def list_movements(self, product_id: str, since: Optional[datetime] = None) -> list[StockMovement]:
        """Return the movement history of one product, oldest first.

        Args:
            product_id: Catalogue id of the product.
            since: Only movements at or after this (timezone-aware) instant.

        Raises:
            NotFoundError: Unknown product.
            ValueError: ``since`` is a naive datetime.
        """
        self._product(product_id)
        if since is not None and since.tzinfo is None:
            raise ValueError("since must be timezone-aware")
        return [
            m
            for m in self._movements
            if m.product_id == product_id and (since is None or m.occurred_at >= since)
        ]

    # ------------------------------------------------------------ purchasing

    def create_purchase_order(self, order: NewPurchaseOrder) -> PurchaseOrder:
        """Raise a draft purchase order.

        The order stays in ``draft`` until :meth:`submit_purchase_order` sends it
        to the supplier; only submitted orders can be received against.

        Raises:
            NotFoundError: A line refers to an unknown product.
        """
        for line in order.lines:
            self._product(line.product_id)
        po_number = f"PO-{self._next_po:05d}"
        self._next_po += 1
        record = PurchaseOrder(
            po_number=po_number,
            supplier=order.supplier,
            expected_date=order.expected_date,
            status=POStatus.DRAFT,
            lines=[
                PurchaseOrderLine(
                    product_id=line.product_id,
                    quantity_ordered=line.quantity,
                    quantity_received=0,
                    unit_cost=line.unit_cost,
                )
                for line in order.lines
            ],
            created_at=_utcnow(),
        )
        self._orders[po_number] = record
        return record

    def submit_purchase_order(self, po_number: str) -> PurchaseOrder:
        """Send a draft purchase order to the supplier (``draft`` -> ``submitted``).

        Raises:
            NotFoundError: Unknown PO number.
            InvalidStateError: The order is not a draft.
        """
        order = self._order(po_number)
        if order.status is not POStatus.DRAFT:
            raise InvalidStateError(f"{po_number} is {order.status.value}; only draft orders can be submitted")
        order.status = POStatus.SUBMITTED
        order.submitted_at = _utcnow()
        return order

    def cancel_purchase_order(self, po_number: str, reason: str) -> PurchaseOrder:
        """Cancel a purchase order nothing has been received against.

        Args:
            po_number: The order to cancel, e.g. ``"PO-00001"``.
            reason: Why it is cancelled (required, kept on the order).

        Raises:
            NotFoundError: Unknown PO number.
            ValueError: Empty reason.
            InvalidStateError: Goods were already received, or it is already cancelled.
        """
        if not reason or not reason.strip():
            raise ValueError("a cancellation reason is required")
        order = self._order(po_number)
        if order.status not in (POStatus.DRAFT, POStatus.SUBMITTED):
            raise InvalidStateError(f"{po_number} is {order.status.value} and can no longer be cancelled")
        order.status = POStatus.CANCELLED
        order.cancelled_reason = reason.strip()
        return order

    def receive_goods(self, receipt: GoodsReceipt) -> ReceiptResult:
        """Book goods delivered against a submitted purchase order.

        Stock is added at the receiving location and one ``receipt`` movement is
        recorded per line. The order becomes ``partially_received`` or, when
        every line is complete, ``received``.

        Raises:
            NotFoundError: Unknown PO number or location.
            InvalidStateError: The order is not submitted / partially received,
                or the location is not a receiving location.
            ValueError: A line's product is not on the order, appears twice, or
                exceeds the outstanding quantity.
        """
        order = self._order(receipt.po_number)
        if order.status not in (POStatus.SUBMITTED, POStatus.PARTIALLY_RECEIVED):
            raise InvalidStateError(
                f"{order.po_number} is {order.status.value}; goods can only be received on submitted orders"
            )
        location = self._location(receipt.location_code)
        if location.kind is not LocationKind.RECEIVING:
            raise InvalidStateError(f"{location.code} is a {location.kind.value} location, not a receiving dock")

        po_lines = {line.product_id: line for line in order.lines}
        seen: set[str] = set()
        for line in receipt.lines:
            if line.product_id in seen:
                raise ValueError(f"product {line.product_id} appears twice in the receipt")
            seen.add(line.product_id)
            po_line = po_lines.get(line.product_id)
            if po_line is None:
                raise ValueError(f"product {line.product_id} is not on {order.po_number}")
            if line.quantity > po_line.quantity_outstanding:
                raise ValueError(
                    f"{line.quantity} x {line.product_id} exceeds the {po_line.quantity_outstanding} outstanding"
                )
        self._check_capacity(location, sum(line.quantity for line in receipt.lines))

        now = _utcnow()
        movements: list[StockMovement] = []
        for line in receipt.lines:
            po_lines[line.product_id].quantity_received += line.quantity
            self._stock[line.product_id][location.code] += line.quantity
            movement = StockMovement(
                movement_id=uuid4(),
                movement_type=MovementType.RECEIPT,
                product_id=line.product_id,
                quantity=line.quantity,
                from_location=None,
                to_location=location.code,
                reference=order.po_number,
                occurred_at=now,
            )
            self._movements.append(movement)
            movements.append(movement)

        complete = all(line.quantity_outstanding == 0 for line in order.lines)
        order.status = POStatus.RECEIVED if complete else POStatus.PARTIALLY_RECEIVED
        return ReceiptResult(
            receipt_id=uuid4(),
            po_number=order.po_number,
            location_code=location.code,
            movements=movements,
            po_status=order.status,
            received_at=now,
        )
