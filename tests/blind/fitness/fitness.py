"""
fitness -- a single-user, in-memory workout tracker.

Set up a profile first, then start a workout, add exercises from the built-in
catalogue, log sets, and finish the workout.  Goals and weekly summaries are
computed from the logged sets.

Examples
--------
>>> from datetime import date
>>> import fitness
>>> fitness.set_up_profile("Sam", date(1990, 4, 2), weight_kg=72.5, height_cm=178)
>>> w = fitness.start_workout("Leg day")
>>> e = fitness.add_exercise_to_workout(w.workout_id, "back-squat")
>>> fitness.log_set(e.entry_id, reps=5, weight_kg=100)
>>> fitness.finish_workout(w.workout_id)
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime, timedelta
from typing import Literal, NamedTuple, Optional

__all__ = [
    "Profile",
    "Exercise",
    "WorkoutInfo",
    "WorkoutEntry",
    "SetResult",
    "WorkoutSummary",
    "Goal",
    "GoalProgress",
    "WeeklySummary",
    "set_up_profile",
    "get_profile",
    "list_exercises",
    "start_workout",
    "add_exercise_to_workout",
    "log_set",
    "finish_workout",
    "list_workouts",
    "set_goal",
    "check_goal_progress",
    "delete_goal",
    "weekly_summary",
]

GoalKind = Literal["weekly_workouts", "weekly_volume", "max_weight"]
_GOAL_KINDS = ("weekly_workouts", "weekly_volume", "max_weight")


# ---------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------

class Profile(NamedTuple):
    name: str
    birth_date: date
    weight_kg: float
    height_cm: float
    bmi: float
    weekly_workout_target: Optional[int]


class Exercise(NamedTuple):
    exercise_id: str
    name: str
    muscle_group: str
    weighted: bool


class WorkoutInfo(NamedTuple):
    workout_id: int
    title: str
    started_at: datetime
    finished_at: Optional[datetime]
    exercise_count: int
    set_count: int


class WorkoutEntry(NamedTuple):
    entry_id: int
    workout_id: int
    exercise_id: str
    position: int


class SetResult(NamedTuple):
    entry_id: int
    set_number: int
    reps: int
    weight_kg: Optional[float]
    rpe: Optional[float]
    volume_kg: float


class WorkoutSummary(NamedTuple):
    workout_id: int
    duration: timedelta
    exercises: int
    sets: int
    total_volume_kg: float


class Goal(NamedTuple):
    goal_id: int
    kind: str
    target: float
    exercise_id: Optional[str]
    deadline: Optional[date]
    created_on: date


class GoalProgress(NamedTuple):
    goal_id: int
    current: float
    target: float
    percent: float
    achieved: bool


class WeeklySummary(NamedTuple):
    week_start: date
    week_end: date
    workouts: int
    sets: int
    total_volume_kg: float
    volume_by_muscle_group: dict[str, float]
    active_days: int
    target_met: Optional[bool]


# ---------------------------------------------------------------------------
# State
# ---------------------------------------------------------------------------

EXERCISES: dict[str, Exercise] = {
    e.exercise_id: e
    for e in [
        Exercise("back-squat", "Back squat", "legs", True),
        Exercise("deadlift", "Deadlift", "back", True),
        Exercise("bench-press", "Bench press", "chest", True),
        Exercise("overhead-press", "Overhead press", "shoulders", True),
        Exercise("barbell-row", "Barbell row", "back", True),
        Exercise("pull-up", "Pull-up", "back", False),
        Exercise("push-up", "Push-up", "chest", False),
        Exercise("lunge", "Walking lunge", "legs", False),
        Exercise("plank", "Plank (reps = seconds)", "core", False),
    ]
}

PROFILE: Optional[Profile] = None
WORKOUTS: dict[int, dict] = {}
ENTRIES: dict[int, dict] = {}
GOALS: dict[int, Goal] = {}

_next_workout_id = 1
_next_entry_id = 1
_next_goal_id = 1


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def _require_profile() -> Profile:
    if PROFILE is None:
        raise RuntimeError("no profile set up yet; call set_up_profile() first")
    return PROFILE


def _require_workout(workout_id: int) -> dict:
    try:
        return WORKOUTS[workout_id]
    except KeyError:
        raise KeyError(f"no workout with id {workout_id!r}") from None


def _require_exercise(exercise_id: str) -> Exercise:
    try:
        return EXERCISES[exercise_id]
    except KeyError:
        raise KeyError(
            f"unknown exercise {exercise_id!r}; see list_exercises() for valid ids"
        ) from None


def _week_bounds(day: date) -> tuple[date, date]:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def _info(w: dict) -> WorkoutInfo:
    entries = [ENTRIES[e] for e in w["entries"]]
    return WorkoutInfo(
        workout_id=w["workout_id"],
        title=w["title"],
        started_at=w["started_at"],
        finished_at=w["finished_at"],
        exercise_count=len(entries),
        set_count=sum(len(e["sets"]) for e in entries),
    )


def _sets_in(start: date, end: date):
    """Yield (workout, entry, set) for workouts started between start and end."""
    for w in WORKOUTS.values():
        if start <= w["started_at"].date() <= end:
            for eid in w["entries"]:
                entry = ENTRIES[eid]
                for s in entry["sets"]:
                    yield w, entry, s


# ---------------------------------------------------------------------------
# Operations
# ---------------------------------------------------------------------------

def set_up_profile(
    name: str,
    birth_date: date,
    weight_kg: float,
    height_cm: float,
    weekly_workout_target: Optional[int] = None,
) -> Profile:
    """
    Create or replace the user's profile.

    Calling it again updates the profile; logged workouts and goals are kept.

    Parameters
    ----------
    name : str
        Display name, 1-40 characters.
    birth_date : date
        Date of birth. Users must be at least 13 years old.
    weight_kg : float
        Body weight in kilograms, 25-300.
    height_cm : float
        Height in centimetres, 100-250.
    weekly_workout_target : int, optional
        How many workouts per week the user aims for (1-14). Used by
        :func:`weekly_summary` to report ``target_met``.

    Returns
    -------
    Profile
        The stored profile, including the computed BMI.

    Raises
    ------
    ValueError
        If any value is out of range.
    """
    global PROFILE
    name = (name or "").strip()
    if not 1 <= len(name) <= 40:
        raise ValueError("name must be 1-40 characters")
    if not isinstance(birth_date, date):
        raise TypeError("birth_date must be a datetime.date")
    today = date.today()
    age = today.year - birth_date.year - ((today.month, today.day) < (birth_date.month, birth_date.day))
    if age < 13:
        raise ValueError("users must be at least 13 years old")
    if age > 120:
        raise ValueError("birth_date is implausibly far in the past")
    if not 25 <= weight_kg <= 300:
        raise ValueError("weight_kg must be between 25 and 300")
    if not 100 <= height_cm <= 250:
        raise ValueError("height_cm must be between 100 and 250")
    if weekly_workout_target is not None and not 1 <= weekly_workout_target <= 14:
        raise ValueError("weekly_workout_target must be between 1 and 14")

    bmi = round(weight_kg / (height_cm / 100) ** 2, 1)
    PROFILE = Profile(name, birth_date, float(weight_kg), float(height_cm), bmi, weekly_workout_target)
    return PROFILE


def get_profile() -> Profile:
    """
    Return the current profile.

    Returns
    -------
    Profile

    Raises
    ------
    RuntimeError
        If no profile has been set up.
    """
    return _require_profile()


def list_exercises(
    muscle_group: Optional[str] = None,
    search: Optional[str] = None,
) -> list[Exercise]:
    """
    List exercises from the built-in catalogue.

    Parameters
    ----------
    muscle_group : str, optional
        One of ``"legs"``, ``"back"``, ``"chest"``, ``"shoulders"``, ``"core"``.
    search : str, optional
        Case-insensitive substring matched against the exercise name.

    Returns
    -------
    list of Exercise
        Sorted by name. ``weighted`` tells whether :func:`log_set` needs a
        weight for it.

    Raises
    ------
    ValueError
        If ``muscle_group`` is not a known group.
    """
    groups = {e.muscle_group for e in EXERCISES.values()}
    if muscle_group is not None and muscle_group not in groups:
        raise ValueError(f"unknown muscle group {muscle_group!r}; expected one of {sorted(groups)}")
    needle = (search or "").strip().lower()
    out = [
        e
        for e in EXERCISES.values()
        if (muscle_group is None or e.muscle_group == muscle_group)
        and (not needle or needle in e.name.lower())
    ]
    return sorted(out, key=lambda e: e.name)


def start_workout(
    title: Optional[str] = None,
    started_at: Optional[datetime] = None,
) -> WorkoutInfo:
    """
    Open a new workout session.

    Only one workout can be open at a time; finish the current one first.

    Parameters
    ----------
    title : str, optional
        Free text such as ``"Push day"``. Defaults to ``"Workout"``.
    started_at : datetime, optional
        When the session began; defaults to now. May not be in the future.
        Useful for back-filling a session you forgot to log.

    Returns
    -------
    WorkoutInfo
        The new workout; keep ``workout_id`` to add exercises and finish it.

    Raises
    ------
    RuntimeError
        If no profile is set up or another workout is still open.
    ValueError
        If ``started_at`` is in the future or the title is too long.
    """
    global _next_workout_id
    _require_profile()
    open_ids = [w["workout_id"] for w in WORKOUTS.values() if w["finished_at"] is None]
    if open_ids:
        raise RuntimeError(f"workout {open_ids[0]} is still open; finish it before starting another")
    title = (title or "Workout").strip() or "Workout"
    if len(title) > 60:
        raise ValueError("title must be at most 60 characters")
    now = datetime.now()
    started_at = started_at or now
    if started_at > now + timedelta(minutes=1):
        raise ValueError("started_at cannot be in the future")

    workout = {
        "workout_id": _next_workout_id,
        "title": title,
        "started_at": started_at,
        "finished_at": None,
        "notes": None,
        "entries": [],
    }
    WORKOUTS[_next_workout_id] = workout
    _next_workout_id += 1
    return _info(workout)


def add_exercise_to_workout(workout_id: int, exercise_id: str) -> WorkoutEntry:
    """
    Add an exercise to an open workout.

    Parameters
    ----------
    workout_id : int
        An open workout.
    exercise_id : str
        Catalogue id, e.g. ``"bench-press"``.

    Returns
    -------
    WorkoutEntry
        The entry; its ``entry_id`` is what :func:`log_set` takes.

    Raises
    ------
    KeyError
        Unknown workout or exercise.
    RuntimeError
        The workout is already finished.
    """
    global _next_entry_id
    workout = _require_workout(workout_id)
    exercise = _require_exercise(exercise_id)
    if workout["finished_at"] is not None:
        raise RuntimeError(f"workout {workout_id} is finished; exercises can no longer be added")
    entry = {
        "entry_id": _next_entry_id,
        "workout_id": workout_id,
        "exercise_id": exercise.exercise_id,
        "position": len(workout["entries"]) + 1,
        "sets": [],
    }
    ENTRIES[_next_entry_id] = entry
    workout["entries"].append(_next_entry_id)
    _next_entry_id += 1
    return WorkoutEntry(entry["entry_id"], workout_id, exercise.exercise_id, entry["position"])


def log_set(
    entry_id: int,
    reps: int,
    weight_kg: Optional[float] = None,
    rpe: Optional[float] = None,
) -> SetResult:
    """
    Record one set of an exercise entry.

    Parameters
    ----------
    entry_id : int
        Entry returned by :func:`add_exercise_to_workout` (not a workout id).
    reps : int
        Repetitions performed, 1-100 (seconds for the plank).
    weight_kg : float, optional
        Load lifted. Required for weighted exercises; for bodyweight
        exercises it is extra load (e.g. a weight belt) and may be omitted.
    rpe : float, optional
        Rate of perceived exertion on the 1-10 scale, half steps allowed.

    Returns
    -------
    SetResult
        ``volume_kg`` is ``reps * weight_kg`` (0 without weight).

    Raises
    ------
    KeyError
        Unknown entry.
    ValueError
        Invalid reps, weight or RPE, or a missing weight for a weighted
        exercise.
    RuntimeError
        The workout the entry belongs to is finished.
    """
    entry = ENTRIES.get(entry_id)
    if entry is None:
        raise KeyError(f"no workout entry with id {entry_id!r}")
    workout = WORKOUTS[entry["workout_id"]]
    if workout["finished_at"] is not None:
        raise RuntimeError(f"workout {workout['workout_id']} is finished; sets can no longer be logged")
    exercise = EXERCISES[entry["exercise_id"]]
    if not isinstance(reps, int) or not 1 <= reps <= 100:
        raise ValueError("reps must be an integer between 1 and 100")
    if weight_kg is None and exercise.weighted:
        raise ValueError(f"{exercise.name} is a weighted exercise; weight_kg is required")
    if weight_kg is not None and not 0 < weight_kg <= 500:
        raise ValueError("weight_kg must be greater than 0 and at most 500")
    if rpe is not None and (not 1 <= rpe <= 10 or (rpe * 2) != int(rpe * 2)):
        raise ValueError("rpe must be between 1 and 10 in steps of 0.5")

    volume = round(reps * (weight_kg or 0.0), 2)
    result = SetResult(entry_id, len(entry["sets"]) + 1, reps, weight_kg, rpe, volume)
    entry["sets"].append(result)
    return result


def finish_workout(workout_id: int, notes: Optional[str] = None) -> WorkoutSummary:
    """
    Close an open workout.

    Parameters
    ----------
    workout_id : int
        The workout to finish.
    notes : str, optional
        How it went; at most 500 characters.

    Returns
    -------
    WorkoutSummary

    Raises
    ------
    KeyError
        Unknown workout.
    RuntimeError
        The workout was already finished.
    """
    workout = _require_workout(workout_id)
    if workout["finished_at"] is not None:
        raise RuntimeError(f"workout {workout_id} was already finished")
    if notes is not None and len(notes) > 500:
        raise ValueError("notes must be at most 500 characters")
    finished = max(datetime.now(), workout["started_at"])
    workout["finished_at"] = finished
    workout["notes"] = notes
    entries = [ENTRIES[e] for e in workout["entries"]]
    sets = [s for e in entries for s in e["sets"]]
    return WorkoutSummary(
        workout_id=workout_id,
        duration=finished - workout["started_at"],
        exercises=len(entries),
        sets=len(sets),
        total_volume_kg=round(sum(s.volume_kg for s in sets), 2),
    )


def list_workouts(
    since: Optional[date] = None,
    until: Optional[date] = None,
    include_open: bool = True,
) -> list[WorkoutInfo]:
    """
    List logged workouts, newest first.

    Parameters
    ----------
    since, until : date, optional
        Inclusive bounds on the workout's start date.
    include_open : bool, default True
        Whether to include a workout that has not been finished yet.

    Returns
    -------
    list of WorkoutInfo

    Raises
    ------
    ValueError
        If ``since`` is after ``until``.
    """
    if since and until and since > until:
        raise ValueError("since must not be after until")
    out = [
        _info(w)
        for w in WORKOUTS.values()
        if (since is None or w["started_at"].date() >= since)
        and (until is None or w["started_at"].date() <= until)
        and (include_open or w["finished_at"] is not None)
    ]
    return sorted(out, key=lambda i: i.started_at, reverse=True)


def set_goal(
    kind: GoalKind,
    target: float,
    exercise_id: Optional[str] = None,
    deadline: Optional[date] = None,
) -> Goal:
    """
    Create a training goal.

    Parameters
    ----------
    kind : {"weekly_workouts", "weekly_volume", "max_weight"}
        ``weekly_workouts``: number of workouts in the current week.
        ``weekly_volume``: kilograms lifted (reps x weight) this week.
        ``max_weight``: heaviest single set for one exercise.
    target : float
        Positive target value in the unit of ``kind``.
    exercise_id : str, optional
        Required for ``max_weight`` (must be a weighted exercise); not allowed
        for the other kinds.
    deadline : date, optional
        Must be today or later.

    Returns
    -------
    Goal
        Includes the ``goal_id`` used by :func:`check_goal_progress` and
        :func:`delete_goal`.

    Raises
    ------
    RuntimeError
        No profile set up.
    ValueError
        Invalid kind, target, deadline or exercise combination.
    KeyError
        Unknown exercise.
    """
    global _next_goal_id
    _require_profile()
    if kind not in _GOAL_KINDS:
        raise ValueError(f"unknown goal kind {kind!r}; expected one of {_GOAL_KINDS}")
    if target <= 0:
        raise ValueError("target must be positive")
    if kind == "max_weight":
        if exercise_id is None:
            raise ValueError("a max_weight goal needs an exercise_id")
        if not _require_exercise(exercise_id).weighted:
            raise ValueError(f"{exercise_id} is a bodyweight exercise; max_weight goals need a weighted one")
    elif exercise_id is not None:
        raise ValueError(f"exercise_id is only used by max_weight goals, not {kind}")
    if kind == "weekly_workouts" and target != int(target):
        raise ValueError("weekly_workouts target must be a whole number")
    if deadline is not None and deadline < date.today():
        raise ValueError("deadline cannot be in the past")

    goal = Goal(_next_goal_id, kind, float(target), exercise_id, deadline, date.today())
    GOALS[_next_goal_id] = goal
    _next_goal_id += 1
    return goal


def check_goal_progress(goal_id: int) -> GoalProgress:
    """
    Compute how far along a goal is.

    Parameters
    ----------
    goal_id : int

    Returns
    -------
    GoalProgress
        ``percent`` is capped at 100.

    Raises
    ------
    KeyError
        Unknown goal.
    """
    goal = GOALS.get(goal_id)
    if goal is None:
        raise KeyError(f"no goal with id {goal_id!r}")
    start, end = _week_bounds(date.today())
    if goal.kind == "weekly_workouts":
        current = float(sum(1 for w in WORKOUTS.values() if start <= w["started_at"].date() <= end))
    elif goal.kind == "weekly_volume":
        current = round(sum(s.volume_kg for _, _, s in _sets_in(start, end)), 2)
    else:
        current = max(
            (
                s.weight_kg or 0.0
                for e in ENTRIES.values()
                if e["exercise_id"] == goal.exercise_id
                for s in e["sets"]
            ),
            default=0.0,
        )
    percent = round(min(100.0, 100.0 * current / goal.target), 1)
    return GoalProgress(goal_id, current, goal.target, percent, current >= goal.target)


def delete_goal(goal_id: int) -> None:
    """
    Remove a goal.

    Raises
    ------
    KeyError
        Unknown goal.
    """
    if goal_id not in GOALS:
        raise KeyError(f"no goal with id {goal_id!r}")
    del GOALS[goal_id]


def weekly_summary(week_of: Optional[date] = None) -> WeeklySummary:
    """
    Summarise one Monday-to-Sunday week.

    Parameters
    ----------
    week_of : date, optional
        Any day in the week to summarise; defaults to today.

    Returns
    -------
    WeeklySummary
        ``target_met`` is ``None`` when the profile has no weekly target.

    Raises
    ------
    RuntimeError
        No profile set up.
    """
    profile = _require_profile()
    start, end = _week_bounds(week_of or date.today())
    workouts = [w for w in WORKOUTS.values() if start <= w["started_at"].date() <= end]
    by_group: dict[str, float] = defaultdict(float)
    n_sets = 0
    for _, entry, s in _sets_in(start, end):
        n_sets += 1
        by_group[EXERCISES[entry["exercise_id"]].muscle_group] += s.volume_kg
    total = round(sum(by_group.values()), 2)
    target = profile.weekly_workout_target
    return WeeklySummary(
        week_start=start,
        week_end=end,
        workouts=len(workouts),
        sets=n_sets,
        total_volume_kg=total,
        volume_by_muscle_group={k: round(v, 2) for k, v in sorted(by_group.items())},
        active_days=len({w["started_at"].date() for w in workouts}),
        target_met=None if target is None else len(workouts) >= target,
    )
