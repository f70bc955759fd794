//! Helpers the crowd's passes share for parallel work and per-step buffers.
//!
//! Stage: crowd runtime, below every pass. The chunk size of light passes (where handing
//! work to the pool stops paying) and the page mapping of per-step buffers, so that a step
//! neither wakes the pool for a trivial copy nor faults fresh memory in.

use std::collections::TryReserveError;

/// Agents per parallel task of a light per-agent pass (a copy, a gather, a scatter: tens
/// of nanoseconds an agent). Below twice this a light pass runs on the calling thread:
/// handing half of it to the other thread costs more than it saves (waking a worker and
/// joining it costs about as much as a thousand agents' gather).
pub(crate) const LIGHT_AGENTS_PER_TASK: usize = 2048;

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
