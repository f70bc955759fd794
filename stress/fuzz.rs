//! The long fuzz run: every library target (or those named) for EXECS executions each, on
//! the engine of `fuzz_targets.rs`, printing per target the executions, the findings, the
//! slowest execution, the largest allocation peak, and in a build with coverage counters
//! (`stress/fuzz.sh`) the edges reached and the corpus grown. Each finding's input is
//! written to `target/fuzz/findings/<target>/<seed>`.
//!
//! `cargo run --release --example fuzz -- [EXECS] [SEED] [TARGET...]` (defaults: 1,000,000
//! executions, seed 1, every target). Exits 1 if anything was found.
//! `cargo run --release --example fuzz -- --dump TARGET SEED FILE` writes the input a
//! finding's seed regenerates (in a build without coverage counters).
//! `--blind` as the first argument keeps the corpus as it started (coverage is still
//! counted): what guidance adds is the difference in edges reached.

#[path = "fuzz_targets.rs"]
#[allow(dead_code)] // the test suite's entry points
mod fuzz_targets;

#[global_allocator]
static ALLOCATOR: fuzz_targets::CountingAllocator = fuzz_targets::CountingAllocator;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let guidance = if args.first().map(String::as_str) == Some("--blind") {
        args.remove(0);
        fuzz_targets::Guidance::Blind
    } else {
        fuzz_targets::Guidance::Coverage
    };
    if args.first().map(String::as_str) == Some("--dump") {
        // `--dump TARGET SEED FILE`: writes the input a finding's seed names.
        let target = fuzz_targets::targets()
            .into_iter()
            .find(|target| target.name == args[1])
            .expect("a target name");
        let seed: u64 = args[2].parse().expect("a seed");
        std::fs::write(&args[3], fuzz_targets::input_of(&target, seed)).expect("written");
        return;
    }
    let executions: u64 = args
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let wanted: Vec<&str> = args.iter().skip(2).map(String::as_str).collect();
    let mut found = false;
    println!("{}", fuzz_targets::REPORT_HEADER);
    for target in fuzz_targets::targets() {
        if !wanted.is_empty() && !wanted.contains(&target.name) {
            continue;
        }
        let clock = std::time::Instant::now();
        let findings = fuzz_targets::fuzz_with(&target, executions, seed, guidance);
        let seconds = clock.elapsed().as_secs_f64();
        println!(
            "{}",
            fuzz_targets::report_line(target.name, &findings, seconds)
        );
        found |= !findings.failures.is_empty();
    }
    std::process::exit(i32::from(found));
}
