//! The floor of a `pread` read path for the command line's 1 GiB transpose (docs/relayout.md
//! rule 22): every part's source runs read with `pread` into a buffer, without transposing them.
//! `f32[16384,16384]{1,0}` → `{0,1}` in parts of 16 MiB (the default `--max-memory 64`): part `p`
//! is destination rows `256p..256p+256`, which are source columns, so it reads 1 KiB at byte
//! `row × 65536 + p × 1024` of every source row.
//!
//!     rustc -O --edition 2021 benches/peers/pread_runs.rs -o target/pread_runs
//!     target/pread_runs FILE        # prints the seconds the 64 × 16 384 reads took
use std::os::unix::fs::FileExt;

fn main() {
    let path = std::env::args().nth(1).expect("usage: pread_runs FILE");
    let file = std::fs::File::open(path).expect("cannot open FILE");
    let (rows, row_bytes, parts, run) = (16_384u64, 65_536u64, 64u64, 1024usize);
    let mut buf = vec![0u8; run];
    let mut sum = 0u64;
    let start = std::time::Instant::now();
    for part in 0..parts {
        for row in 0..rows {
            file.read_exact_at(&mut buf, row * row_bytes + part * run as u64).expect("short read");
            sum = sum.wrapping_add(u64::from(buf[0]));
        }
    }
    println!("{:.3}", start.elapsed().as_secs_f64());
    eprintln!("(checksum {sum})");
}
