#!/usr/bin/env python3
"""Writes the seed inputs of the fuzz corpus (python3, standard library only).

    python3 fuzz/seeds.py            # from the repository root

Sources: the byte vectors of the spec (schema.md §5, vectors.md B1-B4, copied below) and the
golden fixtures in tests/fixtures (shape_protos.jsonl / layout_protos.jsonl `input_hex`, the
`input` strings of shapes.jsonl / layouts.jsonl, hlo/*.pb). Files are named by the SHA-1 of their
content, as libFuzzer names them, so re-running is idempotent and duplicates collapse.

Input formats (see fuzz/src/lib.rs): `decode` = one selector byte (0 ShapeProto, 1 LayoutProto,
2 ProgramShapeProto, 3 HloModuleProto) followed by the serialized message; `text` = the string;
`index` = choices read byte by byte (a few fixed patterns seed it); `cli` = one byte that picks a
form of `CLI_FORMS` (same order as below), then the operand lines, then stdin.
"""

import hashlib
import json
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
CORPUS = ROOT / "fuzz" / "corpus"

SHAPE, LAYOUT, PROGRAM, HLO = 0, 1, 2, 3

# schema.md §5 and vectors.md B1-B4 (hex, as printed there).
SPEC_VECTORS = [
    (SHAPE, "10 0b 1a 02 02 03 2a 07 0a 02 01 00 80 01 01 32 02 00 00"),
    (SHAPE, "10 0b 1a 02 02 03 2a 04 0a 02 01 00"),
    (SHAPE, "10 0b 2a 03 80 01 01"),
    (SHAPE, "10 11"),
    (SHAPE, "10 0e"),
    (SHAPE, "10 0d"),
    (SHAPE, "10 0d 22 10 10 0b 1a 01 02 2a 06 0a 01 00 80 01 01 32 01 00 22 07 10 04 2a 03 80 01 01"),
    (SHAPE, "10 0b 1a 02 03 05 2a 0d 0a 02 01 00 32 04 0a 02 02 02 80 01 01 32 02 00 00"),
    (SHAPE, "10 0b 1a 02 0a 03 2a 07 0a 02 01 00 80 01 01 32 02 01 00"),
    (SHAPE, "10 0b 1a 0c 80 80 80 80 80 80 80 80 80 01 90 06 2a 07 0a 02 01 00 80 01 01 32 02 01 00"),
    (SHAPE, "10 15 1a 01 08 2a 08 0a 01 00 38 04 80 01 01 32 01 00"),
    (SHAPE, "10 22 22 13 10 04 1a 02 03 04 2a 07 0a 02 01 00 80 01 01 32 02 00 00"),
    (SHAPE, "10 0b 1a 02 04 08 2a 13 0a 02 01 00 32 04 0a 02 02 04 32 04 0a 02 02 01 80 01 01 32 02 00 00"),
    (SHAPE, "10 23 1a 01 04 2a 06 0a 01 00 80 01 01 32 01 00"),
    (SHAPE, "10 24 1a 01 04 2a 06 0a 01 00 80 01 01 32 01 00"),
    (SHAPE, "10 0b 1a 02 02 03 2a 06 0a 02 01 00 20 01"),
    (SHAPE, "10 0b 1a 02 02 03 2a 0c 0a 02 00 01 12 02 03 05 18 01 20 01"),
    (SHAPE, "10 0b 1a 02 0a 14 2a 0a 0a 02 01 00 12 02 0f 15 20 01"),
    (SHAPE, "10 0b 2a 02 20 01"),
    (SHAPE, "10 0b 1a 0a ff ff ff ff ff ff ff ff ff 01"),
    (SHAPE, "10 0b 98 06 01"),
    (SHAPE, "08 02 10 0b"),
    (SHAPE, "10 0b 2a 03 98 06 01"),
    (LAYOUT, "0a 02 01 00 32 0e 0a 0c 80 80 80 80 80 80 80 80 80 01 80 01 80 01 01"),
    (LAYOUT, "0a 01 00 40 01 80 01 01"),
    (LAYOUT, "0a 02 00 01 80 01 01 8a 01 03 12 01 03 8a 01 06 08 01 12 02 00 04"),
    (LAYOUT, "0a 02 01 00 4a 02 00 01 80 01 01"),
    (LAYOUT, "0a 02 00 01 12 02 03 05 18 01 20 01"),
    (LAYOUT, "0a 01 00 20 02 28 0a"),
    (LAYOUT, "0a 02 01 00 6a 02 01 01 72 02 01 01 80 01 01"),
    (PROGRAM, "0a 07 10 0b 2a 03 80 01 01 12 07 10 0b 2a 03 80 01 01 1a 01 78"),
]

# libFuzzer's default -max_len; longer seeds would only be truncated.
MAX_LEN = 4096


def write(target, data):
    if len(data) > MAX_LEN:
        return
    directory = CORPUS / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


def jsonl(name):
    with open(FIXTURES / name, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def depth_input(record):
    """Rebuilds a `depth_N` input of shapes.jsonl (see tests/fixtures/README.md)."""
    n = int(record["category"].split("_")[1])
    if record["category"].endswith("_buffer_leaf"):
        return "(" * (n - 2) + "b(s32[2])" + ")" * (n - 2)
    return "(" * (n - 1) + "f32[]" + ")" * (n - 1)


# The forms of fuzz/src/lib.rs `CLI_FORMS`, in order, by the input each one reads.
CLI_FORMS = [
    "hex-lines:shape", "hex-lines:layout", "hex-lines:program", "hex-lines:shape",
    "bytes:shape", "bytes:layout", "bytes:program", "hex:shape", "hex:shape",
    "hlo:module", "hlo:proto", "hlo:snapshot",
    "text-lines", "text-lines", "text-lines", "text-lines", "text-lines", "text-lines",
    "shape+indices", "shape+slots", "shape+index", "shape+slot",
    "shape", "shape", "shape", "shape", "layout-string",
    "hex-shape+indices", "hex-shape", "hex-shape",
]

INDICES = ["0,0", "1,2", "", "1", "-1,0", "99,99", "0,x"]
SLOTS = ["0", "1", "5", "4095", "x", "18446744073709551615"]


def length_delimited(field, data):
    """`data` as protobuf field `field` (wire type 2)."""
    out, n = bytearray([field << 3 | 2]), len(data)
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out) + data


def cli_seeds():
    """Inputs for every `cli` form from the fixtures: a handful each, chosen deterministically."""
    shapes = [r for r in jsonl("shapes.jsonl") if r["status"] == "ok" and r["input"] is not None]
    strings = [r["input"] for r in shapes if len(r["input"]) < 60]
    layouts = [r["input"] for r in jsonl("layouts.jsonl")]
    protos = {
        "shape": [r["input_hex"] for r in jsonl("shape_protos.jsonl") if r["input_hex"] is not None],
        "layout": [r["input_hex"] for r in jsonl("layout_protos.jsonl")],
        "program": [h for s, h in SPEC_VECTORS if s == PROGRAM],
    }
    modules = [pb.read_bytes() for pb in sorted((FIXTURES / "hlo").glob("*.pb"))]
    wrap = {"module": lambda m: m, "proto": lambda m: length_delimited(1, m),
            "snapshot": lambda m: length_delimited(1, length_delimited(1, m))}
    small = [r for r in shapes if r["proto_hex"] and len(r["input"]) < 40][::9]
    for selector, kind in enumerate(CLI_FORMS):
        head, _, what = kind.partition(":")
        inputs = []
        if head == "hex-lines":
            hexes = protos[what]
            inputs = ["\n".join(hexes[i::5][:20]) + "\n" for i in range(5)]
        elif head in ("bytes", "hex"):
            inputs = [bytes.fromhex(h) if head == "bytes" else h for h in protos[what][::7]]
        elif head == "hlo":
            inputs = [wrap[what](m) for m in modules]
        elif head == "text-lines":
            inputs = ["\n".join(strings[i::6][:25]) + "\n" for i in range(6)]
            inputs.append("\n".join(layouts[::3]) + "\n")
        elif kind == "layout-string":
            inputs = layouts[::4]
        elif kind.startswith("hex-shape"):
            rest = "\n".join(INDICES) if kind.endswith("indices") else ""
            inputs = [r["proto_hex"] + "\n" + rest for r in small]
        else:
            extra = {"shape": [], "shape+indices": INDICES, "shape+slots": SLOTS,
                     "shape+index": INDICES[:1], "shape+slot": SLOTS[1:2]}[kind]
            inputs = [r["input"] + "\n" + "\n".join(extra) for r in small]
        for data in inputs:
            write("cli", bytes([selector]) + (data if isinstance(data, bytes) else data.encode("utf-8")))


def main():
    for selector, hex_bytes in SPEC_VECTORS:
        write("decode", bytes([selector]) + bytes.fromhex(hex_bytes))
    for record in jsonl("shape_protos.jsonl"):
        # Deep generated tuples have no hex; the adversarial tests build those.
        if record["input_hex"] is not None:
            write("decode", bytes([SHAPE]) + bytes.fromhex(record["input_hex"]))
    for record in jsonl("layout_protos.jsonl"):
        write("decode", bytes([LAYOUT]) + bytes.fromhex(record["input_hex"]))
    for pb in sorted((FIXTURES / "hlo").glob("*.pb")):
        write("decode", bytes([HLO]) + pb.read_bytes())
    for record in jsonl("shapes.jsonl"):
        text = record["input"] if record["input"] is not None else depth_input(record)
        write("text", text.encode("utf-8"))
    for record in jsonl("layouts.jsonl"):
        write("text", record["input"].encode("utf-8"))
    for i in range(16):
        write("index", bytes((i * 37 + k * 11) % 256 for k in range(48)))
    cli_seeds()
    literal_seeds()
    sharding_seeds()
    named_sharding_seeds()
    hlo_text_seeds()


def hlo_text_seeds():
    """Target `hlo_text`: every HLO text fixture (real XLA's printer output); none names an
    absolute path (tests/it/hygiene.rs holds every tracked file to that)."""
    for path in sorted([*(FIXTURES / "hlo_text").glob("*.txt"), *(FIXTURES / "hlo").glob("*.hlo.txt"),
                        *(FIXTURES / "literals").glob("*.hlo.txt")]):
        write("hlo_text", path.read_bytes())


def literal_seeds():
    """Target `literal`: selector 0 + a LiteralProto (every constant XLA serialized in
    tests/fixtures/literals/constants.jsonl), selector 1 + an HloSnapshot."""
    for line in (FIXTURES / "literals" / "constants.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["status"] == "ok":
            write("literal", bytes([0]) + bytes.fromhex(record["literal_hex"]))
    write("literal", bytes([1]) + (FIXTURES / "literals" / "snapshot.pb").read_bytes())


def sharding_seeds():
    """Target `sharding`: selector 0 + sharding text, selector 1 + OpSharding bytes (every input
    of tests/fixtures/shardings/, valid or not)."""
    for record in jsonl("shardings/text.jsonl"):
        write("sharding", bytes([0]) + record["input"].encode("utf-8"))
    for record in jsonl("shardings/proto.jsonl"):
        write("sharding", bytes([1]) + bytes.fromhex(record["input_hex"]))
    for record in jsonl("shardings/named_text.jsonl"):
        write("sharding", bytes([0]) + record["input"].encode("utf-8"))
    for record in jsonl("shardings/named_proto.jsonl"):
        write("sharding", bytes([1]) + bytes.fromhex(record["input_hex"]))


def named_sharding_seeds():
    """Target `named_sharding`: OpSharding bytes, every input of
    tests/fixtures/shardings/named_proto.jsonl and the bytes XLA wrote for named_text.jsonl."""
    for record in jsonl("shardings/named_proto.jsonl"):
        write("named_sharding", bytes.fromhex(record["input_hex"]))
    for record in jsonl("shardings/named_text.jsonl"):
        if record.get("status") == "ok":
            write("named_sharding", bytes.fromhex(record["proto_hex"]))


if __name__ == "__main__":
    main()
