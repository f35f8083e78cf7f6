#!/usr/bin/env python3
"""A launchservicesd client in plain Python (standard library only), written from
docs/PROTOCOL.md alone: an example of the wire protocol, and a check of that document.

usage:
  scripts/protocol-example.py [options] URL              open URL; print the openResult as JSON
  scripts/protocol-example.py [options] --can-open URL   ask whether some app opens URL
  scripts/protocol-example.py [options] --query TOPIC    status | apps | schemes | conflicts | running | pasteboards | history
  scripts/protocol-example.py [options] --wait URL       call an x-callback-url; print the callback (§6.13)
  scripts/protocol-example.py [options] --pasteboard OP  copy | paste | clear (§6.14), with --name, --text, --type

options:
  --annotation JSON  send a property-list annotation with the open (a JSON string, number,
                     boolean, array or object; e.g. '{"k": [1, 2.5, true]}')
  --app BUNDLE-ID    open in this app instead of the scheme's handler (open tag 4, §6.4)
  --background       deliver without bringing the app to the front (open tag 5, §6.4)
  --program NAME     the program name in the hello (default protocol-example; lsopen sends lsopen)
  --hex              print every frame sent and received to stderr, as an annotated hex dump
  --timeout SECONDS  how long to wait for the answer (default 60)
  --name NAME        the pasteboard (default: the general one)
  --text TEXT        copy: the text to put on the pasteboard
  --type TYPE        copy: the item's type (default public.utf8-plain-text); paste: only this type

The socket is $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket, else
/tmp/launchservices-UID/socket (PROTOCOL.md §1.1).

Exit status: 0 opened / can open / query or pasteboard answered / called back with success; 1 not opened / cannot open / the request
failed; 2 usage; 69 the daemon is unreachable or refused the connection.
"""
import json
import os
import socket
import struct
import sys

MAX_FRAME = 65 << 20           # §2: what a client accepts from the daemon, in body bytes
                               # (the daemon's own limit, 1 MiB by default, is for what it reads)

# §6: kind byte -> (name, {tag: (field name, type)}). Types: u64, str, bool, timing
# (nested: tag 1 phase, tag 2 u64 nanoseconds), plist (§7). "*" marks a repeated tag.
KINDS = {
    0x01: ("hello", {1: ("version", "u64"), 2: ("role", "str"), 3: ("program", "str"), 4: ("bundlePath", "str"), 5: ("dropsVetoedLaunchDelivery", "bool")}),
    0x02: ("welcome", {1: ("version", "u64"), 2: ("identity", "str")}),
    0x03: ("failure", {1: ("code", "str"), 2: ("message", "str"), 3: ("phase", "str")}),
    0x10: ("open", {1: ("url", "str"), 2: ("annotation", "plist"), 3: ("returnTo", "str"), 4: ("app", "str"), 5: ("background", "bool")}),
    0x11: ("openResult", {1: ("opened", "bool"), 2: ("app", "str"), 3: ("code", "str"), 4: ("message", "str"),
                          5: ("phase", "str"), 6: ("method", "str"), 7: ("launched", "bool"), 8: ("timings*", "timing"),
                          9: ("launchState", "str"), 10: ("totalNanoseconds", "u64")}),
    0x12: ("canOpen", {1: ("url", "str")}),
    0x13: ("canOpenResult", {1: ("canOpen", "bool"), 2: ("app", "str")}),
    0x14: ("awaitCallback", {}),
    0x15: ("callbackAddress", {1: ("url", "str")}),
    0x16: ("callback", {1: ("url", "str"), 2: ("sourceApplication", "str")}),
    0x20: ("query", {1: ("topic", "str")}),
    0x21: ("queryResult", {1: ("json", "str")}),
    0x22: ("command", {1: ("verb", "str"), 2: ("arguments*", "str")}),
    0x30: ("launchMethod", {1: ("phase", "str"), 2: ("url", "str"), 3: ("sourceApplication", "str"), 4: ("annotation", "plist"), 5: ("warning", "str"),
                            6: ("background", "bool")}),
    0x31: ("deliver", {2: ("url", "str"), 3: ("sourceApplication", "str"), 4: ("annotation", "plist"), 5: ("warning", "str"),
                       6: ("background", "bool"), 7: ("ofLaunch", "bool")}),
    0x32: ("notify", {1: ("notification", "str")}),
    0x33: ("phaseResult", {1: ("accepted", "bool"), 2: ("method", "str")}),
    0x40: ("pasteboard", {1: ("operation", "str"), 2: ("name", "str"), 3: ("items*", "item"), 4: ("type", "str"),
                          5: ("password", "str"), 6: ("expireSeconds", "u64"), 7: ("persistent", "bool")}),
    0x41: ("pasteboardResult", {1: ("name", "str"), 2: ("changeCount", "u64"), 3: ("items*", "item"),
                                4: ("expiresInSeconds", "u64"), 5: ("persistent", "bool"), 6: ("passwordProtected", "bool")}),
}
KIND_BY_NAME = {name: kind for kind, (name, _) in KINDS.items()}


class ProtocolError(Exception):
    pass


# ---- encoding (§2, §3, §7) ----

def field(tag, value):
    """u8 tag, u32 big-endian length, the value bytes."""
    return struct.pack(">BI", tag, len(value)) + value


def frame(kind_name, request_id, fields):
    body = struct.pack(">BI", KIND_BY_NAME[kind_name], request_id) + b"".join(fields)
    return struct.pack(">I", len(body)) + body


def plist(value):
    """One property-list value as one field whose tag is its type (§7)."""
    if isinstance(value, str):
        return field(0x01, value.encode())
    if isinstance(value, bool):              # before int: bool is an int in Python
        return field(0x04, b"\x01" if value else b"\x00")
    if isinstance(value, int):
        return field(0x02, struct.pack(">q", value))
    if isinstance(value, float):
        return field(0x03, struct.pack(">d", value))
    if isinstance(value, list):
        return field(0x06, b"".join(plist(item) for item in value))
    if isinstance(value, dict):
        return field(0x07, b"".join(field(0x10, key.encode()) + plist(item) for key, item in value.items()))
    raise ValueError("a property list holds no %r" % (value,))


def open_fields(url, options):
    """The fields of an open (§6.4): the URL, then the optional annotation, app and
    background, in ascending tag order as the project's encoders write them."""
    fields = [field(1, url.encode())]
    if options["--annotation"] is not None:
        fields.append(field(2, plist(json.loads(options["--annotation"]))))
    if options["--app"] is not None:
        fields.append(field(4, options["--app"].encode()))
    if options["--background"]:
        fields.append(field(5, b"\x01"))
    return fields


# ---- decoding ----

def split_fields(data):
    """[(tag, value bytes)] of a body's (or a nested value's) fields; bounds-checked."""
    fields, offset = [], 0
    while offset < len(data):
        if len(data) - offset < 5:
            raise ProtocolError("truncated field header at offset %d" % offset)
        tag, length = struct.unpack_from(">BI", data, offset)
        offset += 5
        if length > len(data) - offset:
            raise ProtocolError("field %d declares %d bytes, %d remain" % (tag, length, len(data) - offset))
        fields.append((tag, data[offset:offset + length]))
        offset += length
    return fields


def decode_plist(data):
    (tag, value), = split_fields(data)       # exactly one value
    if tag == 0x01: return value.decode("utf-8", "replace")
    if tag == 0x02: return struct.unpack(">q", value)[0]
    if tag == 0x03: return struct.unpack(">d", value)[0]
    if tag == 0x04: return value == b"\x01"
    if tag == 0x05: return {"data": value.hex()}
    items = split_fields(value)
    if tag == 0x06: return [decode_plist(field(t, v)) for t, v in items]
    if tag == 0x07: return {items[i][1].decode(): decode_plist(field(*items[i + 1])) for i in range(0, len(items), 2)}
    raise ProtocolError("unknown property-list type tag %d" % tag)


def decode_value(kind_type, value):
    if kind_type == "u64":
        if len(value) != 8: raise ProtocolError("a u64 is 8 bytes, not %d" % len(value))
        return struct.unpack(">Q", value)[0]
    if kind_type == "bool":
        if value not in (b"\x00", b"\x01"): raise ProtocolError("a boolean is one byte, 0 or 1")
        return value == b"\x01"
    if kind_type == "str":
        return value.decode("utf-8", "replace")
    if kind_type == "timing":
        nested = {}
        for tag, v in split_fields(value):
            nested.setdefault(tag, v)         # first occurrence wins; unknown tags ignored
        return {"phase": nested[1].decode(), "nanoseconds": decode_value("u64", nested[2])}
    if kind_type == "plist":
        return decode_plist(value)
    if kind_type == "item":                   # §6.14: nested tag 1 type, tag 2 raw bytes
        nested = {}
        for tag, v in split_fields(value):
            nested.setdefault(tag, v)
        data = nested[2]
        try:
            return {"type": nested[1].decode(), "text": data.decode("utf-8")}
        except UnicodeDecodeError:
            return {"type": nested[1].decode(), "hex": data.hex()}


def decode(body):
    """A frame body -> (kind name, request id, {field name: value}). §3.2: unknown tags are
    ignored; a repeated tag counts only where the table says so, else the first one wins."""
    if len(body) < 5:
        raise ProtocolError("body shorter than a kind byte and a request id")
    kind, request_id = struct.unpack_from(">BI", body, 0)
    if kind not in KINDS:
        raise ProtocolError("unknown message kind 0x%02x" % kind)
    name, table = KINDS[kind]
    message = {}
    for tag, value in split_fields(body[5:]):
        if tag not in table:
            continue
        field_name, kind_type = table[tag]
        if field_name.endswith("*"):
            message.setdefault(field_name[:-1], []).append(decode_value(kind_type, value))
        elif field_name not in message:
            message[field_name] = decode_value(kind_type, value)
    return name, request_id, message


# ---- the annotated hex dump (--hex) ----

def hexdump(raw, direction, out=sys.stderr):
    body = raw[4:]
    kind, request_id = struct.unpack_from(">BI", body, 0)
    name, table = KINDS.get(kind, ("unknown kind", {}))
    print("%s %s, %d bytes:" % (direction, name, len(raw)), file=out)
    row = lambda data, note, indent="": print(("  %-56s %s" % (indent + data.hex(" "), note)).rstrip(), file=out)
    row(raw[:4], "length %d" % len(body))
    row(body[:1], "kind 0x%02x %s" % (kind, name))
    row(body[1:5], "request id %d" % request_id)

    def fields_of(data, table, indent):
        for tag, value in split_fields(data):
            field_name, kind_type = table.get(tag, ("unknown tag, ignored", "raw"))
            header = field(tag, value)[:5]
            if kind_type in ("timing", "item"):
                row(header, "tag %d %s (%d bytes, nested):" % (tag, field_name.rstrip("*"), len(value)), indent)
                nested = {1: ("phase", "str"), 2: ("nanoseconds", "u64")} if kind_type == "timing" else {1: ("type", "str"), 2: ("data", "str")}
                fields_of(value, nested, indent + "   ")
                continue
            if kind_type == "plist":
                row(header, "tag %d %s (%d bytes, one property-list value):" % (tag, field_name, len(value)), indent)
                plist_of(value, indent + "   ")
                continue
            shown = decode_value(kind_type, value) if kind_type != "raw" else value.hex()
            chunks = [value[:11]] + [value[i:i + 16] for i in range(11, len(value), 16)]
            row(header + chunks[0], "tag %d %s = %s" % (tag, field_name.rstrip("*"), json.dumps(shown, ensure_ascii=False)), indent)
            for chunk in chunks[1:]:
                row(chunk, "", indent + "               ")

    def plist_of(data, indent):
        names = {1: "string", 2: "integer", 3: "real", 4: "boolean", 5: "data", 6: "array", 7: "dictionary", 0x10: "key"}
        for tag, value in split_fields(data):
            if tag in (6, 7):
                row(field(tag, value)[:5], "%s (%d bytes):" % (names[tag], len(value)), indent)
                plist_of(value, indent + "   ")
            else:
                shown = value.decode() if tag in (1, 0x10) else decode_plist(field(tag, value))
                row(field(tag, value), "%s %s" % (names.get(tag, "tag %d" % tag), json.dumps(shown)), indent)

    fields_of(body[5:], table, "")


# ---- the connection (§1, §5.1) ----

def socket_path():
    for candidate in (os.environ.get("LAUNCHSERVICES_SOCKET"),
                      os.environ.get("XDG_RUNTIME_DIR") and os.environ["XDG_RUNTIME_DIR"] + "/launchservices/socket"):
        if candidate:
            return candidate
    return "/tmp/launchservices-%d/socket" % os.getuid()


def frames(sock, show_hex):
    """Yields each complete frame's body; several may arrive in one read, or one in several."""
    buffered = b""
    while True:
        while len(buffered) >= 4:
            length = struct.unpack(">I", buffered[:4])[0]
            if length < 5 or length > MAX_FRAME:
                raise ProtocolError("frame length %d is outside 5 … %d" % (length, MAX_FRAME))
            if len(buffered) < 4 + length:
                break
            raw, buffered = buffered[:4 + length], buffered[4 + length:]
            if show_hex:
                hexdump(raw, "received")
            yield raw[4:]
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("launchservicesd closed the connection")
        buffered += chunk


def main(argv):
    options = {"--annotation": None, "--program": "protocol-example", "--timeout": "60", "--query": None, "--can-open": None,
               "--wait": None, "--pasteboard": None, "--name": None, "--text": None, "--type": None, "--app": None, "--background": False}
    show_hex, rest = False, []
    args = list(argv)
    while args:
        arg = args.pop(0)
        if arg == "--hex":
            show_hex = True
        elif arg == "--background":
            options["--background"] = True
        elif arg in options and args:
            options[arg] = args.pop(0)
        elif arg in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            rest.append(arg)
    if options["--wait"] is not None:
        return wait(options, show_hex)
    if options["--pasteboard"] is not None:
        fields = [field(1, options["--pasteboard"].encode())]
        if options["--name"] is not None:
            fields.append(field(2, options["--name"].encode()))
        if options["--pasteboard"] == "copy":
            item = field(1, (options["--type"] or "public.utf8-plain-text").encode()) + field(2, (options["--text"] or "").encode())
            fields.append(field(3, item))
        elif options["--type"] is not None:
            fields.append(field(4, options["--type"].encode()))
        request = frame("pasteboard", 1, fields)
    elif options["--query"] is not None:
        request = frame("query", 1, [field(1, options["--query"].encode())])
    elif options["--can-open"] is not None:
        request = frame("canOpen", 1, [field(1, options["--can-open"].encode())])
    elif len(rest) == 1:
        request = frame("open", 1, open_fields(rest[0], options))
    else:
        print(__doc__, file=sys.stderr)
        return 2

    hello = frame("hello", 0, [field(1, struct.pack(">Q", 1)), field(2, b"client"), field(3, options["--program"].encode())])
    path = socket_path()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(float(options["--timeout"]))
    identity = None
    try:
        sock.connect(path)
        if show_hex:
            hexdump(hello, "sent")
            hexdump(request, "sent")
        sock.sendall(hello + request)    # §5.1: the hello need not be awaited; one write
        for body in frames(sock, show_hex):
            name, request_id, message = decode(body)
            if name == "welcome":
                identity = message["identity"]
            elif name == "failure" and request_id == 0:     # the connection is refused or broken
                print(json.dumps({"kind": name, **message}, indent=2))
                return 69
            elif request_id == 1:
                result = {"kind": name, "identity": identity, **message}
                if name == "queryResult":
                    result["json"] = json.loads(message["json"])
                print(json.dumps(result, indent=2, ensure_ascii=False))
                if name == "failure":
                    return 1
                return 0 if message.get("opened", message.get("canOpen", name in ("queryResult", "pasteboardResult"))) else 1
    except socket.timeout:
        print(json.dumps({"kind": "timedOut", "socket": path, "message": "no answer within %s s" % options["--timeout"]}, indent=2))
        return 69
    except ProtocolError as error:
        print(json.dumps({"kind": "protocolError", "socket": path, "message": str(error)}, indent=2))
        return 69
    except OSError as error:             # ConnectionError included: refused, reset, closed
        print(json.dumps({"kind": "daemonUnreachable", "socket": path, "message": str(error)}, indent=2))
        return 69
    finally:
        sock.close()


def wait(options, show_hex):
    """§6.13: reserve a callback address (request 1), open the URL naming it (request 2),
    then read until both the openResult and the callback have come, in either order."""
    from urllib.parse import quote
    hello = frame("hello", 0, [field(1, struct.pack(">Q", 1)), field(2, b"client"), field(3, options["--program"].encode())])
    reserve = frame("awaitCallback", 1, [])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(float(options["--timeout"]))
    result = {}
    try:
        sock.connect(socket_path())
        for raw in (hello, reserve):
            if show_hex: hexdump(raw, "sent")
        sock.sendall(hello + reserve)
        for body in frames(sock, show_hex):
            name, request_id, message = decode(body)
            if name == "failure":
                print(json.dumps({"kind": name, **message}, indent=2))
                return 1 if request_id else 69
            if name == "callbackAddress":
                url = options["--wait"]
                address = message["url"]
                extra = "&".join("%s=%s" % (k, quote(address + "/" + v, safe="")) for k, v in
                                 (("x-success", "success"), ("x-error", "error"), ("x-cancel", "cancel")))
                url += ("&" if "?" in url else "?") + "x-source=protocol-example&" + extra
                request = frame("open", 2, open_fields(url, options))
                if show_hex: hexdump(request, "sent")
                sock.sendall(request)
            elif name == "openResult":
                result["openResult"] = message
                if not message.get("opened"):
                    break
            elif name == "callback":
                result["callback"] = message
            if "openResult" in result and "callback" in result:
                break
    except (socket.timeout, OSError, ProtocolError) as error:
        result["error"] = str(error)
    finally:
        sock.close()
    print(json.dumps(result, indent=2, ensure_ascii=False))
    return 0 if "callback" in result and "/success" in result["callback"]["url"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
