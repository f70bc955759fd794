//! The long fuzz run: every target (or those named) for EXECS executions each, on the
//! seeded mutation engine of `fuzz_targets.rs`, printing per target the executions, the
//! findings (each with the seed that regenerates its input), the slowest execution and the
//! largest allocation peak.
//!
//! `cargo run --release --example fuzz -- [EXECS] [SEED] [TARGET...]` (defaults: 1,000,000
//! executions, seed 1, every target). Exits 1 if anything was found.
//! `cargo run --release --example fuzz -- --dump TARGET SEED FILE` writes the input a
//! finding's seed regenerates.

#[path = "fuzz_targets.rs"]
mod fuzz_targets;

#[global_allocator]
static ALLOCATOR: fuzz_targets::CountingAllocator = fuzz_targets::CountingAllocator;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
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
    println!("target,executions,findings,slowest_ms,peak_mib,seconds");
    for target in fuzz_targets::targets() {
        if !wanted.is_empty() && !wanted.contains(&target.name) {
            continue;
        }
        let clock = std::time::Instant::now();
        let findings = fuzz_targets::fuzz(&target, executions, seed);
        println!(
            "{},{},{},{:.1},{:.1},{:.0}",
            target.name,
            findings.executions,
            findings.failures.len(),
            findings.slowest.as_secs_f64() * 1e3,
            findings.peak_bytes as f64 / (1 << 20) as f64,
            clock.elapsed().as_secs_f64()
        );
        for (input_seed, failure) in findings.failures.iter().take(10) {
            eprintln!("{}: seed {input_seed}: {failure}", target.name);
        }
        found |= !findings.failures.is_empty();
    }
    std::process::exit(i32::from(found));
}
