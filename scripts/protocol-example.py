#!/usr/bin/env python3
"""A launchservicesd client in plain Python, written from docs/PROTOCOL.md alone.

usage: scripts/protocol-example.py [--hex] URL        open URL, print the outcome as JSON
       scripts/protocol-example.py [--hex] --query T  ask status | apps | running
The socket is $LAUNCHSERVICES_SOCKET, else $XDG_RUNTIME_DIR/launchservices/socket.
--hex also prints every frame sent and received, as hex.
"""
import json, os, socket, struct, sys

KINDS = {0x01: "hello", 0x02: "welcome", 0x03: "failure", 0x10: "open", 0x11: "openResult",
         0x12: "canOpen", 0x13: "canOpenResult", 0x20: "query", 0x21: "queryResult"}


def field(tag, payload):
    return struct.pack(">BI", tag, len(payload)) + payload


def frame(kind, request_id, fields):
    body = struct.pack(">BI", kind, request_id) + b"".join(fields)
    return struct.pack(">I", len(body)) + body


def parse_fields(data):
    fields, offset = [], 0
    while offset < len(data):
        tag, length = struct.unpack_from(">BI", data, offset)
        offset += 5
        fields.append((tag, data[offset:offset + length]))
        offset += length
    return fields


def decode(body):
    kind, request_id = struct.unpack_from(">BI", body, 0)
    fields = parse_fields(body[5:])
    first = {}
    for tag, value in fields:
        first.setdefault(tag, value)
    text = lambda tag: first[tag].decode() if tag in first else None
    name = KINDS.get(kind, hex(kind))
    if name == "welcome":
        return request_id, {"kind": name, "version": struct.unpack(">Q", first[1])[0], "identity": text(2)}
    if name == "failure":
        return request_id, {"kind": name, "code": text(1), "message": text(2), "phase": text(3)}
    if name == "openResult":
        result = {"kind": name, "opened": first[1] == b"\x01", "app": text(2), "launched": first.get(7) == b"\x01",
                  "method": text(6), "phasesNs": {}}
        for tag, value in fields:
            if tag == 8:
                timing = dict(parse_fields(value))
                result["phasesNs"][timing[1].decode()] = struct.unpack(">Q", timing[2])[0]
        if not result["opened"]:
            result["error"] = {"code": text(3), "message": text(4), "phase": text(5)}
        return request_id, result
    if name == "queryResult":
        return request_id, {"kind": name, "document": json.loads(text(1))}
    return request_id, {"kind": name, "fields": {t: v.hex() for t, v in fields}}


def main(argv):
    show_hex = "--hex" in argv
    argv = [a for a in argv if a != "--hex"]
    if not argv:
        sys.exit(__doc__)
    path = os.environ.get("LAUNCHSERVICES_SOCKET") or os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "launchservices/socket")
    hello = frame(0x01, 0, [field(1, struct.pack(">Q", 1)), field(2, b"client"), field(3, b"protocol-example")])
    if argv[0] == "--query":
        request = frame(0x20, 1, [field(1, argv[1].encode())])
    else:
        request = frame(0x10, 1, [field(1, argv[0].encode())])
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(path)
    sock.sendall(hello + request)  # the hello need not be awaited: one write, one round trip
    if show_hex:
        print("sent:", hello.hex(" "), "|", request.hex(" "), file=sys.stderr)
    buffered = b""
    while True:
        while len(buffered) < 4 or len(buffered) < 4 + struct.unpack(">I", buffered[:4])[0]:
            chunk = sock.recv(65536)
            if not chunk:
                sys.exit("launchservicesd closed the connection")
            buffered += chunk
        length = struct.unpack(">I", buffered[:4])[0]
        raw, buffered = buffered[:4 + length], buffered[4 + length:]
        if show_hex:
            print("received:", raw.hex(" "), file=sys.stderr)
        request_id, message = decode(raw[4:])
        if message["kind"] == "welcome":
            continue
        if request_id in (0, 1):
            print(json.dumps(message, indent=2))
            return 0 if message.get("opened", message["kind"] == "queryResult") else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
