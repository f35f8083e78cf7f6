#!/usr/bin/python3
"""A D-Bus activatable test app for the daemon's tests: what a DBusActivatable=true desktop
entry names. It owns NAME on the bus that started it (DBUS_STARTER_ADDRESS, else
DBUS_SESSION_BUS_ADDRESS: always a private bus the test runs, never the user's) and
implements org.freedesktop.Application (Activate, Open, ActivateAction) at the object path the
Desktop Entry specification derives from NAME. Every call is appended to RECORD as one JSON
line (method, uris, platform_data, pid, sender), first a "started" line with its pid, so the
test reads exactly what arrived and stops the app by that pid.

--mode says how Open is answered: "answer" (an empty reply), "error" (the D-Bus error
org.example.Error.Refused with a message full of quotes and separators), "silent" (never),
or "late" (once the file TRIGGER exists; then a "replied" line). The app exits when the bus
goes away, or on SIGTERM.

Run by Debian's /usr/bin/python3 with python3-dbus and python3-gi (scripts/test installs them).
"""
import argparse
import json
import os
import signal
import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

INTERFACE = "org.freedesktop.Application"
REFUSAL_NAME = "org.example.Error.Refused"
REFUSAL_MESSAGE = "no thanks: \"quoted\" 'single' ; #frag \u00e9"


def object_path(name):
    return "/" + name.replace(".", "/").replace("-", "_")


def plain(value):
    """A D-Bus value as JSON can carry it."""
    if isinstance(value, (dbus.Array, list)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Int32, dbus.UInt32, dbus.Int64, dbus.UInt64, dbus.Int16, dbus.UInt16, dbus.Byte)):
        return int(value)
    return str(value)


class Application(dbus.service.Object):
    def __init__(self, bus, name, record, mode, trigger):
        super().__init__(bus, object_path(name))
        self.record_path = record
        self.mode = mode
        self.trigger = trigger
        self.held = []

    def record(self, entry):
        entry["pid"] = os.getpid()
        with open(self.record_path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=True) + "\n")

    @dbus.service.method(INTERFACE, in_signature="a{sv}", out_signature="", sender_keyword="sender")
    def Activate(self, platform_data, sender=None):
        self.record({"method": "Activate", "uris": [], "platform_data": plain(platform_data), "sender": str(sender)})

    @dbus.service.method(INTERFACE, in_signature="asa{sv}", out_signature="", sender_keyword="sender",
                         async_callbacks=("reply", "fail"))
    def Open(self, uris, platform_data, sender=None, reply=None, fail=None):
        self.record({"method": "Open", "uris": [str(u) for u in uris], "platform_data": plain(platform_data), "sender": str(sender)})
        if self.mode == "answer":
            reply()
        elif self.mode == "error":
            fail(dbus.exceptions.DBusException(REFUSAL_MESSAGE, name=REFUSAL_NAME))
        elif self.mode == "late":
            self.held.append(reply)
            GLib.timeout_add(20, self.reply_when_triggered)
        else:
            self.held.append(reply)  # silent: never answered

    def reply_when_triggered(self):
        if not os.path.exists(self.trigger):
            return True
        while self.held:
            self.held.pop(0)()
        self.record({"method": "replied", "uris": [], "platform_data": {}, "sender": ""})
        return False

    @dbus.service.method(INTERFACE, in_signature="sava{sv}", out_signature="", sender_keyword="sender")
    def ActivateAction(self, action, parameter, platform_data, sender=None):
        self.record({"method": "ActivateAction", "action": str(action), "uris": [], "parameter": plain(parameter),
                     "platform_data": plain(platform_data), "sender": str(sender)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--name", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--mode", choices=["answer", "error", "silent", "late"], default="answer")
    parser.add_argument("--trigger", default="")
    args = parser.parse_args()

    address = os.environ.get("DBUS_STARTER_ADDRESS") or os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    if not address:
        sys.exit("dbus_test_app: neither DBUS_STARTER_ADDRESS nor DBUS_SESSION_BUS_ADDRESS is set")
    loop = GLib.MainLoop()
    bus = dbus.bus.BusConnection(address, mainloop=DBusGMainLoop())
    bus.set_exit_on_disconnect(True)
    app = Application(bus, args.name, args.record, args.mode, args.trigger)
    app.record({"method": "started", "uris": [], "platform_data": {}, "sender": ""})
    # Owned after the object is exported, so no call can find the name without the object.
    name = dbus.service.BusName(args.name, bus, do_not_queue=True)
    GLib.unix_signal_add(GLib.PRIORITY_HIGH, signal.SIGTERM, loop.quit)
    loop.run()
    del name


if __name__ == "__main__":
    main()
