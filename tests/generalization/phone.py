"""A phone's quick settings and the actions they gate.

The device starts with every radio on, as a phone usually is. Each setting is a switch that takes a bool; an
action that needs a radio refuses while it is off. Settings and the call log live in module globals.

Designed relations: each switch enables the actions that need its radio (a state relation). From the fresh state
every action already works, so the relation is only seen by turning the radio off, watching the action fail, and
turning it on again (off -> on, a chain of two state changes).
"""

from __future__ import annotations

_settings: dict[str, bool] = {"wifi": True, "cellular": True, "location_service": True}
_call_log: list[dict] = []
_synced_photos: int = 0


def _require(setting: str, action: str) -> None:
    if not _settings[setting]:
        raise PermissionError(f"cannot {action}: {setting.replace('_', ' ')} is turned off")


def set_wifi(enabled: bool) -> dict:
    """Turn Wi-Fi on or off.

    Args:
        enabled: True to turn Wi-Fi on, False to turn it off.

    Returns:
        The new Wi-Fi setting.
    """
    _settings["wifi"] = bool(enabled)
    return {"wifi": _settings["wifi"]}


def set_cellular(enabled: bool) -> dict:
    """Turn cellular service (calls, texts and mobile data) on or off.

    Args:
        enabled: True to turn cellular service on, False to turn it off.

    Returns:
        The new cellular setting.
    """
    _settings["cellular"] = bool(enabled)
    return {"cellular": _settings["cellular"]}


def set_location_service(enabled: bool) -> dict:
    """Turn the location service (GPS) on or off.

    Args:
        enabled: True to let apps use the device location, False to turn it off.

    Returns:
        The new location setting.
    """
    _settings["location_service"] = bool(enabled)
    return {"location_service": _settings["location_service"]}


def get_settings() -> dict:
    """Show the current quick settings of the phone.

    Returns:
        Each setting's name and whether it is on.
    """
    return dict(_settings)


def call_number(number: str) -> dict:
    """Place a phone call.

    Args:
        number: The number to dial, e.g. +14155550123.

    Returns:
        The call's id and the number dialled.
    """
    _require("cellular", "place a call")
    if not number.strip():
        raise ValueError("number must not be empty")
    call = {"call_id": len(_call_log) + 1, "number": number}
    _call_log.append(call)
    return call


def get_current_location() -> dict:
    """Where the phone is now.

    Returns:
        The latitude and longitude of the device.
    """
    _require("location_service", "read the location")
    return {"latitude": 48.8584, "longitude": 2.2945}


def sync_photos() -> dict:
    """Upload new photos to the cloud backup. Large uploads only run over Wi-Fi.

    Returns:
        How many photos were uploaded.
    """
    global _synced_photos
    _require("wifi", "sync photos")
    uploaded = 12 - _synced_photos
    _synced_photos = 12
    return {"uploaded": uploaded}


DESIGNED = [
    ("phone.set_cellular", "phone.call_number", "state", None, None),
    ("phone.set_location_service", "phone.get_current_location", "state", None, None),
    ("phone.set_wifi", "phone.sync_photos", "state", None, None),
]

EXCLUDED = [
    # A switch enables only the actions that need its own radio.
    ("phone.set_wifi", "phone.call_number", None, None, None),
    ("phone.set_wifi", "phone.get_current_location", None, None, None),
    ("phone.set_cellular", "phone.get_current_location", None, None, None),
    ("phone.set_cellular", "phone.sync_photos", None, None, None),
    ("phone.set_location_service", "phone.call_number", None, None, None),
    ("phone.set_location_service", "phone.sync_photos", None, None, None),
    # Reading the settings changes nothing and enables nothing.
    ("phone.get_settings", None, None, None, None),
]
