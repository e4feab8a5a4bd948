"""Exercise recipes.py and show each dependency in DEPENDENCIES.json is real.

Run: /work/blind/.venv/bin/python check_recipes.py
"""

import asyncio
import importlib
import json
import pathlib
import sys
import uuid
from datetime import date
from decimal import Decimal

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import recipes  # noqa: E402

checked = set()
MON = date(2025, 3, 10)
SUN = date(2025, 3, 16)


def fresh():
    global recipes
    recipes = importlib.reload(recipes)


async def fails(coro, exc=Exception):
    try:
        await coro
    except exc:
        return
    raise AssertionError("call unexpectedly succeeded")


async def provide_recipe_id(provider):
    if provider == "add_recipe":
        r = await recipes.add_recipe(
            "Fried rice", 2,
            [{"name": "rice", "quantity": 300, "unit": "g"},
             {"name": "eggs", "quantity": 2, "unit": "pcs"},
             recipes.IngredientLine(name="Soy sauce", quantity=Decimal("2"), unit="tbsp")],
            tags=["Quick"], total_minutes=20)
        return r.id
    if provider == "search_recipes":
        return (await recipes.search_recipes("soup"))[0].id
    if provider == "get_meal_plan":
        await recipes.plan_meal(MON, "lunch", 3)
        return (await recipes.get_meal_plan(MON, SUN))[0].recipe_id
    raise ValueError(provider)


async def consume_recipe_id(consumer, recipe_id):
    if consumer == "get_recipe":
        return await recipes.get_recipe(recipe_id)
    if consumer == "delete_recipe":
        return await recipes.delete_recipe(recipe_id)
    if consumer == "plan_meal":
        return await recipes.plan_meal(date(2025, 3, 11), "dinner", recipe_id, servings=3)
    raise ValueError(consumer)


async def main():
    for provider in ["add_recipe", "search_recipes", "get_meal_plan"]:
        for consumer in ["get_recipe", "delete_recipe", "plan_meal"]:
            fresh()
            await fails(consume_recipe_id(consumer, 999), recipes.RecipeNotFound)
            rid = await provide_recipe_id(provider)
            await consume_recipe_id(consumer, rid)
            checked.add((provider, consumer))

    # plan_meal / get_meal_plan -> remove_planned_meal
    for provider in ["plan_meal", "get_meal_plan"]:
        fresh()
        await fails(recipes.remove_planned_meal(1), KeyError)  # nothing planned yet
        entry = await recipes.plan_meal(MON, recipes.MealType.DINNER, 2)
        mid = entry.id if provider == "plan_meal" else (await recipes.get_meal_plan(MON, MON))[0].id
        await recipes.remove_planned_meal(mid)
        assert await recipes.get_meal_plan(MON, SUN) == []
        checked.add((provider, "remove_planned_meal"))

    # plan_meal -> build_shopping_list (state)
    fresh()
    await fails(recipes.build_shopping_list(MON, SUN), ValueError)
    await recipes.plan_meal(MON, "dinner", 2, servings=2)       # tomato soup, half
    await recipes.plan_meal(date(2025, 3, 12), "lunch", 3)     # spaghetti x2
    await recipes.plan_meal(date(2025, 3, 13), "breakfast", 1, servings=8)  # pancakes x2
    shopping = await recipes.build_shopping_list(MON, SUN)
    items = {i.name: (i.quantity, i.unit) for i in shopping.items}
    assert items["tomatoes"] == (Decimal(500), "g"), items
    assert "spaghetti" not in items  # covered by the pantry
    assert items["garlic"] == (Decimal(2), "pcs"), items  # needs 1 + 4, pantry has 3
    assert set(items) == {"chili flakes", "garlic", "onion", "sugar", "tomatoes",
                          "vegetable stock"}, items
    assert items["onion"] == (Decimal("0.5"), "pcs") and items["sugar"] == (Decimal(30), "ml")
    full = await recipes.build_shopping_list(MON, SUN, use_pantry=False)
    assert {i.name for i in full.items} >= {"spaghetti", "flour", "milk", "garlic"}
    checked.add(("plan_meal", "build_shopping_list"))

    # build_shopping_list -> check_off_item
    await fails(recipes.check_off_item(uuid.uuid4(), "tomatoes"), KeyError)
    await fails(recipes.check_off_item("not-a-uuid", "tomatoes"), ValueError)
    out = await recipes.check_off_item(shopping.id, "Tomatoes")
    assert [i.checked for i in out.items if i.name == "tomatoes"] == [True]
    await recipes.check_off_item(str(shopping.id), "tomatoes", checked=False)
    await fails(recipes.check_off_item(shopping.id, "caviar"), KeyError)
    checked.add(("build_shopping_list", "check_off_item"))

    # not_dependencies / behaviour
    fresh()
    entry = await recipes.plan_meal(MON, "dinner", 1)
    await fails(recipes.check_off_item(str(entry.id), "flour"), ValueError)
    await fails(recipes.plan_meal(MON, "dinner", 2), ValueError)  # slot taken
    await recipes.plan_meal(MON, "dinner", 2, replace=True)
    await recipes.update_pantry("Flour", 0, "g")
    assert all(p.name != "flour" for p in await recipes.list_pantry())
    await fails(recipes.update_pantry("rice", -1, "g"), ValueError)
    await fails(recipes.update_pantry("rice", 1, "bucket"), ValueError)
    cookable = {s.name for s in await recipes.search_recipes(cookable_now=True)}
    assert cookable == set(), cookable  # chili flakes, sugar, tomatoes missing
    await recipes.update_pantry("chili flakes", "20", "g")
    assert not await recipes.search_recipes(cookable_now=True)  # g vs tsp differ in dimension
    await recipes.update_pantry("chili flakes", "2", "tbsp")
    assert not await recipes.search_recipes(cookable_now=True)  # only 3 of 4 garlic
    await recipes.update_pantry("garlic", 4, "pcs")
    assert [s.name for s in await recipes.search_recipes(cookable_now=True)] == ["Spaghetti aglio e olio"]
    assert [s.id for s in await recipes.search_recipes("garlic", tag="vegan", max_minutes=20)] == [3]
    await fails(recipes.add_recipe("pancakes", 2, [{"name": "x", "quantity": 1, "unit": "g"}]), ValueError)
    await fails(recipes.add_recipe("New", 2, [{"name": "x", "quantity": 0, "unit": "g"}]), ValueError)
    await fails(recipes.add_recipe("New", 2, []), ValueError)
    await fails(recipes.get_meal_plan(SUN, MON), ValueError)
    await recipes.delete_recipe(2)  # cascades the planned dinner
    assert await recipes.get_meal_plan(MON, SUN) == []

    spec = json.loads((HERE / "DEPENDENCIES.json").read_text())
    listed = {(d["provider"], d["consumer"]) for d in spec["dependencies"]}
    assert listed == checked, (listed - checked, checked - listed)
    print(f"OK: {len(checked)} dependencies verified")


asyncio.run(main())
