//! `xla-shape hlo` on a large generated StableHLO module (default 100 MB; `STABLEHLO_BENCH_MB`
//! sets another size), beside reading the file's bytes into a sink (`std::io::copy`), the MLIR
//! reader alone (one pass, no printing) and the library's module reader (`hlo::module`: every
//! entry printed and validated, nothing written). Throughput is the text's size for every entry.
//!
//! The module is what JAX prints with debug locations: functions whose signatures carry Shardy
//! shardings and `jax.result_info`, operations in the pretty (`: tensor<…>`), functional
//! (`: (…) -> …`) and generic region forms, `sdy.sharding_constraint`, and `loc(…)` after each.
//! Before the runs, one listing and one module-reader pass are made with a thread sampling
//! `/proc/self/status` (`RssAnon`) every millisecond; the peak anonymous memory is printed (Linux
//! only). `LISTING_BENCH_SECONDS` sets the measurement time (default 20 s).
//!
//! ```sh
//! cargo bench --features cli --bench stablehlo
//! ```
#![allow(missing_docs)] // criterion_group! generates undocumented public functions

use std::fmt::Write as _;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

#[path = "support/listing.rs"]
mod support;
use xla_shape::hlo::mlir::{Item, MlirReader};

/// One function of about 1.5 MB: its signature, then operations of every form, cycled.
fn function(f: usize, entry: bool, out: &mut String) {
    let name = if entry { "main".to_owned() } else { format!("f{f}") };
    let visibility = if entry { "public" } else { "private" };
    let _ = writeln!(
        out,
        "  func.func {visibility} @{name}(%arg0: tensor<128x256xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{\"y\"}}]>}} loc(\"x\"), %arg1: tensor<8x128x256xbf16> {{mhlo.layout_mode = \"default\"}} loc(\"w\")) -> (tensor<128x256xf32> {{jax.result_info = \"result\", sdy.sharding = #sdy.sharding<@mesh, [{{\"x\"}}, {{}}]>}}) {{"
    );
    for i in 0..10_000 {
        match i % 5 {
            0 => {
                let _ = writeln!(out, "    %{i} = stablehlo.add %arg0, %arg0 : tensor<128x256xf32> loc(#loc{i})");
            }
            1 => {
                let _ = writeln!(
                    out,
                    "    %{i} = stablehlo.dot_general %arg0, %arg0, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<128x256xf32>, tensor<128x256xf32>) -> tensor<128x128xf32> loc(#loc{i})"
                );
            }
            2 => {
                let _ = writeln!(
                    out,
                    "    %{i} = sdy.sharding_constraint %arg0 <@mesh, [{{\"x\"}}, {{\"y\"}}]> : tensor<128x256xf32> loc(#loc{i})"
                );
            }
            3 => {
                let _ = writeln!(
                    out,
                    "    %{i}:2 = stablehlo.custom_call @f(%arg1) {{backend_config = \"{{\\\"k\\\": [1, 2]}}\", api_version = 2 : i32}} : (tensor<8x128x256xbf16>) -> (tensor<8x128x256xbf16>, tensor<i1>) loc(#loc{i})"
                );
            }
            _ => {
                let _ = writeln!(
                    out,
                    "    %{i} = \"stablehlo.case\"(%c) ({{\n      stablehlo.return %arg0 : tensor<128x256xf32> loc(#loc{i})\n    }}, {{\n      stablehlo.return %arg0 : tensor<128x256xf32>\n    }}) : (tensor<i32>) -> tensor<128x256xf32> loc(#loc{i})"
                );
            }
        }
    }
    out.push_str("    return %arg0 : tensor<128x256xf32> loc(#loc)\n  } loc(#loc)\n");
}

/// Writes a module of at least `megabytes` MiB.
fn generate(dir: &Path, megabytes: usize) -> io::Result<PathBuf> {
    let path = dir.join("big.mlir");
    let mut file = BufWriter::new(File::create(&path)?);
    writeln!(file, "#loc = loc(unknown)\n#loc1 = loc(\"programs.py\":3:4)")?;
    writeln!(file, "module @jit_big attributes {{mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32}} {{")?;
    writeln!(
        file,
        "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=4]> {{stablehlo.mesh = {{axes = [{{name = \"x\", size = 2 : i64}}, {{name = \"y\", size = 4 : i64}}]}}}} loc(#loc)"
    )?;
    let target = megabytes.saturating_mul(1 << 20);
    let (mut written, mut f) = (0usize, 0usize);
    let mut body = String::new();
    while written < target {
        body.clear();
        function(f, f == 0, &mut body);
        file.write_all(body.as_bytes())?;
        written += body.len();
        f += 1;
    }
    writeln!(file, "}} loc(#loc)")?;
    file.flush()?;
    Ok(path)
}

fn bench(c: &mut Criterion) {
    let megabytes = std::env::var("STABLEHLO_BENCH_MB").ok().and_then(|v| v.parse().ok()).unwrap_or(100);
    let dir = std::env::temp_dir().join(format!("xla-shape-stablehlo-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = generate(&dir, megabytes).unwrap();
    let size = std::fs::metadata(&text).unwrap().len();

    let (before, peak) = support::peak_of_one_listing(&text);
    eprintln!("stablehlo: {size} bytes of text; RssAnon before {before} KiB, peak during one listing {peak} KiB");
    let (before, peak) = support::peak_of(|| {
        support::entries(&text);
    });
    eprintln!("stablehlo: module reader: RssAnon before {before} KiB, peak {peak} KiB");

    let mut group = c.benchmark_group("stablehlo");
    group.sample_size(10).measurement_time(support::measurement_time()).throughput(Throughput::Bytes(size));
    group.bench_function("copy_to_sink", |b| {
        b.iter(|| io::copy(&mut File::open(&text).unwrap(), &mut io::sink()).unwrap());
    });
    group.bench_function("mlir_reader_one_pass", |b| {
        b.iter(|| {
            let mut reader = MlirReader::new(BufReader::with_capacity(1 << 16, File::open(&text).unwrap()));
            let mut ops = 0usize;
            while let Some(item) = reader.next_item().unwrap() {
                ops += usize::from(matches!(item, Item::Op(_)));
            }
            ops
        });
    });
    group.bench_function("module_entries_mlir", |b| b.iter(|| support::entries(&text)));
    group.bench_function("hlo_listing_mlir", |b| b.iter(|| support::listing(&text)));
    group.finish();
    std::fs::remove_dir_all(&dir).unwrap();
}

criterion_group!(benches, bench);
criterion_main!(benches);
