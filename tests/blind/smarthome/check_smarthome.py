"""Exercise smarthome.py and show that every dependency in DEPENDENCIES.json is real.

Run:  /work/blind/.venv/bin/python check_smarthome.py
"""

import json
import sys
from datetime import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from smarthome import (  # noqa: E402
    AwayModeError,
    DeviceKind,
    SchedulePoint,
    SettingsLockedError,
    SmartHomeHub,
)

checked = set()
SCHEDULE = [(time(6, 30), 21.0), (time(22, 0), 17.5)]


def fails(fn, *args, exc=Exception, **kwargs):
    try:
        fn(*args, **kwargs)
    except exc:
        return True
    raise AssertionError(f"{fn.__name__}{args}{kwargs} unexpectedly succeeded")


def home_mode(hub):
    hub.set_away_mode(hub.unlock_settings("1234").token, False)


def test_token_consumers():
    calls = {
        "change_pin": lambda hub, t: hub.change_pin(t, "9876"),
        "set_away_mode": lambda hub, t: hub.set_away_mode(t, False),
        "pair_device": lambda hub, t: hub.pair_device(t, "Desk lamp", "light", "room-1"),
        "set_thermostat_schedule": lambda hub, t: hub.set_thermostat_schedule(t, "dev-2", SCHEDULE),
    }
    for consumer, call in calls.items():
        hub = SmartHomeHub()
        fails(call, hub, "not-a-token", exc=SettingsLockedError)
        fails(call, hub, "", exc=PermissionError)
        token = hub.unlock_settings("1234").token
        call(hub, token)
        checked.add(("unlock_settings", consumer))


def test_away_mode_gates():
    hub = SmartHomeHub()
    fails(hub.turn_on, "dev-1", exc=AwayModeError)
    hub.turn_on("dev-2")  # thermostat allowed while away
    scene = hub.create_scene("Morning", {"dev-1": True, "dev-3": True})
    fails(hub.activate_scene, scene.scene_id, exc=AwayModeError)
    hub.turn_off("dev-1")  # always allowed (not_dependency set_away_mode -> turn_off)
    home_mode(hub)
    assert hub.turn_on("dev-1", brightness=40).brightness == 40
    checked.add(("set_away_mode", "turn_on"))
    devices = hub.activate_scene(scene.scene_id)
    assert all(d.is_on for d in devices)
    checked.add(("set_away_mode", "activate_scene"))
    # going away again switches the lights and plugs off, not the thermostat
    hub.set_away_mode(hub.unlock_settings("1234").token, True)
    assert not hub.get_device("dev-1").is_on and not hub.get_device("dev-3").is_on
    assert hub.get_device("dev-2").is_on


def test_room_id_providers():
    for provider in ("create_room", "list_rooms"):
        hub = SmartHomeHub()
        token = hub.unlock_settings("1234").token
        fails(hub.pair_device, token, "Heater", "plug", "Office", exc=KeyError)
        if provider == "create_room":
            room_id = hub.create_room("Office").room_id
        else:
            room_id = [r for r in hub.list_rooms() if r.name == "Kitchen"][0].room_id
        dev = hub.pair_device(token, "Heater", "plug", room_id)
        assert dev.room_id == room_id and dev.kind is DeviceKind.PLUG
        checked.add((provider, "pair_device"))


def test_device_id_consumers():
    consumers = {
        "get_device": lambda hub, d: hub.get_device(d),
        "turn_on": lambda hub, d: hub.turn_on(d),
        "turn_off": lambda hub, d: hub.turn_off(d),
        "create_scene": lambda hub, d: hub.create_scene("S", {d: True}),
    }
    for provider in ("pair_device", "list_devices"):
        for consumer, call in consumers.items():
            hub = SmartHomeHub()
            home_mode(hub)
            fails(call, hub, "dev-99", exc=KeyError)
            fails(call, hub, "Floor lamp", exc=KeyError)
            if provider == "pair_device":
                token = hub.unlock_settings("1234").token
                device_id = hub.pair_device(token, "Speaker", DeviceKind.SPEAKER, "room-3").device_id
            else:
                device_id = hub.list_devices(room_id="room-2")[0].device_id
            call(hub, device_id)
            checked.add((provider, consumer))
        # thermostat schedule
        hub = SmartHomeHub()
        token = hub.unlock_settings("1234").token
        fails(hub.set_thermostat_schedule, token, "dev-99", SCHEDULE, exc=KeyError)
        fails(hub.set_thermostat_schedule, token, "dev-1", SCHEDULE, exc=ValueError)  # a lamp
        if provider == "pair_device":
            device_id = hub.pair_device(token, "Bedroom thermostat", "thermostat", "room-3").device_id
        else:
            device_id = hub.list_devices(kind="thermostat")[0].device_id
        sched = hub.set_thermostat_schedule(token, device_id, list(reversed(SCHEDULE)))
        assert [p.at for p in sched.points] == [time(6, 30), time(22, 0)]
        checked.add((provider, "set_thermostat_schedule"))


def test_create_scene__activate_scene():
    hub = SmartHomeHub()
    home_mode(hub)
    fails(hub.activate_scene, "scene-1", exc=KeyError)
    scene = hub.create_scene("Night", {"dev-1": False, "dev-4": True})
    fails(hub.turn_on, scene.scene_id, exc=KeyError)  # scene id is not a device id
    hub.activate_scene(scene.scene_id)
    assert hub.get_device("dev-4").is_on
    checked.add(("create_scene", "activate_scene"))


def test_pin_and_validation():
    hub = SmartHomeHub()
    fails(hub.unlock_settings, "12", exc=ValueError)
    fails(hub.unlock_settings, "0000", exc=SettingsLockedError)
    fails(hub.unlock_settings, "0001", exc=SettingsLockedError)
    fails(hub.unlock_settings, "0002", exc=SettingsLockedError)  # now locked out
    fails(hub.unlock_settings, "1234", exc=SettingsLockedError)  # even the right PIN

    hub = SmartHomeHub()
    t1 = hub.unlock_settings("1234").token
    t2 = hub.unlock_settings("1234").token
    fails(hub.change_pin, t1, "1234", exc=ValueError)
    hub.change_pin(t1, "5555")
    fails(hub.set_away_mode, t2, False, exc=SettingsLockedError)  # other sessions closed
    hub.set_away_mode(t1, False)
    fails(hub.unlock_settings, "1234", exc=SettingsLockedError)
    hub.unlock_settings("5555")

    hub = SmartHomeHub()
    token = hub.unlock_settings("1234").token
    fails(hub.pair_device, token, "X", "toaster", "room-1", exc=ValueError)
    fails(hub.pair_device, token, "Floor lamp", "light", "room-1", exc=ValueError)
    fails(hub.create_room, "kitchen", exc=ValueError)
    fails(hub.create_scene, "Empty", {}, exc=ValueError)
    fails(hub.create_scene, "Rooms", {"room-1": True}, exc=KeyError)
    fails(hub.set_thermostat_schedule, token, "dev-2", [(time(6), 40.0)], exc=ValueError)
    fails(hub.set_thermostat_schedule, token, "dev-2", [(time(6), 20.0), (time(6), 18.0)], exc=ValueError)
    hub.set_thermostat_schedule(token, "dev-2", [SchedulePoint(time(7), 20.5)])
    home_mode(hub)
    fails(hub.turn_on, "dev-3", brightness=50, exc=ValueError)
    fails(hub.turn_on, "dev-1", brightness=0, exc=ValueError)
    assert len(hub.list_devices()) == 4 and len(hub.list_devices(kind="light")) == 2
    fails(hub.list_devices, room_id="room-9", exc=KeyError)


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
