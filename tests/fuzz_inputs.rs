//! Every fuzz target for a few seconds in the test suite (the long run is
//! `stress/fuzz.rs`): no panic, no execution over a second or 1 GiB, no broken invariant.

#![cfg(feature = "bake")]

#[path = "../stress/fuzz_targets.rs"]
#[allow(dead_code)] // the long run's reporting
mod fuzz_targets;

#[global_allocator]
static ALLOCATOR: fuzz_targets::CountingAllocator = fuzz_targets::CountingAllocator;

/// Executions per target: a few seconds of the suite for all of them.
const EXECUTIONS: u64 = 1_500;

#[test]
fn every_input_target_survives_its_mutated_corpus() {
    fuzz_targets::assert_each_survives(&fuzz_targets::targets(), EXECUTIONS, 20_261_203);
}

#[test]
fn the_same_seed_gives_the_same_input() {
    let corpus = vec![b"v 1 2 3\nv 4 5 6\nf 1 2 3\n".to_vec(), vec![0u8; 32]];
    for seed in 0..200 {
        assert_eq!(
            fuzz_targets::mutated(&corpus, true, seed),
            fuzz_targets::mutated(&corpus, true, seed)
        );
    }
    // A finding's seed regenerates its input from the target's corpus.
    let obj = &fuzz_targets::targets()[0];
    assert_eq!(
        fuzz_targets::input_of(obj, 11),
        fuzz_targets::input_of(obj, 11)
    );
    let distinct: std::collections::HashSet<Vec<u8>> = (0..200)
        .map(|seed| fuzz_targets::mutated(&corpus, true, seed))
        .collect();
    assert!(distinct.len() > 150, "{} distinct of 200", distinct.len());
}
