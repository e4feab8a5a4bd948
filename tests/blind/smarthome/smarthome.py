"""In-memory smart-home hub.

The :class:`SmartHomeHub` keeps track of rooms, paired devices, scenes and
thermostat schedules.  Changing settings (pairing devices, away mode, the
thermostat schedule, the PIN) needs a short-lived settings session obtained by
entering the hub PIN with :meth:`SmartHomeHub.unlock_settings`.

While the hub is in *away mode* lights, plugs and speakers cannot be switched
on and scenes cannot be activated; switching things off is always allowed.
The demo home ships in away mode (the owners are travelling), with the PIN
``1234``.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, replace
from datetime import datetime, time, timedelta
from enum import Enum
from typing import Iterable, Optional, Union

__all__ = [
    "DeviceKind",
    "Room",
    "Device",
    "Scene",
    "SchedulePoint",
    "ThermostatSchedule",
    "SettingsSession",
    "HubError",
    "SettingsLockedError",
    "AwayModeError",
    "SmartHomeHub",
]

DEFAULT_PIN = "1234"
SESSION_MINUTES = 5
MAX_PIN_ATTEMPTS = 3
LOCKOUT_SECONDS = 60


class DeviceKind(str, Enum):
    LIGHT = "light"
    PLUG = "plug"
    THERMOSTAT = "thermostat"
    CAMERA = "camera"
    SPEAKER = "speaker"


# Kinds that may still be switched on while the hub is in away mode.
_AWAY_ALLOWED = {DeviceKind.THERMOSTAT, DeviceKind.CAMERA}


class HubError(Exception):
    """Base class for hub errors."""


class SettingsLockedError(HubError, PermissionError):
    """Raised when a settings operation is attempted without a valid session."""


class AwayModeError(HubError, RuntimeError):
    """Raised when an action is blocked because the hub is in away mode."""


@dataclass(frozen=True)
class Room:
    room_id: str
    name: str


@dataclass(frozen=True)
class Device:
    device_id: str
    name: str
    kind: DeviceKind
    room_id: str
    is_on: bool = False
    brightness: Optional[int] = None  # lights only, 1-100 when on
    paired_at: datetime = field(default_factory=datetime.now)


@dataclass(frozen=True)
class Scene:
    scene_id: str
    name: str
    device_states: dict[str, bool]


@dataclass(frozen=True)
class SchedulePoint:
    """From ``at`` onwards (every day) the thermostat aims for ``target_c``."""

    at: time
    target_c: float


@dataclass(frozen=True)
class ThermostatSchedule:
    device_id: str
    points: tuple[SchedulePoint, ...]


@dataclass(frozen=True)
class SettingsSession:
    token: str
    expires_at: datetime


class SmartHomeHub:
    """A smart-home hub with a small demo home already set up.

    Demo home: rooms ``room-1`` (Living room), ``room-2`` (Kitchen),
    ``room-3`` (Bedroom); devices ``dev-1`` (Floor lamp, light, living room),
    ``dev-2`` (Thermostat, living room), ``dev-3`` (Coffee machine, plug,
    kitchen), ``dev-4`` (Bedside lamp, light, bedroom).  Away mode is on and
    the PIN is ``1234``.
    """

    def __init__(self) -> None:
        self._pin = DEFAULT_PIN
        self._away = True
        self._sessions: dict[str, datetime] = {}
        self._failed_attempts = 0
        self._locked_until: Optional[datetime] = None
        self._rooms: dict[str, Room] = {}
        self._devices: dict[str, Device] = {}
        self._scenes: dict[str, Scene] = {}
        self._schedules: dict[str, ThermostatSchedule] = {}
        self._room_seq = 0
        self._device_seq = 0
        self._scene_seq = 0

        living = self._add_room("Living room")
        kitchen = self._add_room("Kitchen")
        bedroom = self._add_room("Bedroom")
        self._add_device("Floor lamp", DeviceKind.LIGHT, living.room_id)
        self._add_device("Thermostat", DeviceKind.THERMOSTAT, living.room_id)
        self._add_device("Coffee machine", DeviceKind.PLUG, kitchen.room_id)
        self._add_device("Bedside lamp", DeviceKind.LIGHT, bedroom.room_id)

    # ------------------------------------------------------------------ helpers

    def _add_room(self, name: str) -> Room:
        self._room_seq += 1
        room = Room(f"room-{self._room_seq}", name)
        self._rooms[room.room_id] = room
        return room

    def _add_device(self, name: str, kind: DeviceKind, room_id: str) -> Device:
        self._device_seq += 1
        device = Device(f"dev-{self._device_seq}", name, kind, room_id)
        self._devices[device.device_id] = device
        return device

    def _require_session(self, token: str) -> None:
        expires = self._sessions.get(token)
        if expires is None:
            raise SettingsLockedError("settings are locked; unlock them with the hub PIN first")
        if expires <= datetime.now():
            del self._sessions[token]
            raise SettingsLockedError("settings session expired; unlock again with the hub PIN")

    def _require_device(self, device_id: str) -> Device:
        try:
            return self._devices[device_id]
        except KeyError:
            raise KeyError(f"no paired device with id {device_id!r}") from None

    @staticmethod
    def _check_pin_format(pin: str) -> None:
        if not isinstance(pin, str) or not pin.isdigit() or not 4 <= len(pin) <= 8:
            raise ValueError("a PIN is 4 to 8 digits")

    # --------------------------------------------------------------- settings

    def unlock_settings(self, pin: str) -> SettingsSession:
        """Enter the hub PIN to open a settings session.

        The returned token is valid for five minutes and is required by
        :meth:`change_pin`, :meth:`set_away_mode`, :meth:`pair_device` and
        :meth:`set_thermostat_schedule`.  After three wrong PINs in a row the
        hub refuses further attempts for 60 seconds.

        Raises:
            ValueError: The PIN is not 4-8 digits.
            SettingsLockedError: Wrong PIN, or the hub is temporarily locked
                out after too many wrong attempts.
        """
        now = datetime.now()
        if self._locked_until and now < self._locked_until:
            wait = int((self._locked_until - now).total_seconds()) + 1
            raise SettingsLockedError(f"too many wrong PIN attempts; try again in {wait} s")
        self._check_pin_format(pin)
        if not secrets.compare_digest(pin, self._pin):
            self._failed_attempts += 1
            if self._failed_attempts >= MAX_PIN_ATTEMPTS:
                self._failed_attempts = 0
                self._locked_until = now + timedelta(seconds=LOCKOUT_SECONDS)
                raise SettingsLockedError(
                    f"wrong PIN; settings locked for {LOCKOUT_SECONDS} seconds"
                )
            left = MAX_PIN_ATTEMPTS - self._failed_attempts
            raise SettingsLockedError(f"wrong PIN ({left} attempt(s) left)")
        self._failed_attempts = 0
        token = secrets.token_urlsafe(16)
        expires = now + timedelta(minutes=SESSION_MINUTES)
        self._sessions[token] = expires
        return SettingsSession(token, expires)

    def change_pin(self, token: str, new_pin: str) -> None:
        """Replace the hub PIN.

        All other open settings sessions are closed; the one used here stays
        valid.

        Raises:
            SettingsLockedError: ``token`` is missing, wrong or expired.
            ValueError: ``new_pin`` is not 4-8 digits, or is the same as the
                current PIN.
        """
        self._require_session(token)
        self._check_pin_format(new_pin)
        if new_pin == self._pin:
            raise ValueError("the new PIN must differ from the current one")
        self._pin = new_pin
        self._sessions = {token: self._sessions[token]}

    def set_away_mode(self, token: str, enabled: bool) -> bool:
        """Turn away mode on or off.

        Turning it on also switches off every light, plug and speaker.

        Returns:
            The new away-mode state.

        Raises:
            SettingsLockedError: ``token`` is missing, wrong or expired.
        """
        self._require_session(token)
        if not isinstance(enabled, bool):
            raise TypeError("enabled must be True or False")
        self._away = enabled
        if enabled:
            for device_id, d in self._devices.items():
                if d.kind not in _AWAY_ALLOWED and d.is_on:
                    self._devices[device_id] = replace(d, is_on=False, brightness=None)
        return self._away

    # ------------------------------------------------------------ rooms/devices

    def create_room(self, name: str) -> Room:
        """Add a room, e.g. ``"Office"``.  Names are unique (case-insensitive).

        Raises:
            ValueError: Empty name, longer than 30 characters, or already used.
        """
        name = (name or "").strip()
        if not name or len(name) > 30:
            raise ValueError("room name must be 1-30 characters")
        if any(r.name.lower() == name.lower() for r in self._rooms.values()):
            raise ValueError(f"a room called {name!r} already exists")
        return self._add_room(name)

    def list_rooms(self) -> list[Room]:
        """Return all rooms in creation order."""
        return list(self._rooms.values())

    def pair_device(
        self,
        token: str,
        name: str,
        kind: Union[DeviceKind, str],
        room_id: str,
    ) -> Device:
        """Pair a new device and place it in a room.

        New devices start switched off.

        Args:
            token: Settings session token from :meth:`unlock_settings`.
            name: Display name, unique within the room.
            kind: ``light``, ``plug``, ``thermostat``, ``camera`` or ``speaker``.
            room_id: Room to put it in (``"room-1"``...).

        Raises:
            SettingsLockedError: ``token`` is missing, wrong or expired.
            KeyError: Unknown room.
            ValueError: Unknown kind, bad name, or a device with that name is
                already in the room.
        """
        self._require_session(token)
        try:
            kind = DeviceKind(kind)
        except ValueError:
            raise ValueError(
                f"unknown device kind {kind!r}; expected one of {[k.value for k in DeviceKind]}"
            ) from None
        if room_id not in self._rooms:
            raise KeyError(f"no room with id {room_id!r}")
        name = (name or "").strip()
        if not name or len(name) > 40:
            raise ValueError("device name must be 1-40 characters")
        if any(d.room_id == room_id and d.name.lower() == name.lower() for d in self._devices.values()):
            raise ValueError(f"{self._rooms[room_id].name} already has a device called {name!r}")
        return self._add_device(name, kind, room_id)

    def list_devices(
        self,
        room_id: Optional[str] = None,
        kind: Optional[Union[DeviceKind, str]] = None,
    ) -> list[Device]:
        """List paired devices, optionally only those in one room or of one kind.

        Raises:
            KeyError: ``room_id`` is given but unknown.
            ValueError: ``kind`` is not a valid device kind.
        """
        if room_id is not None and room_id not in self._rooms:
            raise KeyError(f"no room with id {room_id!r}")
        kind = DeviceKind(kind) if kind is not None else None
        return [
            d
            for d in self._devices.values()
            if (room_id is None or d.room_id == room_id) and (kind is None or d.kind == kind)
        ]

    def get_device(self, device_id: str) -> Device:
        """Return one device's current state.

        Raises:
            KeyError: Unknown device.
        """
        return self._require_device(device_id)

    def turn_on(self, device_id: str, brightness: Optional[int] = None) -> Device:
        """Switch a device on.

        Args:
            device_id: The device (``"dev-1"``...).
            brightness: 1-100, lights only; defaults to 100 for lights.

        Raises:
            KeyError: Unknown device.
            AwayModeError: Away mode is on and the device is not a thermostat
                or camera.
            ValueError: ``brightness`` given for a non-light, or out of range.
        """
        device = self._require_device(device_id)
        if self._away and device.kind not in _AWAY_ALLOWED:
            raise AwayModeError(
                f"{device.name} cannot be switched on while the hub is in away mode"
            )
        if device.kind is DeviceKind.LIGHT:
            level = 100 if brightness is None else brightness
            if not isinstance(level, int) or not 1 <= level <= 100:
                raise ValueError("brightness must be an integer from 1 to 100")
        else:
            if brightness is not None:
                raise ValueError(f"{device.kind.value} devices have no brightness")
            level = None
        updated = replace(device, is_on=True, brightness=level)
        self._devices[device_id] = updated
        return updated

    def turn_off(self, device_id: str) -> Device:
        """Switch a device off.  Always allowed, also in away mode.

        Raises:
            KeyError: Unknown device.
        """
        device = self._require_device(device_id)
        updated = replace(device, is_on=False, brightness=None)
        self._devices[device_id] = updated
        return updated

    # ------------------------------------------------------------------ scenes

    def create_scene(self, name: str, device_states: dict[str, bool]) -> Scene:
        """Save a scene: a set of devices and whether each should be on or off.

        Example::

            hub.create_scene("Movie night", {"dev-1": False, "dev-4": True})

        Raises:
            ValueError: Empty or duplicate name, or no devices given.
            KeyError: A device id is unknown.
        """
        name = (name or "").strip()
        if not name:
            raise ValueError("scene name must not be empty")
        if any(s.name.lower() == name.lower() for s in self._scenes.values()):
            raise ValueError(f"a scene called {name!r} already exists")
        if not device_states:
            raise ValueError("a scene needs at least one device")
        for device_id, state in device_states.items():
            self._require_device(device_id)
            if not isinstance(state, bool):
                raise ValueError(f"state for {device_id} must be True or False")
        self._scene_seq += 1
        scene = Scene(f"scene-{self._scene_seq}", name, dict(device_states))
        self._scenes[scene.scene_id] = scene
        return scene

    def activate_scene(self, scene_id: str) -> list[Device]:
        """Apply a scene, switching each of its devices on or off.

        Devices that were unpaired since the scene was created are skipped.

        Returns:
            The devices after the change.

        Raises:
            KeyError: Unknown scene.
            AwayModeError: The hub is in away mode.
        """
        scene = self._scenes.get(scene_id)
        if scene is None:
            raise KeyError(f"no scene with id {scene_id!r}")
        if self._away:
            raise AwayModeError("scenes cannot be activated while the hub is in away mode")
        result = []
        for device_id, on in scene.device_states.items():
            if device_id not in self._devices:
                continue
            result.append(self.turn_on(device_id) if on else self.turn_off(device_id))
        return result

    # -------------------------------------------------------------- thermostat

    def set_thermostat_schedule(
        self,
        token: str,
        device_id: str,
        points: Iterable[Union[SchedulePoint, tuple[time, float]]],
    ) -> ThermostatSchedule:
        """Replace the daily schedule of a thermostat.

        Args:
            token: Settings session token from :meth:`unlock_settings`.
            device_id: A device of kind ``thermostat``.
            points: 1-12 :class:`SchedulePoint` (or ``(time, target_c)``
                tuples), e.g. ``[(time(6, 30), 21.0), (time(22, 0), 17.5)]``.
                Times must be distinct; temperatures 5-30 °C in 0.5 steps.

        Returns:
            The stored schedule, sorted by time.

        Raises:
            SettingsLockedError: ``token`` is missing, wrong or expired.
            KeyError: Unknown device.
            ValueError: The device is not a thermostat or the points are invalid.
        """
        self._require_session(token)
        device = self._require_device(device_id)
        if device.kind is not DeviceKind.THERMOSTAT:
            raise ValueError(f"{device.name} is a {device.kind.value}, not a thermostat")
        normalised: list[SchedulePoint] = []
        for p in points:
            if not isinstance(p, SchedulePoint):
                at, target = p
                p = SchedulePoint(at, float(target))
            if not isinstance(p.at, time):
                raise ValueError(f"schedule time must be a datetime.time, got {p.at!r}")
            if not 5 <= p.target_c <= 30 or (p.target_c * 2) != int(p.target_c * 2):
                raise ValueError(f"target {p.target_c} °C must be 5-30 in 0.5 steps")
            normalised.append(p)
        if not 1 <= len(normalised) <= 12:
            raise ValueError("a schedule has between 1 and 12 points")
        times = [p.at for p in normalised]
        if len(set(times)) != len(times):
            raise ValueError("schedule times must be distinct")
        schedule = ThermostatSchedule(device_id, tuple(sorted(normalised, key=lambda p: p.at)))
        self._schedules[device_id] = schedule
        return schedule
