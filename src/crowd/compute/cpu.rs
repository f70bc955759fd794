//! Runs a pass's chunk compiled for the CPU the step runs on.
//!
//! Stage: crowd runtime, below the passes. Input: a chunk's work as a closure. Output: its
//! result, computed by a copy of that work compiled for x86-64-v3 (AVX2, FMA, BMI) when the
//! CPU has those features, else by the copy compiled for the build's own target.
//!
//! Why: the default x86-64 target allows SSE2 only, and the avoid pass's scalar
//! arithmetic (half-planes, the velocity program) runs a few per cent faster when the
//! compiler may use the three-operand VEX forms (docs/benchmarks.md, "Crowd speed"). A game ships one binary, so the choice is made at run time, once per chunk,
//! from a feature test the standard library caches.
//!
//! Invariant: both copies give bit-identical results. Rust never contracts a multiply and
//! an add into a fused one unless the code asks for `mul_add`, and the passes never do, so
//! the extra features change which instructions compute each IEEE operation, not its
//! result: the same inputs give the same lanes on any x86-64 CPU and at any thread count.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by [`use_baseline_only`]: every chunk runs the build target's copy.
static BASELINE_ONLY: AtomicBool = AtomicBool::new(false);

/// Makes every later chunk run the copy compiled for the build's own target (`true`), or
/// the one the CPU allows (`false`, the default): for comparing the two copies' speed in one
/// binary, and for the test that they agree. Process-wide; a step reads it once per chunk.
#[cfg(feature = "harness")]
pub fn use_baseline_only(baseline_only: bool) {
    BASELINE_ONLY.store(baseline_only, Ordering::Relaxed);
}

/// Runs `work`, compiled for x86-64-v3 when this CPU supports it.
///
/// Everything `work` calls that the compiler inlines into it is compiled for the wider
/// target too; a function it calls out of line keeps the build's own code. Hot kernels
/// under a dispatched chunk are therefore marked `#[inline(always)]` or `#[inline]`.
#[inline(always)]
pub(crate) fn dispatch<R>(work: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        if x86_64_v3() && !BASELINE_ONLY.load(Ordering::Relaxed) {
            // SAFETY: the CPU reports every feature `with_x86_64_v3` is compiled for.
            return unsafe { with_x86_64_v3(work) };
        }
    }
    work()
}

/// Whether this CPU has the x86-64-v3 features the wider copy is compiled for.
#[cfg(target_arch = "x86_64")]
#[inline]
fn x86_64_v3() -> bool {
    // Every feature `with_x86_64_v3` enables, not only the ones that imply the others on
    // real CPUs: the unsafe call's contract is exactly this list.
    std::is_x86_feature_detected!("avx")
        && std::is_x86_feature_detected!("avx2")
        && std::is_x86_feature_detected!("fma")
        && std::is_x86_feature_detected!("bmi1")
        && std::is_x86_feature_detected!("bmi2")
        && std::is_x86_feature_detected!("lzcnt")
        && std::is_x86_feature_detected!("movbe")
        && std::is_x86_feature_detected!("f16c")
        && std::is_x86_feature_detected!("popcnt")
        && std::is_x86_feature_detected!("sse3")
        && std::is_x86_feature_detected!("ssse3")
        && std::is_x86_feature_detected!("sse4.1")
        && std::is_x86_feature_detected!("sse4.2")
}

#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx,avx2,fma,bmi1,bmi2,lzcnt,movbe,f16c,popcnt,sse3,ssse3,sse4.1,sse4.2"
)]
unsafe fn with_x86_64_v3<R>(work: impl FnOnce() -> R) -> R {
    work()
}
