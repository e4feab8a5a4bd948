"""Async recipe book, pantry, meal planner and shopping list.

The operations are ``async def`` coroutines so they can be mounted directly on
an async web framework; the data lives in module-level dictionaries.

Typical flow::

    import asyncio
    from datetime import date
    import recipes

    async def main():
        soups = await recipes.search_recipes("soup")
        await recipes.plan_meal(date(2025, 3, 10), "dinner", soups[0].id, servings=4)
        shopping = await recipes.build_shopping_list(date(2025, 3, 10), date(2025, 3, 16))
        await recipes.check_off_item(shopping.id, "tomatoes")

    asyncio.run(main())

Three demo recipes are loaded at import: 1 = Pancakes, 2 = Tomato soup,
3 = Spaghetti aglio e olio, plus a small pantry.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import date, datetime, timedelta
from decimal import ROUND_UP, Decimal
from enum import Enum
from typing import Literal, Optional, Union

from pydantic import BaseModel, Field, ValidationError, field_validator

__all__ = [
    "Unit",
    "MealType",
    "IngredientLine",
    "Recipe",
    "RecipeSummary",
    "PantryItem",
    "PlannedMeal",
    "ShoppingItem",
    "ShoppingList",
    "RecipeNotFound",
    "add_recipe",
    "get_recipe",
    "search_recipes",
    "delete_recipe",
    "update_pantry",
    "list_pantry",
    "plan_meal",
    "get_meal_plan",
    "remove_planned_meal",
    "build_shopping_list",
    "check_off_item",
]

Unit = Literal["g", "kg", "ml", "l", "tsp", "tbsp", "cup", "pcs"]

# unit -> (dimension, factor to the base unit of that dimension)
_UNITS: dict[str, tuple[str, Decimal]] = {
    "g": ("mass", Decimal(1)),
    "kg": ("mass", Decimal(1000)),
    "ml": ("volume", Decimal(1)),
    "l": ("volume", Decimal(1000)),
    "tsp": ("volume", Decimal(5)),
    "tbsp": ("volume", Decimal(15)),
    "cup": ("volume", Decimal(240)),
    "pcs": ("count", Decimal(1)),
}
_BASE_UNIT = {"mass": "g", "volume": "ml", "count": "pcs"}

MAX_PLAN_SPAN = timedelta(days=31)


class MealType(str, Enum):
    BREAKFAST = "breakfast"
    LUNCH = "lunch"
    DINNER = "dinner"
    SNACK = "snack"


class RecipeNotFound(LookupError):
    """No recipe with the given id."""


def _norm_name(value: str) -> str:
    value = " ".join(str(value).split()).lower()
    if not value:
        raise ValueError("name must not be empty")
    return value


class IngredientLine(BaseModel):
    """One ingredient of a recipe, e.g. ``{"name": "flour", "quantity": "200", "unit": "g"}``."""

    name: str = Field(min_length=1, max_length=80)
    quantity: Decimal = Field(gt=0)
    unit: Unit

    @field_validator("name")
    @classmethod
    def _clean(cls, v: str) -> str:
        return _norm_name(v)


class Recipe(BaseModel):
    id: int
    name: str
    servings: int
    ingredients: list[IngredientLine]
    instructions: str = ""
    tags: list[str] = []
    total_minutes: Optional[int] = None


class RecipeSummary(BaseModel):
    id: int
    name: str
    servings: int
    tags: list[str]
    total_minutes: Optional[int]


class PantryItem(BaseModel):
    name: str
    quantity: Decimal
    unit: Unit


class PlannedMeal(BaseModel):
    id: int
    day: date
    meal: MealType
    recipe_id: int
    recipe_name: str
    servings: int


class ShoppingItem(BaseModel):
    name: str
    quantity: Decimal
    unit: Unit
    checked: bool = False


class ShoppingList(BaseModel):
    id: uuid.UUID
    start: date
    end: date
    created_at: datetime
    items: list[ShoppingItem]


# --------------------------------------------------------------------------- #
# State
# --------------------------------------------------------------------------- #

_recipes: dict[int, Recipe] = {}
_pantry: dict[str, PantryItem] = {}
_meal_plan: dict[int, PlannedMeal] = {}
_shopping_lists: dict[uuid.UUID, ShoppingList] = {}
_next_recipe_id = 1
_next_meal_id = 1


def _recipe(recipe_id: int) -> Recipe:
    if isinstance(recipe_id, bool) or not isinstance(recipe_id, int):
        raise TypeError("recipe_id must be an integer")
    try:
        return _recipes[recipe_id]
    except KeyError:
        raise RecipeNotFound(f"recipe {recipe_id} does not exist") from None


def _to_base(quantity: Decimal, unit: str) -> tuple[str, Decimal]:
    dim, factor = _UNITS[unit]
    return dim, quantity * factor


def _check_range(start: date, end: date) -> None:
    for label, d in (("start", start), ("end", end)):
        if isinstance(d, datetime) or not isinstance(d, date):
            raise TypeError(f"{label} must be a datetime.date")
    if end < start:
        raise ValueError("end must not be before start")
    if end - start > MAX_PLAN_SPAN:
        raise ValueError("the date range may cover at most 31 days")


def _summary(r: Recipe) -> RecipeSummary:
    return RecipeSummary(id=r.id, name=r.name, servings=r.servings, tags=r.tags,
                         total_minutes=r.total_minutes)


# --------------------------------------------------------------------------- #
# Recipes
# --------------------------------------------------------------------------- #


async def add_recipe(
    name: str,
    servings: int,
    ingredients: list[Union[IngredientLine, dict]],
    instructions: str = "",
    tags: Optional[list[str]] = None,
    total_minutes: Optional[int] = None,
) -> Recipe:
    """Add a recipe to the book.

    Args:
        name: Recipe name, unique (case-insensitive).
        servings: How many people the quantities serve (1-50).
        ingredients: At least one line; dicts are accepted, e.g.
            ``[{"name": "rice", "quantity": 300, "unit": "g"}]``.
            Units: g, kg, ml, l, tsp, tbsp, cup, pcs.
        instructions: Free text.
        tags: e.g. ``["vegetarian", "quick"]``; stored lowercase.
        total_minutes: Preparation plus cooking time.

    Returns:
        The stored :class:`Recipe` with its new integer ``id``.

    Raises:
        ValueError: If a field is invalid, an ingredient appears twice, or
            the name is already used.
    """
    global _next_recipe_id
    if not isinstance(name, str) or not name.strip():
        raise ValueError("recipe name must not be empty")
    clean_name = " ".join(name.split())
    if any(r.name.lower() == clean_name.lower() for r in _recipes.values()):
        raise ValueError(f"a recipe called {clean_name!r} already exists")
    if isinstance(servings, bool) or not isinstance(servings, int) or not 1 <= servings <= 50:
        raise ValueError("servings must be an integer from 1 to 50")
    if total_minutes is not None and (not isinstance(total_minutes, int) or total_minutes <= 0):
        raise ValueError("total_minutes must be a positive integer")
    if not ingredients:
        raise ValueError("a recipe needs at least one ingredient")
    try:
        lines = [i if isinstance(i, IngredientLine) else IngredientLine.model_validate(i)
                 for i in ingredients]
    except ValidationError as exc:
        raise ValueError(f"invalid ingredient: {exc.errors()[0]['msg']}") from None
    names = [line.name for line in lines]
    if len(set(names)) != len(names):
        raise ValueError("each ingredient may appear only once")
    recipe = Recipe(
        id=_next_recipe_id,
        name=clean_name,
        servings=servings,
        ingredients=lines,
        instructions=instructions,
        tags=sorted({_norm_name(t) for t in (tags or [])}),
        total_minutes=total_minutes,
    )
    _recipes[recipe.id] = recipe
    _next_recipe_id += 1
    return recipe


async def get_recipe(recipe_id: int) -> Recipe:
    """Return the full recipe, including ingredients and instructions.

    Raises:
        RecipeNotFound: If the id is unknown.
    """
    return _recipe(recipe_id)


async def search_recipes(
    query: str = "",
    tag: Optional[str] = None,
    max_minutes: Optional[int] = None,
    cookable_now: bool = False,
) -> list[RecipeSummary]:
    """Find recipes. All filters are optional and combined with AND.

    Args:
        query: Matched case-insensitively against the recipe name and its
            ingredient names (``"garlic"`` finds recipes using garlic).
        tag: Only recipes with this tag.
        max_minutes: Only recipes with a known total time up to this.
        cookable_now: Only recipes whose every ingredient is in the pantry in
            sufficient quantity for the recipe's own servings.

    Returns:
        Summaries sorted by name.
    """
    q = query.strip().lower() if query else ""
    wanted_tag = _norm_name(tag) if tag else None
    out: list[RecipeSummary] = []
    for r in _recipes.values():
        if q and q not in r.name.lower() and not any(q in i.name for i in r.ingredients):
            continue
        if wanted_tag and wanted_tag not in r.tags:
            continue
        if max_minutes is not None and (r.total_minutes is None or r.total_minutes > max_minutes):
            continue
        if cookable_now and not all(_pantry_covers(i) for i in r.ingredients):
            continue
        out.append(_summary(r))
    return sorted(out, key=lambda s: s.name.lower())


def _pantry_covers(line: IngredientLine) -> bool:
    item = _pantry.get(line.name)
    if item is None:
        return False
    need_dim, need = _to_base(line.quantity, line.unit)
    have_dim, have = _to_base(item.quantity, item.unit)
    return need_dim == have_dim and have >= need


async def delete_recipe(recipe_id: int) -> None:
    """Delete a recipe. Meals planned with it are removed from the plan too.

    Raises:
        RecipeNotFound: If the id is unknown.
    """
    _recipe(recipe_id)
    del _recipes[recipe_id]
    for meal_id in [m.id for m in _meal_plan.values() if m.recipe_id == recipe_id]:
        del _meal_plan[meal_id]


# --------------------------------------------------------------------------- #
# Pantry
# --------------------------------------------------------------------------- #


async def update_pantry(name: str, quantity: Union[Decimal, int, str], unit: Unit) -> Optional[PantryItem]:
    """Set how much of an ingredient is in the pantry.

    The quantity replaces the stored amount (it is not added). A quantity of
    0 removes the item and returns ``None``.

    Example: ``await update_pantry("Rice", "1.5", "kg")``

    Raises:
        ValueError: For a negative/non-numeric quantity or an unknown unit.
    """
    key = _norm_name(name)
    try:
        qty = Decimal(str(quantity))
    except Exception:
        raise ValueError(f"quantity must be a number, got {quantity!r}") from None
    if not qty.is_finite() or qty < 0:
        raise ValueError("quantity must be zero or positive")
    if unit not in _UNITS:
        raise ValueError(f"unknown unit {unit!r}; use one of {', '.join(_UNITS)}")
    if qty == 0:
        _pantry.pop(key, None)
        return None
    item = PantryItem(name=key, quantity=qty, unit=unit)
    _pantry[key] = item
    return item


async def list_pantry() -> list[PantryItem]:
    """Return everything in the pantry, sorted by name."""
    return sorted(_pantry.values(), key=lambda p: p.name)


# --------------------------------------------------------------------------- #
# Meal plan
# --------------------------------------------------------------------------- #


async def plan_meal(
    day: date,
    meal: Union[MealType, str],
    recipe_id: int,
    servings: Optional[int] = None,
    replace: bool = False,
) -> PlannedMeal:
    """Put a recipe on the meal plan for a day.

    Each (day, meal) slot holds one recipe.

    Args:
        day: The date, e.g. ``date(2025, 3, 10)``.
        meal: ``"breakfast"``, ``"lunch"``, ``"dinner"`` or ``"snack"``.
        recipe_id: The recipe to cook.
        servings: Number of people; defaults to the recipe's servings.
        replace: Replace whatever is already planned in that slot instead of
            failing.

    Returns:
        The :class:`PlannedMeal`; its ``id`` is used by
        :func:`remove_planned_meal`.

    Raises:
        RecipeNotFound: If the recipe does not exist.
        ValueError: For an unknown meal, bad servings, or an occupied slot
            when ``replace`` is false.
    """
    global _next_meal_id
    if isinstance(day, datetime) or not isinstance(day, date):
        raise TypeError("day must be a datetime.date")
    try:
        meal_type = MealType(meal)
    except ValueError:
        raise ValueError(f"unknown meal {meal!r}; use breakfast, lunch, dinner or snack") from None
    recipe = _recipe(recipe_id)
    if servings is None:
        servings = recipe.servings
    if isinstance(servings, bool) or not isinstance(servings, int) or not 1 <= servings <= 50:
        raise ValueError("servings must be an integer from 1 to 50")
    existing = [m for m in _meal_plan.values() if m.day == day and m.meal is meal_type]
    if existing:
        if not replace:
            raise ValueError(
                f"{meal_type.value} on {day.isoformat()} is already planned "
                f"({existing[0].recipe_name}); pass replace=True to overwrite"
            )
        for m in existing:
            del _meal_plan[m.id]
    entry = PlannedMeal(id=_next_meal_id, day=day, meal=meal_type, recipe_id=recipe.id,
                        recipe_name=recipe.name, servings=servings)
    _meal_plan[entry.id] = entry
    _next_meal_id += 1
    return entry


async def get_meal_plan(start: date, end: date) -> list[PlannedMeal]:
    """Return planned meals between two dates (inclusive, at most 31 days),
    ordered by day and meal."""
    _check_range(start, end)
    order = list(MealType)
    found = [m for m in _meal_plan.values() if start <= m.day <= end]
    return sorted(found, key=lambda m: (m.day, order.index(m.meal)))


async def remove_planned_meal(meal_id: int) -> None:
    """Remove one entry from the meal plan.

    Args:
        meal_id: The ``id`` of a :class:`PlannedMeal` (not a recipe id).

    Raises:
        KeyError: If there is no such planned meal.
    """
    if _meal_plan.pop(meal_id, None) is None:
        raise KeyError(f"no planned meal with id {meal_id!r}")


# --------------------------------------------------------------------------- #
# Shopping
# --------------------------------------------------------------------------- #


def _round_up(q: Decimal) -> Decimal:
    return q.quantize(Decimal("0.01"), rounding=ROUND_UP).normalize()


async def build_shopping_list(start: date, end: date, use_pantry: bool = True) -> ShoppingList:
    """Build a shopping list for all meals planned between two dates.

    Ingredient quantities are scaled to each meal's servings, summed across
    meals (converting kg/l/tsp/tbsp/cup to g or ml), and, if ``use_pantry``
    is true, reduced by what the pantry already holds. Items fully covered by
    the pantry are left out. Quantities are given in g, ml or pcs.

    Returns:
        A new :class:`ShoppingList`; keep its ``id`` to tick items off with
        :func:`check_off_item`.

    Raises:
        ValueError: If the range is invalid or no meals are planned in it.
    """
    meals = await get_meal_plan(start, end)
    if not meals:
        raise ValueError(
            f"no meals planned between {start.isoformat()} and {end.isoformat()}; "
            "plan some meals first"
        )
    needed: dict[tuple[str, str], Decimal] = defaultdict(Decimal)
    for m in meals:
        recipe = _recipes[m.recipe_id]
        scale = Decimal(m.servings) / Decimal(recipe.servings)
        for line in recipe.ingredients:
            dim, qty = _to_base(line.quantity * scale, line.unit)
            needed[(line.name, dim)] += qty

    items: list[ShoppingItem] = []
    for (name, dim), qty in sorted(needed.items()):
        if use_pantry and name in _pantry:
            have_dim, have = _to_base(_pantry[name].quantity, _pantry[name].unit)
            if have_dim == dim:
                qty -= have
        if qty <= 0:
            continue
        items.append(ShoppingItem(name=name, quantity=_round_up(qty), unit=_BASE_UNIT[dim]))

    shopping = ShoppingList(id=uuid.uuid4(), start=start, end=end,
                            created_at=datetime.now(), items=items)
    _shopping_lists[shopping.id] = shopping
    return shopping


async def check_off_item(list_id: Union[uuid.UUID, str], item_name: str, checked: bool = True) -> ShoppingList:
    """Mark an item on a shopping list as bought (or un-mark it).

    Args:
        list_id: The shopping list's ``id`` (a UUID or its string form).
        item_name: Name of an item on that list, case-insensitive.
        checked: ``False`` to un-tick an item.

    Raises:
        KeyError: If the list or the item does not exist.
        ValueError: If ``list_id`` is not a valid UUID.
    """
    try:
        key = list_id if isinstance(list_id, uuid.UUID) else uuid.UUID(str(list_id))
    except ValueError:
        raise ValueError(f"list_id is not a valid UUID: {list_id!r}") from None
    shopping = _shopping_lists.get(key)
    if shopping is None:
        raise KeyError(f"no shopping list with id {key}")
    wanted = _norm_name(item_name)
    for item in shopping.items:
        if item.name == wanted:
            item.checked = checked
            return shopping
    raise KeyError(f"{item_name!r} is not on this shopping list")


# --------------------------------------------------------------------------- #
# Demo data
# --------------------------------------------------------------------------- #


def _seed() -> None:
    global _next_recipe_id
    demo = [
        ("Pancakes", 4, [("flour", "200", "g"), ("milk", "300", "ml"), ("eggs", "2", "pcs"),
                         ("sugar", "1", "tbsp")],
         "Whisk everything, rest 10 minutes, fry thin pancakes.", ["breakfast", "vegetarian"], 25),
        ("Tomato soup", 4, [("tomatoes", "1", "kg"), ("onion", "1", "pcs"), ("garlic", "2", "pcs"),
                            ("vegetable stock", "500", "ml"), ("olive oil", "2", "tbsp")],
         "Soften onion and garlic in oil, add tomatoes and stock, simmer 20 minutes, blend.",
         ["soup", "vegetarian", "vegan"], 40),
        ("Spaghetti aglio e olio", 2, [("spaghetti", "200", "g"), ("garlic", "4", "pcs"),
                                       ("olive oil", "60", "ml"), ("chili flakes", "1", "tsp")],
         "Cook pasta; gently fry sliced garlic and chili in oil; toss with pasta.",
         ["pasta", "quick", "vegan"], 15),
    ]
    for name, servings, lines, instructions, tags, minutes in demo:
        r = Recipe(
            id=_next_recipe_id, name=name, servings=servings,
            ingredients=[IngredientLine(name=n, quantity=Decimal(q), unit=u) for n, q, u in lines],
            instructions=instructions, tags=sorted(tags), total_minutes=minutes,
        )
        _recipes[r.id] = r
        _next_recipe_id += 1
    for n, q, u in [("flour", "1", "kg"), ("eggs", "6", "pcs"), ("milk", "1", "l"),
                    ("spaghetti", "500", "g"), ("olive oil", "500", "ml"), ("garlic", "3", "pcs")]:
        _pantry[n] = PantryItem(name=n, quantity=Decimal(q), unit=u)


_seed()
