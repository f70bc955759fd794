//! Path waits: how many answered requests waited each number of frames, a histogram kept
//! by the scheduler for the crowd's reports (p95 path wait) and saved with it.

use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer};
use crate::crowd::events::CrowdError;

/// How many answered path requests waited each number of frames, from queueing to the
/// answer: a histogram, so its memory is bounded by the longest wait (a counter per frame
/// of it), not by the number of requests a long-running game answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct PathWaits {
    /// `count_by_frames[f]`: requests answered after waiting `f` frames.
    pub(super) count_by_frames: Vec<u64>,
}

impl PathWaits {
    /// Counts one request answered after `frames` frames.
    pub fn record(&mut self, frames: u64) {
        let frames = usize::try_from(frames).expect("a wait of more frames than memory");
        if frames >= self.count_by_frames.len() {
            self.count_by_frames.resize(frames + 1, 0);
        }
        self.count_by_frames[frames] += 1;
    }

    /// Requests counted.
    pub fn total(&self) -> u64 {
        self.count_by_frames.iter().sum()
    }

    #[cfg(feature = "harness")]
    /// Those of these requests that `earlier` (this histogram at an earlier frame) did not
    /// count yet: the waits of the frames in between. `None` if `earlier` counts some wait
    /// more often than this histogram does (it is not an earlier state of it).
    pub fn since(&self, earlier: &PathWaits) -> Option<PathWaits> {
        let mut count_by_frames = self.count_by_frames.clone();
        for (frames, &before) in earlier.count_by_frames.iter().enumerate() {
            if before > 0 {
                let now = count_by_frames.get_mut(frames);
                match now.and_then(|count| count.checked_sub(before).map(|left| (count, left))) {
                    Some((count, left)) => *count = left,
                    None => return None,
                }
            }
        }
        Some(PathWaits { count_by_frames })
    }

    /// The wait at `fraction` (0 to 1) of the way through the waits sorted ascending: the
    /// one at index `round((total - 1) * fraction)`; `None` without any. A fraction outside
    /// 0 to 1 (or NaN) is refused by value.
    pub fn percentile(&self, fraction: f64) -> Result<Option<u64>, CrowdError> {
        if !(0.0..=1.0).contains(&fraction) {
            return Err(CrowdError::BadPercentile(fraction));
        }
        let total = self.total();
        if total == 0 {
            return Ok(None);
        }
        let index = ((total - 1) as f64 * fraction).round() as u64;
        let mut seen = 0;
        for (frames, &count) in self.count_by_frames.iter().enumerate() {
            seen += count;
            if seen > index {
                return Ok(Some(frames as u64));
            }
        }
        unreachable!("the index is below the total")
    }
}

impl Saved for PathWaits {
    const MIN_BYTES: usize = 4;
    fn write(&self, out: &mut Writer) {
        self.count_by_frames.write(out);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(PathWaits {
            count_by_frames: Saved::read(input)?,
        })
    }
}
