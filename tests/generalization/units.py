"""Units, dates and places: small conversion helpers, documented in NumPy style.

Every input is checked in code: a unit must be one of a fixed set (the error message lists them), a Unix timestamp
must not be before 1980, a date must be ISO ``YYYY-MM-DD``, a city must be one the gazetteer knows.

Designed relations:

- ``date_to_timestamp -> timestamp_to_date`` and ``timestamp_to_date -> date_to_timestamp``: a timestamp and a
  date, each accepted by the other tool. Any other valid timestamp (or date) works as well, so these are
  *compatibility* relations; a provenance claim here would mean the control was an invalid value.
- ``locate_city -> timezone_at`` (latitude and longitude): only coordinates near a known city have a time zone in
  this gazetteer; constructed coordinates are refused (provenance), another located city's would do
  (compatibility).
- ``distance_between -> convert_length`` (compatibility, unit -> from_unit): the distance's unit is a valid source
  unit, as any other unit would be.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timezone

LENGTH_UNITS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048, "mi": 1609.344}
MIN_TIMESTAMP = 315532800  # 1980-01-01T00:00:00Z

_CITIES = {
    "paris": (48.8566, 2.3522, "Europe/Paris"),
    "tokyo": (35.6762, 139.6503, "Asia/Tokyo"),
    "nairobi": (-1.2921, 36.8219, "Africa/Nairobi"),
    "lima": (-12.0464, -77.0428, "America/Lima"),
    "toronto": (43.6532, -79.3832, "America/Toronto"),
}


def _haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(a))


def convert_length(value: float, from_unit: str, to_unit: str) -> dict:
    """Convert a length from one unit to another.

    Parameters
    ----------
    value : float
        The length to convert.
    from_unit : str
        The unit of ``value``.
    to_unit : str
        The unit to convert to.

    Returns
    -------
    dict
        The converted value and its unit.
    """
    for u in (from_unit, to_unit):
        if u not in LENGTH_UNITS:
            raise ValueError(f"unknown unit {u!r}: use one of {', '.join(LENGTH_UNITS)}")
    return {"value": value * LENGTH_UNITS[from_unit] / LENGTH_UNITS[to_unit], "unit": to_unit}


def date_to_timestamp(day: str) -> dict:
    """The Unix timestamp of midnight UTC on a date.

    Parameters
    ----------
    day : str
        The date in ISO form, YYYY-MM-DD.

    Returns
    -------
    dict
        The timestamp in seconds.
    """
    try:
        d = date.fromisoformat(day)
    except ValueError:
        raise ValueError(f"day must be an ISO date YYYY-MM-DD, got {day!r}") from None
    return {"timestamp": int(datetime(d.year, d.month, d.day, tzinfo=timezone.utc).timestamp())}


def timestamp_to_date(timestamp: int) -> dict:
    """The calendar date (UTC) of a Unix timestamp.

    Parameters
    ----------
    timestamp : int
        Seconds since the Unix epoch; dates before 1980 are not supported.

    Returns
    -------
    dict
        The date in ISO form and its weekday.
    """
    if timestamp < MIN_TIMESTAMP:
        raise ValueError(f"timestamp must be on or after 1980-01-01 ({MIN_TIMESTAMP})")
    dt = datetime.fromtimestamp(timestamp, tz=timezone.utc)
    return {"day": dt.date().isoformat(), "weekday": dt.strftime("%A")}


def locate_city(city: str) -> dict:
    """Coordinates of a city centre.

    Parameters
    ----------
    city : str
        The city's name, e.g. Paris or Tokyo.

    Returns
    -------
    dict
        The latitude and longitude in degrees.
    """
    entry = _CITIES.get(city.strip().lower())
    if entry is None:
        raise KeyError(f"city {city!r} is not in the gazetteer")
    return {"latitude": entry[0], "longitude": entry[1]}


def timezone_at(latitude: float, longitude: float) -> dict:
    """The time zone at a place, for places within 50 km of a known city.

    Parameters
    ----------
    latitude : float
        Degrees north, -90 to 90.
    longitude : float
        Degrees east, -180 to 180.

    Returns
    -------
    dict
        The IANA time zone name.
    """
    if not -90 <= latitude <= 90 or not -180 <= longitude <= 180:
        raise ValueError("latitude must be within [-90, 90] and longitude within [-180, 180]")
    for lat, lon, tz in _CITIES.values():
        if _haversine_km(latitude, longitude, lat, lon) <= 50:
            return {"timezone": tz}
    raise LookupError("no known city within 50 km of that place")


def distance_between(lat1: float, lon1: float, lat2: float, lon2: float) -> dict:
    """Great-circle distance between two places.

    Parameters
    ----------
    lat1, lon1 : float
        Latitude and longitude of the first place, in degrees.
    lat2, lon2 : float
        Latitude and longitude of the second place, in degrees.

    Returns
    -------
    dict
        The distance and its unit (km).
    """
    for lat in (lat1, lat2):
        if not -90 <= lat <= 90:
            raise ValueError("latitudes must be within [-90, 90]")
    for lon in (lon1, lon2):
        if not -180 <= lon <= 180:
            raise ValueError("longitudes must be within [-180, 180]")
    return {"distance": round(_haversine_km(lat1, lon1, lat2, lon2), 3), "unit": "km"}


# Where another existing record would serve as well (another contact's number, another order of the same customer),
# a control drawn from the observed values succeeds and the test rightly concludes compatibility; a constructed
# control is refused and it concludes provenance. Either is the designed dependency, so VALUE accepts both.
from . import VALUE  # the suite's declarations start here

DESIGNED = [
    ("units.date_to_timestamp", "units.timestamp_to_date", "compatibility", "timestamp", "timestamp"),
    ("units.timestamp_to_date", "units.date_to_timestamp", "compatibility", "day", "day"),
    ("units.locate_city", "units.timezone_at", VALUE, "latitude", "latitude"),
    ("units.locate_city", "units.timezone_at", VALUE, "longitude", "longitude"),
    ("units.distance_between", "units.convert_length", "compatibility", "unit", "from_unit"),
]

EXCLUDED = [
    # Any valid date or timestamp is accepted: provenance would rest on an invalid control.
    ("units.date_to_timestamp", "units.timestamp_to_date", "provenance", None, None),
    ("units.timestamp_to_date", "units.date_to_timestamp", "provenance", None, None),
    # A weekday is not a date; a time zone is not a unit.
    (None, None, None, "weekday", None),
    (None, None, None, "timezone", None),
    # A converted length is not a coordinate.
    ("units.convert_length", None, None, None, None),
]
