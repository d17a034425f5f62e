"""HLO modules JAX writes (`jax.jit(f).lower(...)`: the lowered module as text and as a
serialized `HloModuleProto`, the compiled module as text and proto) read with `xs.HloModule`,
against XLA's own reading of them (`hlo_module_from_text`) and the values JAX baked in; and the
committed text / proto twins of `tests/fixtures/hlo_text/`."""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from collections import Counter
from typing import Any

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax._src.lib import xla_client as xc
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

import xla_shape as xs

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "hlo_text"

# Small constants (at most 10 elements: XLA prints them in any text form).
SMALL = {
    "f32": np.array([1.5, -2.0, 3.25], np.float32),
    "s8": np.array([[1, -2], [3, 127]], np.int8),
    "bf16": np.array([0.5, -1.75, 3.0, 8.0], ml_dtypes.bfloat16),
    "pred": np.array([True, False, True]),
    "u8": np.array([7, 200, 0, 255, 1], np.uint8),
    "f16": np.array([[0.25, -3.5]], np.float16),
    "s64": np.array([-(2**40), 3, 2**50], np.int64),
}


def small_fn(a: jax.Array, b: jax.Array) -> tuple[jax.Array, ...]:
    return (
        a + SMALL["f32"],
        b * SMALL["s8"],
        a[:1].astype(jnp.bfloat16) * SMALL["bf16"],
        jnp.where(SMALL["pred"], a, 0),
        jnp.zeros(5, jnp.uint8) + SMALL["u8"] + b[0, 0].astype(jnp.uint8),
        jnp.zeros((1, 2), jnp.float16) + SMALL["f16"],
        jnp.zeros(3, jnp.int64) + SMALL["s64"],
    )


SMALL_ARGS = (jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((2, 2), jnp.int8))

BIG = {
    "f32": (np.arange(1000, dtype=np.float32).reshape(10, 100) * 0.5 - 7),
    "s8": ((np.arange(4096) * 37 + 11) % 256 - 128).astype(np.int8).reshape(64, 64),
}


def big_fn(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    return a + BIG["f32"], b ^ BIG["s8"]


BIG_ARGS = (jax.ShapeDtypeStruct((10, 100), jnp.float32), jax.ShapeDtypeStruct((64, 64), jnp.int8))


def module_forms(fn: Any, args: tuple[Any, ...], **jit: Any) -> dict[str, Any]:
    """The lowered and compiled module of ``fn`` as text and serialized proto."""
    lowered = jax.jit(fn, **jit).lower(*args)
    compiled = lowered.compile()
    optimized = compiled.runtime_executable().hlo_modules()[0]
    return {
        "lowered": lowered,
        "compiled": compiled,
        "lowered.txt": lowered.as_text(dialect="hlo").encode(),
        "lowered.pb": lowered.compiler_ir("hlo").as_serialized_hlo_module_proto(),
        "compiled.txt": compiled.as_text().encode(),
        "compiled.pb": optimized.as_serialized_hlo_module_proto(),
        "lowered_name": lowered.compiler_ir("hlo").get_hlo_module().name,
        "compiled_name": optimized.name,
    }


@pytest.fixture(scope="module")
def small() -> dict[str, Any]:
    return module_forms(small_fn, SMALL_ARGS)


@pytest.fixture(scope="module")
def big() -> dict[str, Any]:
    return module_forms(big_fn, BIG_ARGS)


def listing_entries(module: xs.HloModule) -> Counter[tuple[Any, ...]]:
    """The listing's instruction entries: site, kind, shape, sharding (a multiset: a scheduled
    module prints in schedule order, its proto keeps another)."""
    return Counter(
        (e["site"], e["kind"], e["shape"], e.get("sharding"))
        for e in module.shapes()
        if e["kind"] not in ("computation_program_shape", "host_program_shape")
    )


def check_valid(module: xs.HloModule) -> None:
    shapes = module.shapes()
    assert shapes
    for entry in shapes:
        assert entry["valid"] is True, entry
        assert entry["error"] is None, entry
        assert str(xs.Shape.parse(entry["shape"])) == entry["shape"]


def xla_instructions(text: bytes) -> dict[str, str]:
    """`computation / instruction` -> the instruction as XLA prints it (parsed by XLA)."""
    module = xc.hlo.hlo_module_from_text(text.decode())
    out = {}
    for computation in module.computations():
        for instruction in computation.instructions():
            out[f"{computation.name} / {instruction.name}"] = instruction.to_string()
    return out


def braced(text: str, start: int) -> str:
    """The balanced `{...}` at ``text[start]``."""
    depth = 0
    for k in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[k], 0)
        if depth == 0:
            return text[start : k + 1]
    raise AssertionError(text)


def xla_shape_and_sharding(printed: str) -> tuple[str, str | None]:
    """The result shape and the sharding attribute of an instruction as XLA printed it."""
    rhs = printed.split(" = ", 1)[1]
    shape = rhs[: re.search(r" [a-z][a-z0-9-]*\(", rhs).start()]  # type: ignore[union-attr]
    at = printed.find("sharding={")
    return shape, braced(printed, at + len("sharding=")) if at >= 0 else None


@pytest.mark.parametrize("form", ["lowered", "compiled"])
@pytest.mark.parametrize("source", ["path", "bytes"])
def test_jax_module_listing(
    small: dict[str, Any], form: str, source: str, tmp_path: pathlib.Path
) -> None:
    text, proto = small[f"{form}.txt"], small[f"{form}.pb"]
    if source == "path":
        (tmp_path / "m.txt").write_bytes(text)
        (tmp_path / "m.pb").write_bytes(proto)
        from_text = xs.HloModule.load(tmp_path / "m.txt")
        from_proto = xs.HloModule.load(str(tmp_path / "m.pb"))
    else:
        from_text = xs.HloModule.load(text)
        from_proto = xs.HloModule.load(proto)
    name = small[f"{form}_name"]
    assert from_text.name == name
    assert from_proto.name == name
    assert from_text.computation_count == from_proto.computation_count
    assert from_text.computation_count == len(
        xc.hlo.hlo_module_from_text(text.decode()).computations()
    )
    check_valid(from_text)
    check_valid(from_proto)
    assert listing_entries(from_text) == listing_entries(from_proto)
    # every instruction's shape as XLA's parser read and printed it
    xla = xla_instructions(text)
    entries = [e for e in from_text.shapes() if e["kind"] == "instruction"]
    assert len(entries) == len(xla)
    for entry in entries:
        shape, _ = xla_shape_and_sharding(xla[entry["site"]])
        assert entry["shape"] == shape, entry["site"]
    assert isinstance(from_text.listing(), dict)
    assert from_text.listing()["module"] == name


def check_signature(program: xs.ProgramShape, args: tuple[Any, ...], out: Any) -> None:
    assert [(p.dtype, p.dimensions) for p in program.parameters] == [
        (np.dtype(a.dtype), tuple(a.shape)) for a in args
    ]
    result = program.result
    outs = out if isinstance(out, tuple) else (out,)
    elements = result.tuple_shapes if result.is_tuple else (result,)
    assert [(e.dtype, e.dimensions) for e in elements] == [
        (np.dtype(o.dtype), tuple(o.shape)) for o in outs
    ]


@pytest.mark.parametrize("form", ["lowered.txt", "lowered.pb", "compiled.txt", "compiled.pb"])
def test_entry_computation_layout_matches_the_avals(small: dict[str, Any], form: str) -> None:
    module = xs.HloModule.load(small[form])
    program = module.entry_computation_layout
    assert program is not None
    check_signature(program, SMALL_ARGS, jax.eval_shape(small_fn, *SMALL_ARGS))
    assert len(program.parameter_names) == len(SMALL_ARGS)
    # the compiled executable's own view of its parameters
    compiled_layouts = small["compiled"].input_formats[0]
    for param, fmt in zip(program.parameters, compiled_layouts, strict=True):
        assert param.layout is not None
        assert param.layout.major_to_minor == tuple(fmt.layout.major_to_minor)
    assert str(program).startswith("(")


def check_constants(constants: dict[str, Any], expected: dict[str, np.ndarray]) -> None:
    """Each baked-in array is one of the module's constants (same dtype, shape and values)."""
    for name, value in expected.items():
        matches = [
            site
            for site, c in constants.items()
            if isinstance(c, np.ndarray)
            and c.dtype == value.dtype
            and c.shape == value.shape
            and np.array_equal(c, value)
        ]
        assert matches, f"{name}: {value!r} not among {constants}"


@pytest.mark.parametrize("form", ["lowered.txt", "lowered.pb", "compiled.txt", "compiled.pb"])
def test_small_constants(small: dict[str, Any], form: str) -> None:
    constants = xs.HloModule.load(small[form]).constants()
    if form.startswith("lowered"):
        check_constants(constants, SMALL)
    for site, value in constants.items():
        assert "/" in site
        assert isinstance(value, np.ndarray)


def test_text_and_proto_constants_are_equal(small: dict[str, Any], big: dict[str, Any]) -> None:
    for forms in (small, big):
        a = xs.HloModule.load(forms["lowered.txt"]).constants()
        b = xs.HloModule.load(forms["lowered.pb"]).constants()
        assert a.keys() == b.keys()
        for site in a:
            assert a[site].dtype == b[site].dtype
            np.testing.assert_array_equal(a[site], b[site])
    a = xs.HloModule.load(small["compiled.txt"]).constants()
    b = xs.HloModule.load(small["compiled.pb"]).constants()
    assert a.keys() == b.keys()


def test_large_constants(big: dict[str, Any], tmp_path: pathlib.Path) -> None:
    # the lowered text prints every value; the protos hold them
    for form in ("lowered.txt", "lowered.pb", "compiled.pb"):
        check_constants(xs.HloModule.load(big[form]).constants(), BIG)
    # the compiled text elides them: `{...}` is not zeros, it raises
    assert b"constant({...})" in big["compiled.txt"]
    path = tmp_path / "compiled.txt"
    path.write_bytes(big["compiled.txt"])
    module = xs.HloModule.load(path)
    check_valid(module)
    with pytest.raises(xs.Error) as info:
        module.constants()
    assert info.value.kind == "ElidedConstant"
    assert "elided" in str(info.value)
    # XLA's own printing, default (elided) and with every constant
    computation = big["lowered"].compiler_ir("hlo")
    with pytest.raises(xs.Error):
        xs.HloModule.load(computation.as_hlo_text().encode()).constants()
    full = xs.HloModule.load(computation.as_hlo_text(print_large_constants=True).encode())
    check_constants(full.constants(), BIG)


# ---- shardings in the listing ----------------------------------------------------------------


SHARDED = [
    ("2x4", [((8, 16), ("x", None)), ((16, 8), (None, "y"))], [("x", "y"), (("x", "y"), None)]),
    ("2x2x2", [((4, 6, 8), ("x", None, ("y", "z")))], [(None, "y", None)]),
    ("8", [((16, 4), ("x", None)), ((4,), (None,))], [(None,)]),
]

FUNCTIONS = {
    "2x4": lambda a, b: (jnp.tanh(a @ b), a * 2),
    "2x2x2": lambda a: (jnp.tanh(a) * 2,),
    "8": lambda a, b: (jnp.sum(a * b, axis=0),),
}


@pytest.mark.parametrize(("mesh_name", "inputs", "outputs"), SHARDED, ids=[c[0] for c in SHARDED])
def test_shardings_in_the_listing(
    mesh_name: str,
    inputs: list[tuple[tuple[int, ...], tuple[Any, ...]]],
    outputs: list[tuple[Any, ...]],
    meshes: dict[str, Mesh],
) -> None:
    mesh = meshes[mesh_name]
    in_shardings = tuple(NamedSharding(mesh, P(*spec)) for _, spec in inputs)
    out_shardings = tuple(NamedSharding(mesh, P(*spec)) for spec in outputs)
    args = tuple(jax.ShapeDtypeStruct(dims, jnp.float32) for dims, _ in inputs)
    forms = module_forms(
        FUNCTIONS[mesh_name], args, in_shardings=in_shardings, out_shardings=out_shardings
    )
    out_avals = jax.eval_shape(FUNCTIONS[mesh_name], *args)
    for form in ("lowered", "compiled"):
        text = forms[f"{form}.txt"]
        module = xs.HloModule.load(text)
        twin = xs.HloModule.load(forms[f"{form}.pb"])
        check_valid(module)
        assert listing_entries(module) == listing_entries(twin)
        xla = xla_instructions(text)
        by_site = {e["site"]: e for e in module.shapes() if e["kind"] == "instruction"}
        # every sharding as XLA's parser read and printed it
        for site, printed in xla.items():
            _, sharding = xla_shape_and_sharding(printed)
            assert by_site[site].get("sharding") == sharding, site
        # JAX's Shardy attributes (`xla.sdy.sharding`), converted, say what XLA's sharding says
        # (where an instruction has both: JAX's result markers carry the Shardy form only)
        shardy = [e for e in by_site.values() if e.get("shardy") and e.get("sharding")]
        if form == "lowered":
            assert len(shardy) >= len(inputs)
        for e in shardy:
            assert e["shardy"] == e["sharding"], e["site"]
            assert e["shardy_disagrees"] is False
        # the entry parameters carry JAX's shardings
        params = {}
        for site, printed in xla.items():
            found = re.search(r" parameter\((\d+)\)", printed)
            if found and by_site[site].get("sharding") is not None:
                params[int(found.group(1))] = by_site[site]
        assert sorted(params) == list(range(len(inputs)))
        for k, (dims, _) in enumerate(inputs):
            expected = in_shardings[k]._to_xla_hlo_sharding(len(dims))
            assert params[k]["sharding"] == str(expected)
            ours = xs.HloSharding.parse(params[k]["sharding"])
            assert ours == xs.HloSharding.from_jax(in_shardings[k], len(dims))
            shape = xs.Shape.parse(params[k]["shape"])
            if form == "lowered":
                assert shape.dimensions == dims
            else:
                # the partitioned program's parameter: one tile
                assert shape.dimensions == ours.tile_shape(dims, mesh.size)
        # the result's sharding (the lowered module's ROOT tuple): the out_shardings
        if form == "lowered":
            root = by_site[entry_root(text.decode())]
            listed = xs.HloSharding.parse(root["sharding"])
            expected_out = [
                str(s._to_xla_hlo_sharding(len(o.shape)))
                for s, o in zip(out_shardings, out_avals, strict=True)
            ]
            assert [str(e) for e in listed.tuple_elements or (listed,)] == expected_out


def entry_root(text: str) -> str:
    """The site of the entry computation's ROOT instruction, read off the text."""
    lines = iter(text.splitlines())
    for line in lines:
        found = re.match(r"ENTRY %?([^ ]+)", line)
        if found:
            computation = found.group(1)
            break
    for line in lines:
        found = re.match(r"\s*ROOT %?([^ ]+) =", line)
        if found:
            return f"{computation} / {found.group(1)}"
    raise AssertionError("no ROOT in the entry computation")


# ---- the committed fixtures: text and proto twins ----------------------------------------------


def fixture_pairs() -> list[tuple[pathlib.Path, pathlib.Path]]:
    pairs = []
    for text in sorted(FIXTURES.glob("*.txt")):
        name = text.name
        if name.endswith((".lowered.txt", ".compiled.txt")):
            proto = text.with_suffix(".pb")
        else:
            proto = FIXTURES / (name.split(".")[0] + ".pb")
        pairs.append((text, proto))
    return pairs


PAIRS = fixture_pairs()


def test_fixtures_are_there() -> None:
    assert len(PAIRS) >= 26
    assert all(proto.exists() for _, proto in PAIRS)


@pytest.mark.parametrize(("text", "proto"), PAIRS, ids=[t.name for t, _ in PAIRS])
def test_fixture_twins(text: pathlib.Path, proto: pathlib.Path) -> None:
    from_text = xs.HloModule.load(text)
    from_proto = xs.HloModule.load(proto.read_bytes(), format="proto")
    assert from_text.name == from_proto.name
    assert from_text.computation_count == from_proto.computation_count
    assert listing_entries(from_text) == listing_entries(from_proto)
    for module in (from_text, from_proto):
        for entry in module.shapes():
            if entry["valid"]:
                assert str(xs.Shape.parse(entry["shape"])) == entry["shape"]
    text_layout = from_text.entry_computation_layout
    proto_layout = from_proto.entry_computation_layout
    assert (text_layout is None) == (proto_layout is None)
    if text_layout is not None and proto_layout is not None:
        assert [p.dimensions for p in text_layout.parameters] == [
            p.dimensions for p in proto_layout.parameters
        ]
        assert [p.element_type for p in text_layout.parameters] == [
            p.element_type for p in proto_layout.parameters
        ]
    expected = from_proto.constants()
    elided = b"{...}" in text.read_bytes()
    if elided:
        with pytest.raises(xs.Error) as info:
            from_text.constants()
        assert info.value.kind == "ElidedConstant"
        return
    got = from_text.constants()
    assert got.keys() == expected.keys()
    for site, value in expected.items():
        assert_same_value(got[site], value, site)


def assert_same_value(a: Any, b: Any, site: str) -> None:
    if isinstance(b, tuple):
        assert isinstance(a, tuple)
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            assert_same_value(x, y, site)
        return
    if b is None:
        assert a is None
        return
    assert a.dtype == b.dtype, site
    assert a.shape == b.shape, site
    # bitwise (NaNs included)
    assert a.tobytes() == b.tobytes(), site


def test_fixture_text_with_large_constants_equals_proto() -> None:
    large = xs.HloModule.load(FIXTURES / "all_types.large.txt").constants()
    proto = xs.HloModule.load(FIXTURES / "all_types.pb").constants()
    assert large.keys() == proto.keys()
    assert len(large) > 5
    for site, value in proto.items():
        assert_same_value(large[site], value, site)


# ---- errors ------------------------------------------------------------------------------------


def test_load_errors(tmp_path: pathlib.Path) -> None:
    with pytest.raises(xs.ParseError):
        xs.HloModule.load(b"HloModule m\nENTRY e {\n  ROOT x = f32[2]{0} add(\n}\n")
    with pytest.raises(xs.DecodeError):
        xs.HloModule.load(b"\xff\xff\xff\xff")
    with pytest.raises(xs.Error):
        xs.HloModule.load(tmp_path / "missing.txt")
    with pytest.raises(xs.Error):
        xs.HloModule.load(b"HloModule m", format="json")
    text = b"HloModule m\nENTRY e {\n  ROOT c = s32[] constant(4)\n}\n"
    proto = xc.hlo.hlo_module_from_text(text.decode()).as_serialized_hlo_module_proto()
    assert xs.HloModule.load(proto).name == "m"
    assert xs.HloModule.load(text, format="text").name == "m"
    with pytest.raises(xs.ParseError):
        xs.HloModule.load(proto, format="text")
    with pytest.raises(xs.DecodeError):
        xs.HloModule.load(text, format="proto")
    invalid = b"HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,0} parameter(0)\n}\n"
    with pytest.raises(xs.ValidationError):
        xs.HloModule.load(invalid)


def test_repr_names_the_source(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "m.txt"
    path.write_bytes(b"HloModule mod\nENTRY e {\n  ROOT c = s32[] constant(4)\n}\n")
    module = xs.HloModule.load(path)
    assert "mod" in repr(module)
    assert str(path) in repr(module)
    constants = module.constants()
    assert list(constants) == ["e/c"]
    assert constants["e/c"].dtype == np.int32
    assert constants["e/c"].shape == ()
    assert int(constants["e/c"]) == 4
    assert module.arguments() == []
    assert module.result() is None


# ---- XLA's own dumps: HloProto and HloSnapshot (arguments and result of an execution) ----------

SNAPSHOT_SCRIPT = """
import jax, jax.numpy as jnp, numpy as np, ml_dtypes
def snap(a, b, c):
    return a * 2 + b.sum(), b.astype(jnp.bfloat16), c[::-1]
a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
b = np.array([[1, -2], [3, 127]], np.int8)
c = np.array([1, -8, 7, 0, 3], ml_dtypes.int4)
jax.block_until_ready(jax.jit(snap)(a, b, c))
"""


def snapshot_fn(a: Any, b: Any, c: Any) -> tuple[Any, ...]:
    return a * 2 + b.sum(), b.astype(jnp.bfloat16), c[::-1]


SNAPSHOT_ARGS = (
    np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
    np.array([[1, -2], [3, 127]], np.int8),
    np.array([1, -8, 7, 0, 3], ml_dtypes.int4),
)


def test_xla_dumps_snapshot_and_hlo_proto(tmp_path: pathlib.Path) -> None:
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        f"--xla_dump_to={tmp_path} --xla_dump_hlo_as_proto --xla_dump_hlo_snapshots"
        " --xla_dump_hlo_module_re=jit_snap"
    )
    env["JAX_PLATFORMS"] = "cpu"
    subprocess.run([sys.executable, "-c", SNAPSHOT_SCRIPT], env=env, check=True, timeout=120)
    [snapshot] = sorted(tmp_path.glob("*jit_snap*snapshot*.pb"))
    module = xs.HloModule.load(snapshot, format="snapshot")
    assert module.name == "jit_snap"
    arguments = module.arguments()
    assert len(arguments) == len(SNAPSHOT_ARGS)
    for got, expected in zip(arguments, SNAPSHOT_ARGS, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    expected_result = jax.jit(snapshot_fn)(*SNAPSHOT_ARGS)
    result = module.result()
    assert isinstance(result, tuple)
    assert len(result) == len(expected_result)
    for got, expected in zip(result, expected_result, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, np.asarray(expected))
    check_signature(
        module.entry_computation_layout, SNAPSHOT_ARGS, jax.eval_shape(snapshot_fn, *SNAPSHOT_ARGS)
    )
    protos = sorted(tmp_path.glob("*jit_snap*.hlo.pb"))
    assert protos
    for proto in protos:
        dumped = xs.HloModule.load(proto.read_bytes(), format="hlo_proto")
        assert dumped.name == "jit_snap"
        check_valid(dumped)
        check_signature(
            dumped.entry_computation_layout,
            SNAPSHOT_ARGS,
            jax.eval_shape(snapshot_fn, *SNAPSHOT_ARGS),
        )
        assert dumped.arguments() == []
        assert dumped.result() is None


REPOSITORY_FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def entry_signature(module: xs.HloModule, with_layout: bool) -> tuple[list[str], str]:
    layout = module.entry_computation_layout
    assert layout is not None

    def text(shape: xs.Shape) -> str:
        return str(shape) if with_layout else shape.to_string_without_layout()

    return [text(p) for p in layout.parameters], text(layout.result)


def entry_parameter_shardings(hlo_text: str) -> dict[int, str | None]:
    """Parameter number -> its `sharding={...}` (as XLA prints it, re-read) in the ENTRY
    computation of HLO text, written independently of the package's reader."""
    entry = hlo_text[hlo_text.index("\nENTRY ") :]
    entry = entry[: entry.index("\n}")]
    out: dict[int, str | None] = {}
    for line in entry.splitlines():
        found = re.search(r"parameter\((\d+)\)", line)
        if found is None:
            continue
        at = line.find("sharding={")
        text = braced(line, at + len("sharding=")) if at >= 0 else None
        out[int(found.group(1))] = str(xs.HloSharding.parse(text)) if text else None
    return out


@pytest.mark.parametrize(
    "mlir", sorted((REPOSITORY_FIXTURES / "stablehlo").glob("*.mlir")), ids=lambda p: p.name
)
def test_stablehlo_entry_equals_its_hlo_twin(mlir: pathlib.Path) -> None:
    """A `lowered.as_text()` module (StableHLO, detected with no format) has the entry layout of
    the HLO of the same lowering; its listing's parameters carry XLA's shardings."""
    module = xs.HloModule.load(mlir)
    twin = mlir.with_suffix(".txt")
    if not twin.exists():  # a jax.export module: no HLO twin, still read
        assert module.entry_computation_layout is not None
        return
    hlo = xs.HloModule.load(twin)
    # The lowered HLO states no layout for `mhlo.layout_mode` and memory kinds (the compiled
    # one does): there the dimensions and types are compared.
    stated = not mlir.name.startswith(("layout.", "memory_kind."))
    assert entry_signature(module, stated) == entry_signature(hlo, stated)
    # Each parameter's sharding is the one XLA's HLO gives the entry computation's parameter.
    ours = {
        int(s["site"].rsplit(" ", 1)[1]): s.get("sharding")
        for s in module.shapes()
        if s["kind"] == "parameter" and s["site"].startswith("main /")
    }
    assert ours == entry_parameter_shardings(twin.read_text())
    with pytest.raises(xs.Error) as info:
        module.constants()
    assert info.value.kind == "NotSupported"


@pytest.mark.parametrize(
    "dumped", sorted((REPOSITORY_FIXTURES / "xla_dump").glob("module_*")), ids=lambda p: p.name
)
def test_every_dumped_file_loads_with_no_format(dumped: pathlib.Path) -> None:
    """Every file of a real `--xla_dump_to` folder (text, `HloProto` as `.hlo.pb`, snapshots)."""
    module = xs.HloModule.load(dumped)
    assert module.name == "jit__lambda"
    assert module.shapes()
    if ".snapshot." in dumped.name:
        arguments, result = module.arguments(), module.result()
        assert arguments
        assert result is not None
        layout = module.entry_computation_layout
        assert layout is not None
        assert [a.shape for a in arguments] == [p.dimensions for p in layout.parameters]
    elif dumped.suffix == ".pb":
        text = xs.HloModule.load(dumped.with_name(dumped.name.replace(".hlo.pb", ".txt")))
        assert entry_signature(module, True) == entry_signature(text, True)
        # The same instructions' shapes (the text renames cloned computations' instructions).
        ours = sorted(s["shape"] for s in module.shapes() if s["kind"] == "instruction")
        theirs = sorted(s["shape"] for s in text.shapes() if s["kind"] == "instruction")
        assert ours == theirs


def test_arguments_of_a_text_dump_with_elided_constants() -> None:
    """Only the literals asked for are read: a text dump's elided constants make `constants()`
    raise, never `arguments()` or `result()` (text holds no snapshot literals)."""
    module = xs.HloModule.load(FIXTURES / "all_types.txt")
    with pytest.raises(xs.Error) as info:
        module.constants()
    assert info.value.kind == "ElidedConstant"
    assert module.arguments() == []
    assert module.result() is None


# ---- module text as `str`, JAX objects, the stream ---------------------------------------------


def double(x: jax.Array) -> jax.Array:
    return x * 2 + 1


def test_load_takes_what_jax_returns(tmp_path: pathlib.Path) -> None:
    """`lowered.as_text()` (StableHLO), `as_text(dialect="hlo")`, `compiled.as_text()` as the
    `str` JAX returns, and the `Lowered` / `Compiled` objects themselves, list as their bytes do."""
    lowered = jax.jit(double).lower(jax.ShapeDtypeStruct((4, 3), jnp.float32))
    compiled = lowered.compile()
    texts = {
        "stablehlo": lowered.as_text(),
        "hlo": lowered.as_text(dialect="hlo"),
        "compiled": compiled.as_text(),
    }
    for name, text in texts.items():
        assert isinstance(text, str)
        module = xs.HloModule.load(text)
        assert module.shapes() == xs.HloModule.load(text.encode()).shapes(), name
        assert module.shapes() == xs.HloModule.from_text(text).shapes(), name
        layout = module.entry_computation_layout
        assert layout is not None
        assert [p.dimensions for p in layout.parameters] == [(4, 3)], name
        assert "<text>" in repr(module)
    for stage, text in ((lowered, texts["stablehlo"]), (compiled, texts["compiled"])):
        assert xs.HloModule.load(stage).shapes() == xs.HloModule.load(text).shapes()
    # A `str` without a newline that does not start as a module is a path, named when missing.
    missing = tmp_path / "no-such-module.txt"
    with pytest.raises(xs.Error, match=r"no-such-module\.txt") as info:
        xs.HloModule.load(str(missing))
    assert info.value.kind == "File"
    path = tmp_path / "m.txt"
    path.write_text(texts["hlo"])
    assert xs.HloModule.load(str(path)).shapes() == xs.HloModule.load(texts["hlo"]).shapes()
    # Leading whitespace, then `HloModule` or `module`: text.
    with pytest.raises(xs.ParseError):
        xs.HloModule.load("  HloModule")
    assert xs.HloModule.load("module @m").name == "m"
    assert xs.HloModule.load("HloModule m").computation_count == 0
    with pytest.raises(xs.Error) as info:
        xs.HloModule.load(42)  # type: ignore[arg-type]
    assert info.value.kind == "InvalidArgument"


def test_errors_take_their_class_from_the_variant() -> None:
    cases = [
        (b"HloModule m\nENTRY e {\n  ROOT x = f32[2]{0} add(\n}\n", xs.ParseError, "HloText"),
        (b"\xff\xff\xff\xff", xs.DecodeError, "Decode"),
        (
            b"HloModule m\nENTRY e {\n  ROOT p = f32[2,3]{0,0} parameter(0)\n}\n",
            xs.ValidationError,
            "InvalidLayout",
        ),
        (
            b"HloModule m\nENTRY e {\n  ROOT p = f32[-2]{0} parameter(0)\n}\n",
            xs.ParseError,
            "HloText",
        ),
    ]
    for data, cls, kind in cases:
        with pytest.raises(cls) as info:
            xs.HloModule.load(data)
        assert info.value.kind == kind, (data, str(info.value))
    with pytest.raises(xs.ValidationError) as info:
        xs.HloModule.load(cases[2][0])
    assert "5 invalid shape(s); first: e / p: invalid layout" in str(info.value)


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*.txt"))[:12], ids=lambda p: p.name)
def test_entries_stream_the_shapes(path: pathlib.Path) -> None:
    module = xs.HloModule.load(path)
    stream = module.entries()
    assert iter(stream) is stream
    assert list(stream) == module.shapes()
    with pytest.raises(StopIteration):
        next(stream)
    # Taken in part, then dropped: the reader's thread stops.
    partial = module.entries()
    assert next(partial) == module.shapes()[0]
    del partial


def test_shapes_share_equal_strings() -> None:
    body = "\n".join(f"  p{k} = f32[8,128]{{1,0}} parameter({k})" for k in range(50))
    text = f"HloModule m\nENTRY e {{\n{body}\n  ROOT t = (f32[8,128]{{1,0}}) tuple(p0)\n}}\n"
    shapes = xs.HloModule.load(text).shapes()
    instructions = [
        s for s in shapes if s["kind"] == "instruction" and s["shape"] == "f32[8,128]{1,0}"
    ]
    assert len(instructions) == 50
    assert all(s["shape"] is instructions[0]["shape"] for s in instructions)
    assert all(s["kind"] is instructions[0]["kind"] for s in instructions)
