//! `xla-shape hlo` on a large generated HLO text module (default 100 MB; `HLO_TEXT_BENCH_MB`
//! sets another size), in one group with its baselines: reading the file's bytes into a sink
//! (`std::io::copy`), the text reader alone (one pass, no printing), the library's module reader
//! (`hlo::module`: every entry printed and validated, nothing written), and the same module as a
//! serialized `HloModuleProto` (the listing and the module reader). Throughput is the text's
//! size for every entry (the proto is about a tenth of it: its own MB/s are printed).
//!
//! Before the runs, one text listing and one pass of each module reader are made with a thread
//! sampling `/proc/self/status` (`RssAnon`) every millisecond; the peak anonymous memory is
//! printed (Linux only). `LISTING_BENCH_SECONDS` sets the measurement time (default 20 s).
//!
//! ```sh
//! cargo bench --features cli --bench hlo_text
//! ```
#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/listing.rs"]
mod support;
use xla_shape::hlo::text::{Item, TextReader};
use xla_shape::prost::encoding::{WireType, encode_key, encode_varint};

/// The instructions' shapes and opcodes, cycled.
const SHAPES: [&str; 4] = ["f32[128,256]{1,0}", "bf16[8,128,256]{2,1,0:T(8,128)(2,1)}", "(f32[2]{0}, s32[])", "pred[]"];
const OPCODES: [&str; 4] = ["add", "fusion", "tuple", "compare"];

fn field(number: u32, payload: &[u8], out: &mut Vec<u8>) {
    encode_key(number, WireType::LengthDelimited, out);
    encode_varint(payload.len() as u64, out);
    out.extend_from_slice(payload);
}

/// Writes the module as text and as a proto (the same computations, instructions, names,
/// opcodes and shapes; the text also has XLA's metadata and operands).
fn generate(dir: &Path, megabytes: usize) -> io::Result<(PathBuf, PathBuf)> {
    let (text_path, proto_path) = (dir.join("big.txt"), dir.join("big.pb"));
    let shapes: Vec<Vec<u8>> =
        SHAPES.iter().map(|s| xla_shape::codec::encode(&xla_shape::text::parse_shape_raw(s).unwrap())).collect();
    let mut text = BufWriter::new(File::create(&text_path)?);
    let mut proto = BufWriter::new(File::create(&proto_path)?);
    writeln!(text, "HloModule big, is_scheduled=true, entry_computation_layout={{(f32[128,256]{{1,0}})->pred[]}}\n")?;
    let mut module = Vec::new();
    field(1, b"big", &mut module);
    proto.write_all(&module)?;
    let target = megabytes.saturating_mul(1 << 20);
    let (mut written, mut c) = (0usize, 0usize);
    while written < target {
        let name = format!("computation.{c}");
        let mut computation = Vec::new();
        field(1, name.as_bytes(), &mut computation);
        let entry = if written + 2_000_000 >= target { "ENTRY " } else { "" };
        let mut body = format!("{entry}%{name} (p.0: f32[128,256]) -> pred[] {{\n");
        body.push_str("  %p.0 = f32[128,256]{1,0} parameter(0)\n");
        for i in 0..10_000 {
            let (shape, opcode) = (SHAPES[i % 4], OPCODES[i % 4]);
            let root = if i == 9_999 { "ROOT " } else { "" };
            let instruction = format!("{opcode}.{i}");
            let _ = writeln!(
                body,
                "  {root}%{instruction} = {shape} {opcode}(%p.0, %p.0), metadata={{op_type=\"{opcode}\" op_name=\"jit(f)/{opcode}\" source_file=\"programs.py\" source_line={i}}}"
            );
            let mut encoded = Vec::new();
            field(1, instruction.as_bytes(), &mut encoded);
            field(2, opcode.as_bytes(), &mut encoded);
            field(3, &shapes[i % 4], &mut encoded);
            field(2, &encoded, &mut computation);
        }
        body.push_str("}\n\n");
        text.write_all(body.as_bytes())?;
        written += body.len();
        let mut wrapped = Vec::new();
        field(3, &computation, &mut wrapped);
        proto.write_all(&wrapped)?;
        c += 1;
    }
    text.flush()?;
    proto.flush()?;
    Ok((text_path, proto_path))
}

fn bench(c: &mut Criterion) {
    let megabytes = std::env::var("HLO_TEXT_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let dir = std::env::temp_dir().join(format!("xla-shape-hlo-text-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (text, proto) = generate(&dir, megabytes).unwrap();
    let size = std::fs::metadata(&text).unwrap().len();

    // Peak anonymous memory of one text listing, sampled.
    let (before, peak) = support::peak_of_one_listing(&text);
    eprintln!("hlo_text: {size} bytes of text; RssAnon before {before} KiB, peak during one text listing {peak} KiB");
    let proto_size = std::fs::metadata(&proto).unwrap().len();
    for (what, path) in [("text", &text), ("proto", &proto)] {
        let (before, peak) = support::peak_of(|| {
            support::entries(path);
        });
        eprintln!("hlo_text: module reader over the {what}: RssAnon before {before} KiB, peak {peak} KiB");
    }
    eprintln!("hlo_text: the proto is {proto_size} bytes (its MB/s: the text's times {proto_size}/{size})");

    let mut group = c.benchmark_group("hlo_text");
    group.sample_size(10).measurement_time(support::measurement_time()).throughput(Throughput::Bytes(size));
    group.bench_function("copy_to_sink", |b| {
        b.iter(|| io::copy(&mut File::open(&text).unwrap(), &mut io::sink()).unwrap());
    });
    group.bench_function("text_reader_one_pass", |b| {
        b.iter(|| {
            let mut reader = TextReader::new(BufReader::with_capacity(1 << 16, File::open(&text).unwrap()));
            let mut instructions = 0usize;
            while let Some(item) = reader.next_item().unwrap() {
                instructions += usize::from(matches!(item, Item::Instruction(_)));
            }
            instructions
        });
    });
    group.bench_function("module_entries_text", |b| b.iter(|| support::entries(&text)));
    group.bench_function("hlo_listing_text", |b| b.iter(|| support::listing(&text)));
    group.bench_function("module_entries_proto", |b| b.iter(|| support::entries(&proto)));
    group.bench_function("hlo_listing_proto", |b| b.iter(|| support::listing(&proto)));
    group.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
