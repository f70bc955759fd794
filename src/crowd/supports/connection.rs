//! Connection windows: when an off-mesh link between a platform and the ground (a lift's
//! door, a ferry's ramp) may be crossed.
//!
//! Stage: crowd runtime, read where a crossing starts. Input: the window a game set on a
//! link ([`Crowd::set_link_window`](super::Crowd::set_link_window)) and the crowd's frame.
//! Output: whether a crossing that takes a given number of frames fits in what is left of
//! the window now. Invariant: a crossing starts only if it lands before its window closes,
//! so nobody is mid-way across a connection when its two sides part (spec 002: a
//! connection is checked at the time of each crossing step, not only when it was found).
//!
//! The link stays open in the mesh while its window is closed: a path may still plan
//! through it (the window will open again), and an agent that reaches its entry waits
//! there, on its own side, instead of asking for a new path. Closing the link itself
//! (`NavMesh::set_link_open`) remains the way to say it will not open again.

/// A periodic window of frames in which a link may be crossed: open for `open_frames`
/// frames from frame `first_open_frame`, then again every `period_frames` frames.
///
/// A lift that stops at a floor for 3 s of every 20 s, at 30 frames a second, with its
/// doors first open at frame 90: `ConnectionWindow { first_open_frame: 90, open_frames:
/// 90, period_frames: 600 }`. A window open once and never again: `period_frames` =
/// `u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConnectionWindow {
    /// The first frame of the first opening.
    pub first_open_frame: u64,
    /// Frames each opening lasts. Limit: 1 to `period_frames`.
    pub open_frames: u64,
    /// Frames from one opening's start to the next's. Limit: at least 1.
    pub period_frames: u64,
}

impl ConnectionWindow {
    /// Why the window is not one (`None`: it is): the first limit it breaks.
    pub fn problem(&self) -> Option<&'static str> {
        if self.period_frames == 0 {
            Some("period_frames must be at least 1")
        } else if self.open_frames == 0 {
            Some("open_frames must be at least 1")
        } else if self.open_frames > self.period_frames {
            Some("open_frames must be at most period_frames")
        } else {
            None
        }
    }

    /// Frames the window stays open from `frame` on, `frame` included (0: closed at
    /// `frame`).
    pub fn open_frames_left(&self, frame: u64) -> u64 {
        let Some(since_first) = frame.checked_sub(self.first_open_frame) else {
            return 0;
        };
        let into_period = since_first % self.period_frames;
        self.open_frames.saturating_sub(into_period)
    }

    /// The first frame at or after `frame` at which the window is open (`u64::MAX`: never
    /// again, a window open once and past), for a host showing how long a wait lasts.
    pub fn next_open_frame(&self, frame: u64) -> u64 {
        if self.open_frames_left(frame) > 0 {
            return frame;
        }
        let Some(since_first) = frame.checked_sub(self.first_open_frame) else {
            return self.first_open_frame;
        };
        let periods = since_first / self.period_frames;
        self.first_open_frame
            .saturating_add(periods.saturating_add(1).saturating_mul(self.period_frames))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIFT: ConnectionWindow = ConnectionWindow {
        first_open_frame: 90,
        open_frames: 90,
        period_frames: 600,
    };

    #[test]
    fn a_window_counts_the_frames_left_in_each_opening() {
        assert_eq!(LIFT.open_frames_left(0), 0);
        assert_eq!(LIFT.open_frames_left(89), 0);
        assert_eq!(LIFT.open_frames_left(90), 90);
        assert_eq!(LIFT.open_frames_left(179), 1);
        assert_eq!(LIFT.open_frames_left(180), 0);
        assert_eq!(LIFT.open_frames_left(690), 90);
        assert_eq!(LIFT.open_frames_left(700), 80);
        assert_eq!(LIFT.next_open_frame(0), 90);
        assert_eq!(LIFT.next_open_frame(100), 100);
        assert_eq!(LIFT.next_open_frame(180), 690);
        assert_eq!(LIFT.next_open_frame(689), 690);
        let once = ConnectionWindow {
            period_frames: u64::MAX,
            ..LIFT
        };
        assert_eq!(once.open_frames_left(150), 30);
        assert_eq!(once.open_frames_left(1_000_000), 0);
        assert_eq!(once.next_open_frame(1_000_000), u64::MAX);
    }

    #[test]
    fn a_window_that_cannot_open_is_named() {
        let never = ConnectionWindow {
            open_frames: 0,
            ..LIFT
        };
        assert_eq!(never.problem(), Some("open_frames must be at least 1"));
        let longer = ConnectionWindow {
            open_frames: 601,
            ..LIFT
        };
        assert_eq!(
            longer.problem(),
            Some("open_frames must be at most period_frames")
        );
        let no_period = ConnectionWindow {
            period_frames: 0,
            ..LIFT
        };
        assert_eq!(
            no_period.problem(),
            Some("period_frames must be at least 1")
        );
        assert_eq!(LIFT.problem(), None);
    }
}
