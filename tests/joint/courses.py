"""An evening school's course desk: courses with seats, enrolments numbered from 100, grades.

Module functions over module globals. Course ids and enrolment numbers are small integers; a score is checked to
lie between 0 and 100 before the enrolment is looked up.
"""

from __future__ import annotations

FIXTURES = {"student_email": "sam@student.test"}

_COURSES: dict[int, dict] = {
    1: {"course_id": 1, "title": "Pottery for beginners", "seats": 8, "taken": 8},
    2: {"course_id": 2, "title": "Conversational Italian", "seats": 12, "taken": 5},
    3: {"course_id": 3, "title": "Bookkeeping basics", "seats": 10, "taken": 1},
}
_ENROLMENTS: dict[int, dict] = {
    100: {"enrolment_id": 100, "course_id": 2, "email": "ali@student.test", "score": None},
}


def _enrolment(enrolment_id: int) -> dict:
    if enrolment_id not in _ENROLMENTS:
        raise KeyError(f"no enrolment {enrolment_id}")
    return _ENROLMENTS[enrolment_id]


def list_courses() -> list[dict]:
    """Every course this term.

    :returns: Each course's id, title and free seats.
    """
    return [
        {"course_id": c["course_id"], "title": c["title"], "free": c["seats"] - c["taken"]} for c in _COURSES.values()
    ]


def add_course(title: str, seats: int) -> dict:
    """Open a new course.

    :param title: The course's title.
    :param seats: How many students it takes.
    :returns: The new course's id.
    """
    if not title.strip():
        raise ValueError("a course needs a title")
    if not 1 <= seats <= 40:
        raise ValueError("a course takes 1 to 40 students")
    number = 1 + max(_COURSES)
    _COURSES[number] = {"course_id": number, "title": title.strip(), "seats": seats, "taken": 0}
    return {"course_id": number, "title": title.strip()}


def enrol(course_id: int, email: str) -> dict:
    """Enrol a student in a course with a free seat.

    :param course_id: The course.
    :param email: The student's e-mail address.
    :returns: The enrolment's number.
    """
    if course_id not in _COURSES:
        raise KeyError(f"no course {course_id}")
    course = _COURSES[course_id]
    if course["taken"] >= course["seats"]:
        raise ValueError(f"course {course_id} is full")
    if "@" not in email:
        raise ValueError("the student's e-mail address is needed")
    course["taken"] += 1
    number = 1 + max(_ENROLMENTS)
    _ENROLMENTS[number] = {"enrolment_id": number, "course_id": course_id, "email": email, "score": None}
    return {"enrolment_id": number, "course_id": course_id}


def get_enrolment(enrolment_id: int) -> dict:
    """One enrolment.

    :param enrolment_id: The enrolment's number.
    :returns: The enrolment, with its score once graded.
    """
    return dict(_enrolment(enrolment_id))


def drop(enrolment_id: int) -> dict:
    """Withdraw an enrolment; its seat is freed.

    :param enrolment_id: The enrolment's number.
    :returns: The enrolment's number and the course it was in.
    """
    enrolment = _ENROLMENTS.pop(enrolment_id, None)
    if enrolment is None:
        raise KeyError(f"no enrolment {enrolment_id}")
    _COURSES[enrolment["course_id"]]["taken"] -= 1
    return {"enrolment_id": enrolment_id, "course_id": enrolment["course_id"]}


def grade(enrolment_id: int, score: int) -> dict:
    """Record a student's final score.

    :param enrolment_id: The enrolment's number.
    :param score: The score, 0 to 100.
    :returns: The enrolment's number and score.
    """
    if not 0 <= score <= 100:
        raise ValueError("a score is between 0 and 100")
    enrolment = _enrolment(enrolment_id)
    enrolment["score"] = score
    return {"enrolment_id": enrolment_id, "score": score}


def roster(course_id: int) -> list[dict]:
    """The students of a course.

    :param course_id: The course.
    :returns: Each enrolment's number and e-mail address.
    """
    if course_id not in _COURSES:
        raise KeyError(f"no course {course_id}")
    return [
        {"enrolment_id": e["enrolment_id"], "email": e["email"]}
        for e in _ENROLMENTS.values()
        if e["course_id"] == course_id
    ]


DESIGNED = [
    ("list_courses", "enrol", None, "course_id", "course_id"),
    ("list_courses", "roster", None, "course_id", "course_id"),
    ("add_course", "enrol", None, "course_id", "course_id"),
    ("enrol", "get_enrolment", None, "enrolment_id", "enrolment_id"),
    ("enrol", "drop", None, "enrolment_id", "enrolment_id"),
    ("enrol", "grade", None, "enrolment_id", "enrolment_id"),
    ("roster", "get_enrolment", None, "enrolment_id", "enrolment_id"),
    ("roster", "grade", None, "enrolment_id", "enrolment_id"),
]
