"""A weather service client whose every call needs an API key.

The key is issued to the developer out of band and is not in the sandbox's fixtures, so no call can succeed in a
build: nothing can be learned, and the build must say so (a health warning) rather than end as a quiet success
with no relations.
"""

from __future__ import annotations

import hashlib

_KEY_SHA256 = hashlib.sha256(b"wk_live_8d1f0c3a9b7e4d52a6c1").hexdigest()
_STATIONS = {"oslo": "ENGM", "madrid": "LEMD", "cairo": "HECA"}


def _check_key(api_key: str) -> None:
    if hashlib.sha256(api_key.encode()).hexdigest() != _KEY_SHA256:
        raise PermissionError("401 Unauthorized: invalid API key")


def find_station(city: str, api_key: str) -> dict:
    """The weather station that serves a city.

    Args:
        city: The city's name.
        api_key: Your API key.

    Returns:
        The station's code.
    """
    _check_key(api_key)
    code = _STATIONS.get(city.lower())
    if code is None:
        raise KeyError(f"no station serves {city!r}")
    return {"station": code}


def current_conditions(station: str, api_key: str) -> dict:
    """Current temperature and sky at a station.

    Args:
        station: The station's code.
        api_key: Your API key.

    Returns:
        Temperature in Celsius and a short description.
    """
    _check_key(api_key)
    if station not in _STATIONS.values():
        raise KeyError(f"unknown station {station!r}")
    return {"temperature_c": 11.5, "sky": "overcast"}


def forecast(station: str, days: int, api_key: str) -> dict:
    """Daily forecast for a station.

    Args:
        station: The station's code.
        days: How many days ahead (1 to 7).
        api_key: Your API key.

    Returns:
        One entry per day with the high and low temperature.
    """
    _check_key(api_key)
    if station not in _STATIONS.values():
        raise KeyError(f"unknown station {station!r}")
    if not 1 <= days <= 7:
        raise ValueError("days must be between 1 and 7")
    return {"days": [{"day": i + 1, "high_c": 14.0, "low_c": 6.0} for i in range(days)]}


def air_quality(city: str, api_key: str) -> dict:
    """Air quality index of a city.

    Args:
        city: The city's name.
        api_key: Your API key.

    Returns:
        The index (0 to 500).
    """
    _check_key(api_key)
    if city.lower() not in _STATIONS:
        raise KeyError(f"no data for {city!r}")
    return {"aqi": 42}


EXPECT_HEALTH_WARNING = True

#: The author designed find_station -> current_conditions/forecast, but a build without the key cannot see them;
#: what this catalog tests is that the build says so, so nothing is listed as designed.
DESIGNED: list = []

EXCLUDED = [
    # Nothing ever succeeds, so any relation would be invented.
    (None, None, None, None, None),
]
