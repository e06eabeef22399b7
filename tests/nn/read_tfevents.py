#!/usr/bin/env python3
"""An independent reader of TensorBoard event files, written from the
format's description (no TensorFlow, no protobuf library): TFRecords
(uint64 length, masked CRC-32C of the length bytes, data, masked CRC-32C
of the data, little-endian) holding Event messages, decoded field by
field from the protobuf wire format.

Prints one line per event: "version,<file_version>" or
"scalar,<step>,<tag>,<value>". Exits 1 with a message on any framing,
checksum or encoding error."""
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def masked(data):
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def varint(buf, pos):
    shift = value = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return value, pos


def fields(buf):
    """(field number, wire type, value) of every field of a message."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value, pos = buf[pos:pos + 8], pos + 8
        elif wire == 2:
            n, pos = varint(buf, pos)
            value, pos = buf[pos:pos + n], pos + n
        elif wire == 5:
            value, pos = buf[pos:pos + 4], pos + 4
        else:
            raise ValueError("wire type %d" % wire)
        if pos > len(buf):
            raise ValueError("truncated field %d" % field)
        yield field, wire, value


def records(data):
    pos = 0
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError("truncated record header at %d" % pos)
        head = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", head)
        (crc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        if crc != masked(head):
            raise ValueError("bad length checksum at %d" % pos)
        body = data[pos + 12:pos + 12 + length]
        end = pos + 12 + length
        if len(body) != length or end + 4 > len(data):
            raise ValueError("truncated record at %d" % pos)
        (crc,) = struct.unpack("<I", data[end:end + 4])
        if crc != masked(body):
            raise ValueError("bad data checksum at %d" % pos)
        yield body
        pos = end + 4


def event_lines(body):
    step = 0
    out = []
    for field, wire, value in fields(body):
        if field == 2 and wire == 0:
            step = value
        elif field == 3 and wire == 2:
            out.append("version,%s" % value.decode())
        elif field == 5 and wire == 2:
            for f, w, v in fields(value):
                if f == 1 and w == 2:
                    tag, simple = None, None
                    for vf, vw, vv in fields(v):
                        if vf == 1 and vw == 2:
                            tag = vv.decode()
                        elif vf == 2 and vw == 5:
                            (simple,) = struct.unpack("<f", vv)
                    out.append(("scalar", tag, simple))
    return [l if isinstance(l, str) else "scalar,%d,%s,%.9g" % (step, l[1], l[2])
            for l in out]


def main():
    with open(sys.argv[1], "rb") as f:
        data = f.read()
    try:
        for body in records(data):
            for line in event_lines(body):
                print(line)
    except ValueError as e:
        print("error: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
