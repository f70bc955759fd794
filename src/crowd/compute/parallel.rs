//! Helpers the crowd's passes share for parallel work and per-step buffers.
//!
//! Stage: crowd runtime, below every pass. The chunk size of light passes (where handing
//! work to the pool stops paying), the one-thread step of small crowds (every pass's task
//! size and join read it), and the page mapping of per-step buffers, so that a step
//! neither wakes the pool for work too small to share nor faults fresh memory in.

use std::cell::Cell;
use std::collections::TryReserveError;

/// Agents per parallel task of a light per-agent pass (a copy, a gather, a scatter: tens
/// of nanoseconds an agent). Below twice this a light pass runs on the calling thread:
/// handing half of it to the other thread costs more than it saves (waking a worker and
/// joining it costs about as much as a thousand agents' gather).
pub(crate) const LIGHT_AGENTS_PER_TASK: usize = 2048;

thread_local! {
    /// Whether the step running on this thread keeps all its work here ([`on_one_thread`]).
    static ONE_THREAD: Cell<bool> = const { Cell::new(false) };
}

/// Runs `work` (a crowd's step) with every pass it calls kept on the calling thread when
/// `one_thread`: [`task_min`] then gives whole passes as one task and [`join`] runs its
/// halves in turn, so nothing is handed to the pool. For a small crowd, whose whole step
/// takes tens of microseconds, waking another thread and waiting for it costs more than
/// the work it takes over. Results are the same either way.
pub(crate) fn on_one_thread<R>(one_thread: bool, work: impl FnOnce() -> R) -> R {
    /// Puts the flag back however `work` ends.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            ONE_THREAD.set(self.0);
        }
    }
    let _restore = Restore(ONE_THREAD.replace(one_thread));
    work()
}

/// Whether the step running on this thread keeps all its work here ([`on_one_thread`]).
#[inline]
pub(crate) fn keeps_to_one_thread() -> bool {
    ONE_THREAD.get()
}

/// The least number of items in one task of a parallel pass: `parallel_min`, or all of
/// them while the step keeps to one thread ([`on_one_thread`]).
#[inline]
pub(crate) fn task_min(parallel_min: usize) -> usize {
    if ONE_THREAD.get() {
        usize::MAX
    } else {
        parallel_min
    }
}

/// `rayon::join(a, b)`, or `a` then `b` on this thread while the step keeps to one thread
/// ([`on_one_thread`]).
pub(crate) fn join<A: Send, B: Send>(
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    if ONE_THREAD.get() {
        (a(), b())
    } else {
        rayon::join(a, b)
    }
}

/// Makes room in `buffer` for `to` elements and writes zero bytes over its places `from..to`
/// beyond its length (places below `from` were written by an earlier call, and a
/// reallocation copies them): a page of memory is only mapped when first written, and a
/// per-step buffer should not take that cost inside a step. The bytes are never read as
/// values; the step writes every element it reads.
pub(crate) fn map_pages<T>(
    buffer: &mut Vec<T>,
    from: usize,
    to: usize,
) -> Result<(), TryReserveError> {
    buffer.try_reserve(to.saturating_sub(buffer.len()))?;
    let length = buffer.len();
    let (from, to) = (from.max(length) - length, to.saturating_sub(length));
    for place in &mut buffer.spare_capacity_mut()[from.min(to)..to] {
        *place = std::mem::MaybeUninit::zeroed();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_thread_keeps_the_work_here_and_ends_with_the_step() {
        assert_eq!(task_min(64), 64);
        let here = std::thread::current().id();
        let (threads, inner) = on_one_thread(true, || {
            let (a, b) = join(
                || std::thread::current().id(),
                || std::thread::current().id(),
            );
            // A nested step of a large crowd hands work out again, and restores.
            let inner = on_one_thread(false, || task_min(64));
            ([a, b], (inner, task_min(64)))
        });
        assert_eq!(threads, [here, here]);
        assert_eq!(inner, (64, usize::MAX));
        assert_eq!(task_min(64), 64, "the flag ends with the step");
        // Also when the step unwinds.
        let unwound = std::panic::catch_unwind(|| on_one_thread(true, || panic!("step")));
        assert!(unwound.is_err());
        assert_eq!(task_min(64), 64);
    }

    #[test]
    fn mapping_pages_makes_room_and_keeps_the_elements() {
        let mut buffer: Vec<u64> = vec![7, 8, 9];
        map_pages(&mut buffer, 0, 1000).unwrap();
        assert!(buffer.capacity() >= 1000);
        assert_eq!(buffer, [7, 8, 9]);
        map_pages(&mut buffer, 1000, 5000).unwrap();
        assert!(buffer.capacity() >= 5000);
        assert_eq!(buffer, [7, 8, 9]);
        // Nothing to do below the length.
        map_pages(&mut buffer, 0, 2).unwrap();
        assert_eq!(buffer, [7, 8, 9]);
    }
}
