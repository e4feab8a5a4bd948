"""Exercise fitness.py and show that every dependency in DEPENDENCIES.json is real.

Run:  /work/blind/.venv/bin/python check_fitness.py
"""

import importlib
import json
import sys
from datetime import date, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import fitness  # noqa: E402

BIRTH = date(1990, 4, 2)
checked = set()


def fresh():
    global fitness
    fitness = importlib.reload(fitness)
    return fitness


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc:
        return True
    raise AssertionError(f"{fn.__name__}{args}{kwargs} unexpectedly succeeded")


def profile(f, **kw):
    return f.set_up_profile("Sam", BIRTH, 72.5, 178, **kw)


def test_profile_state():
    calls = {
        "get_profile": lambda f: f.get_profile(),
        "start_workout": lambda f: f.start_workout("Leg day"),
        "set_goal": lambda f: f.set_goal("weekly_workouts", 3),
        "weekly_summary": lambda f: f.weekly_summary(),
    }
    for consumer, call in calls.items():
        f = fresh()
        fails(call, f, exc=RuntimeError)
        p = profile(f)
        assert p.bmi == 22.9
        call(f)
        checked.add(("set_up_profile", consumer))


def test_workout_id_consumers():
    for provider in ("start_workout", "list_workouts"):
        for consumer in ("add_exercise_to_workout", "finish_workout"):
            f = fresh()
            profile(f)
            assert f.list_workouts() == []
            args = ("deadlift",) if consumer == "add_exercise_to_workout" else ()
            fails(getattr(f, consumer), 1, *args, exc=KeyError)
            wid = f.start_workout().workout_id
            if provider == "list_workouts":
                wid = f.list_workouts()[0].workout_id
            getattr(f, consumer)(wid, *args)
            checked.add((provider, consumer))


def test_list_exercises__add_exercise():
    f = fresh()
    profile(f)
    wid = f.start_workout().workout_id
    fails(f.add_exercise_to_workout, wid, "Bench press", exc=KeyError)
    ex = f.list_exercises(search="bench")[0]
    entry = f.add_exercise_to_workout(wid, ex.exercise_id)
    assert entry.exercise_id == "bench-press"
    checked.add(("list_exercises", "add_exercise_to_workout"))


def test_list_exercises__set_goal():
    f = fresh()
    profile(f)
    fails(f.set_goal, "max_weight", 100, exc=ValueError)
    fails(f.set_goal, "max_weight", 100, exercise_id="Squat", exc=KeyError)
    fails(f.set_goal, "max_weight", 100, exercise_id="push-up", exc=ValueError)
    ex = [e for e in f.list_exercises(muscle_group="legs") if e.weighted][0]
    g = f.set_goal("max_weight", 100, exercise_id=ex.exercise_id)
    assert g.exercise_id == "back-squat"
    checked.add(("list_exercises", "set_goal"))


def test_add_exercise__log_set():
    f = fresh()
    profile(f)
    fails(f.log_set, 1, 5, weight_kg=100, exc=KeyError)
    wid = f.start_workout().workout_id
    entry = f.add_exercise_to_workout(wid, "back-squat")
    fails(f.log_set, entry.entry_id, 5, exc=ValueError)  # weighted needs weight
    s = f.log_set(entry.entry_id, 5, weight_kg=100, rpe=8.5)
    assert s.volume_kg == 500 and s.set_number == 1
    checked.add(("add_exercise_to_workout", "log_set"))


def test_goal_id_consumers():
    for consumer in ("check_goal_progress", "delete_goal"):
        f = fresh()
        profile(f)
        fails(getattr(f, consumer), 1, exc=KeyError)
        gid = f.set_goal("weekly_volume", 1000).goal_id
        getattr(f, consumer)(gid)
        checked.add(("set_goal", consumer))


def test_full_flow_and_not_dependencies():
    f = fresh()
    profile(f, weekly_workout_target=2)
    wid = f.start_workout("Push").workout_id
    fails(f.start_workout, exc=RuntimeError)  # one open at a time
    e1 = f.add_exercise_to_workout(wid, "bench-press")
    e2 = f.add_exercise_to_workout(wid, "push-up")
    assert e1.entry_id != e2.entry_id
    f.log_set(e1.entry_id, 8, weight_kg=60)
    f.log_set(e1.entry_id, 8, weight_kg=62.5)
    f.log_set(e2.entry_id, 20)
    g = f.set_goal("max_weight", 60, exercise_id="bench-press")
    # goal id is not a workout id: workout 2 does not exist
    fails(f.finish_workout, g.goal_id + 1, exc=KeyError)
    summary_open = f.weekly_summary()
    assert summary_open.workouts == 1 and summary_open.sets == 3  # open workouts count too
    assert f.check_goal_progress(g.goal_id).achieved
    res = f.finish_workout(wid, notes="felt strong")
    assert res.sets == 3 and res.total_volume_kg == 980.0
    fails(f.log_set, e1.entry_id, 5, weight_kg=60, exc=RuntimeError)
    fails(f.add_exercise_to_workout, wid, "deadlift", exc=RuntimeError)
    fails(f.finish_workout, wid, exc=RuntimeError)
    s = f.weekly_summary()
    assert s.volume_by_muscle_group == {"chest": 980.0} and s.target_met is False
    g2 = f.set_goal("weekly_workouts", 3)
    assert f.check_goal_progress(g2.goal_id).percent == 33.3
    f.delete_goal(g2.goal_id)
    fails(f.check_goal_progress, g2.goal_id, exc=KeyError)
    # back-filled workout in an earlier week
    last_week = datetime.now() - timedelta(days=7)
    old = f.start_workout("Old", started_at=last_week)
    f.finish_workout(old.workout_id)
    assert f.weekly_summary(week_of=last_week.date()).workouts == 1
    assert len(f.list_workouts(since=date.today())) == 1
    # validation
    fails(f.set_up_profile, "Kid", date.today() - timedelta(days=365 * 5), 30, 120, exc=ValueError)
    fails(f.set_up_profile, "", BIRTH, 70, 170, exc=ValueError)
    fails(f.start_workout, started_at=datetime.now() + timedelta(days=1), exc=ValueError)
    fails(f.list_exercises, muscle_group="arms", exc=ValueError)
    fails(f.set_goal, "weekly_workouts", 2, exercise_id="deadlift", exc=ValueError)
    fails(f.set_goal, "weekly_workouts", 3, deadline=date.today() - timedelta(days=1), exc=ValueError)


def test_progress_without_sets():
    f = fresh()
    profile(f)
    g = f.set_goal("weekly_volume", 5000)
    p = f.check_goal_progress(g.goal_id)
    assert p.current == 0 and p.percent == 0 and not p.achieved


def main():
    deps = json.loads((HERE / "DEPENDENCIES.json").read_text())
    for name, fn in list(globals().items()):
        if name.startswith("test_") and callable(fn):
            fn()
            print("ok", name)
    listed = {(d["provider"], d["consumer"]) for d in deps["dependencies"]}
    missing = listed - checked
    assert not missing, f"dependencies not exercised: {missing}"
    print(f"all {len(listed)} dependencies verified")


if __name__ == "__main__":
    main()
