//! Platforms: supports whose footprint moves (a ferry's deck, a lift's car), spec 002's
//! platform geometry and spec 004's carried body, for platforms that translate.
//!
//! Stage: crowd runtime, read by the step (neighbours, avoidance, separation, link
//! crossings) and by what answers the host in the world ([`Crowd::world_position`](super::Crowd::world_position)). Input: a
//! [`PlatformMotion`] per platform support ([`Crowd::set_platform_motion`](super::Crowd::set_platform_motion): placed by the
//! host each step, or a built-in [`Shuttle`] between two stops) and, per platform-to-ground
//! link, a [`LinkDock`]: the offset the platform must be at, within a tolerance, for the
//! link to join the two sides. Output: each platform's offset and velocity at a frame.
//!
//! A platform's polygons are baked once in its own frame and stay there in the mesh: a
//! scene instance marked as a support, baked where no ground is (so no edge joins it to
//! the ground; only links do), and placed in the world by its offset, world = mesh +
//! o(t). An agent on a platform keeps its foot in the platform's frame (its lanes hold mesh
//! coordinates, like every agent's), so its corridor, the follow pass, the controller and
//! the slope pass see a still floor: a corridor on a platform stays valid while the
//! platform moves, and is rejected only when the platform's tiles are rebuilt (their
//! generation is the platform's shape version, in every corridor's read set). Only what
//! compares agents in different frames (the neighbour grid, avoidance, separation) or
//! answers in the world (positions, link crossings) adds the offset.
//!
//! Invariants: a platform's support has no surface motion of its own (a belt on a ferry
//! is not modelled); the offset of a frame depends only on the motion and the frame
//! number, so runs are the same at any thread count and a restored crowd places its
//! platforms where the saved one did. Not yet: platforms that turn (their offset would
//! carry a rotation about Up, and every frame change a turn of velocities).

use glam::{Vec2, Vec3};

use super::ConnectionWindow;

/// How a platform moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlatformMotion {
    /// Placed by the host: at `offset` now, moving at `velocity` (m/s) over the next step.
    /// The host sets it again each step it moves
    /// ([`Crowd::set_platform_motion`](super::Crowd::set_platform_motion)); between
    /// settings the platform goes on at `velocity`.
    Placed {
        /// World minus mesh coordinates of the platform's polygons at the frame it is set.
        offset: Vec3,
        /// Its velocity, m/s.
        velocity: Vec3,
    },
    /// Shuttles between two stops by itself ([`Shuttle`]).
    Shuttle(Shuttle),
}

/// A platform going back and forth between two stops, a ferry between docks or a lift car
/// between floors: it waits `dwell_frames` at `from`, travels to `to` in `travel_frames`
/// (speeding up and slowing down smoothly, half a cosine), waits at `to`, travels back, and
/// so on from frame 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shuttle {
    /// The offset at the first stop (mesh to world).
    pub from: Vec3,
    /// The offset at the second stop.
    pub to: Vec3,
    /// Frames waited at each stop. Limit: at least 1.
    pub dwell_frames: u32,
    /// Frames of each journey. Limit: at least 1.
    pub travel_frames: u32,
}

impl Shuttle {
    /// Frames of a whole round trip.
    pub fn period_frames(&self) -> u64 {
        2 * (u64::from(self.dwell_frames) + u64::from(self.travel_frames))
    }

    /// The offset at frame `frame`.
    pub fn offset_at(&self, frame: u64) -> Vec3 {
        let (dwell, travel) = (u64::from(self.dwell_frames), u64::from(self.travel_frames));
        let phase = frame % self.period_frames().max(1);
        let eased = |into: u64| {
            let part = into as f32 / travel.max(1) as f32;
            0.5 - 0.5 * (std::f32::consts::PI * part).cos()
        };
        if phase < dwell {
            self.from
        } else if phase < dwell + travel {
            self.from.lerp(self.to, eased(phase - dwell))
        } else if phase < 2 * dwell + travel {
            self.to
        } else {
            self.to.lerp(self.from, eased(phase - 2 * dwell - travel))
        }
    }

    /// Its acceleration at frame `frame` over frames of `dt_s` (the second derivative of
    /// the half-cosine journey; zero at the stops), m/s²: the translation term a body on
    /// it feels (spec 004's ö).
    pub fn acceleration_at(&self, frame: u64, dt_s: f32) -> Vec3 {
        let (dwell, travel) = (u64::from(self.dwell_frames), u64::from(self.travel_frames));
        let phase = frame % self.period_frames().max(1);
        let journey_s = travel.max(1) as f32 * dt_s;
        let (into, span) = if (dwell..dwell + travel).contains(&phase) {
            (phase - dwell, self.to - self.from)
        } else if phase >= 2 * dwell + travel {
            (phase - 2 * dwell - travel, self.from - self.to)
        } else {
            return Vec3::ZERO;
        };
        let angle = std::f32::consts::PI * into as f32 / travel.max(1) as f32;
        span * (0.5 * (std::f32::consts::PI / journey_s).powi(2) * angle.cos())
    }

    /// The frames it stands at `from` (`at_from`) or at `to`: the window a link between
    /// that stop and the platform may be crossed in
    /// ([`Crowd::set_link_window`](super::Crowd::set_link_window)).
    pub fn stop_window(&self, at_from: bool) -> ConnectionWindow {
        let (dwell, travel) = (u64::from(self.dwell_frames), u64::from(self.travel_frames));
        ConnectionWindow {
            first_open_frame: if at_from { 0 } else { dwell + travel },
            open_frames: dwell,
            period_frames: self.period_frames(),
        }
    }

    fn problem(&self) -> Option<&'static str> {
        if !(self.from.is_finite() && self.to.is_finite()) {
            Some("the stops must be finite")
        } else if self.dwell_frames == 0 {
            Some("dwell_frames must be at least 1")
        } else if self.travel_frames == 0 {
            Some("travel_frames must be at least 1")
        } else {
            None
        }
    }
}

impl PlatformMotion {
    /// Why the motion is not one (`None`: it is): the first limit it breaks.
    pub fn problem(&self) -> Option<&'static str> {
        match self {
            PlatformMotion::Placed { offset, velocity } => (!(offset.is_finite()
                && velocity.is_finite()))
            .then_some("the offset and velocity must be finite"),
            PlatformMotion::Shuttle(shuttle) => shuttle.problem(),
        }
    }

    /// The offset at `frame` and at the frame after, a step of `dt_s` later (a placed
    /// platform goes on at its velocity).
    pub fn offsets_over_step(&self, frame: u64, dt_s: f32) -> (Vec3, Vec3) {
        match self {
            PlatformMotion::Placed { offset, velocity } => (*offset, *offset + *velocity * dt_s),
            PlatformMotion::Shuttle(shuttle) => {
                (shuttle.offset_at(frame), shuttle.offset_at(frame + 1))
            }
        }
    }

    /// The offset at `frame` (a placed platform's where it was last placed or carried to).
    pub fn offset_at(&self, frame: u64) -> Vec3 {
        match self {
            PlatformMotion::Placed { offset, .. } => *offset,
            PlatformMotion::Shuttle(shuttle) => shuttle.offset_at(frame),
        }
    }

    /// Its translational acceleration at `frame` over frames of `dt_s`, m/s²: a shuttle's
    /// ([`Shuttle::acceleration_at`]); zero for a placed platform (its host, who moves
    /// it, knows what it does between placings).
    pub fn acceleration_at(&self, frame: u64, dt_s: f32) -> Vec3 {
        match self {
            PlatformMotion::Placed { .. } => Vec3::ZERO,
            PlatformMotion::Shuttle(shuttle) => shuttle.acceleration_at(frame, dt_s),
        }
    }

    /// The motion after a step of `dt_s`: a placed platform carried on by its velocity.
    pub(crate) fn after_step(self, dt_s: f32) -> PlatformMotion {
        match self {
            PlatformMotion::Placed { offset, velocity } => PlatformMotion::Placed {
                offset: offset + velocity * dt_s,
                velocity,
            },
            shuttle => shuttle,
        }
    }
}

/// The contact condition of a link between a platform and the ground (or another
/// platform): the link joins its two sides only while the platform's offset is within
/// `tolerance_m` of `offset` (the ferry at its dock, the lift car at its floor). Checked
/// when a crossing would start and at each of its steps; an agent whose crossing loses the
/// contact goes back to the entry and waits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkDock {
    /// The platform.
    pub support: crate::ids::SupportId,
    /// Where the platform must be, as its offset.
    pub offset: Vec3,
    /// How far from it still counts as aligned, metres. Limit: finite, at least 0.
    pub tolerance_m: f32,
}

impl LinkDock {
    /// Why the dock is not one (`None`: it is).
    pub fn problem(&self) -> Option<&'static str> {
        if !self.offset.is_finite() {
            Some("the offset must be finite")
        } else if !(self.tolerance_m.is_finite() && self.tolerance_m >= 0.0) {
            Some("tolerance_m must be finite and at least 0")
        } else {
            None
        }
    }
}

/// Every platform's offset and velocity for one frame, by support layer (empty: no
/// platform), as the step's passes read them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlatformFrames {
    /// Offset by layer (zero for layers that are not platforms).
    pub offsets: Vec<Vec3>,
    /// Velocity by layer over the step, m/s.
    pub velocities: Vec<Vec3>,
}

impl PlatformFrames {
    /// The offset of layer `layer`'s frame (zero: the ground, or a support in place).
    #[inline]
    pub fn offset(&self, layer: u32) -> Vec3 {
        self.offsets
            .get(layer as usize)
            .copied()
            .unwrap_or(Vec3::ZERO)
    }

    /// The offset seen from above.
    #[inline]
    pub fn flat_offset(&self, layer: u32) -> Vec2 {
        let offset = self.offset(layer);
        Vec2::new(offset.x, offset.z)
    }

    /// The platform velocity of layer `layer` (zero: not a platform), m/s.
    #[inline]
    pub fn velocity(&self, layer: u32) -> Vec3 {
        self.velocities
            .get(layer as usize)
            .copied()
            .unwrap_or(Vec3::ZERO)
    }

    /// Whether no platform is placed.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
}

/// A platform of the crowd: its support layer and motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Platform {
    pub layer: u16,
    pub motion: PlatformMotion,
}

/// The frames of `platforms` at `frame`, over steps of `dt_s` (velocity: the offset's
/// change over the step from `frame`).
pub(crate) fn platform_frames(platforms: &[Platform], frame: u64, dt_s: f32) -> PlatformFrames {
    let Some(last) = platforms.iter().map(|platform| platform.layer).max() else {
        return PlatformFrames::default();
    };
    let mut frames = PlatformFrames {
        offsets: vec![Vec3::ZERO; usize::from(last) + 1],
        velocities: vec![Vec3::ZERO; usize::from(last) + 1],
    };
    for platform in platforms {
        let (now, next) = platform.motion.offsets_over_step(frame, dt_s);
        frames.offsets[usize::from(platform.layer)] = now;
        frames.velocities[usize::from(platform.layer)] = (next - now) / dt_s;
    }
    frames
}

#[cfg(test)]
mod tests {
    use super::*;

    const FERRY: Shuttle = Shuttle {
        from: Vec3::new(0.0, 0.0, 0.0),
        to: Vec3::new(20.0, 0.0, 0.0),
        dwell_frames: 50,
        travel_frames: 100,
    };

    #[test]
    fn a_shuttle_waits_at_each_stop_and_travels_smoothly_between() {
        assert_eq!(FERRY.period_frames(), 300);
        assert_eq!(FERRY.offset_at(0), FERRY.from);
        assert_eq!(FERRY.offset_at(49), FERRY.from);
        // Half way through the journey, half way across; a quarter in, 14.6% across.
        assert!((FERRY.offset_at(100).x - 10.0).abs() < 1e-4);
        let quarter = 20.0 * (0.5 - 0.5 * (std::f32::consts::FRAC_PI_4).cos());
        assert!((FERRY.offset_at(75).x - quarter).abs() < 1e-4);
        assert_eq!(FERRY.offset_at(150), FERRY.to);
        assert_eq!(FERRY.offset_at(199), FERRY.to);
        assert!((FERRY.offset_at(250).x - 10.0).abs() < 1e-4);
        assert_eq!(FERRY.offset_at(300), FERRY.from);
        // Its stop windows are the frames it stands at each stop, but the first frame of
        // each journey (where it sets off from rest, still at the stop).
        for (at_from, stop) in [(true, FERRY.from), (false, FERRY.to)] {
            let window = FERRY.stop_window(at_from);
            let mut setting_off = 0;
            for frame in 0..600 {
                let open = window.open_frames_left(frame) > 0;
                let at_stop = FERRY.offset_at(frame) == stop;
                assert!(!open || at_stop, "frame {frame}");
                setting_off += usize::from(at_stop && !open);
            }
            assert_eq!(setting_off, 2, "once a round trip");
        }
    }

    #[test]
    fn a_shuttles_acceleration_is_the_second_difference_of_its_offsets() {
        let dt = 0.1;
        for frame in [10, 50, 60, 99, 130, 149, 175, 210, 260, 299] {
            let second = (FERRY.offset_at(frame + 1) - 2.0 * FERRY.offset_at(frame)
                + FERRY.offset_at(frame - 1))
                / (dt * dt);
            let analytic = FERRY.acceleration_at(frame, dt);
            // The finite difference is exact but at the journey's ends (a jump there from 0
            // to the half-cosine's peak, 20 m * (pi / 10 s)^2 / 2 = 0.987 m/s^2).
            if [50, 150, 200, 300].contains(&frame) {
                continue;
            }
            assert!(
                (second - analytic).length() < 0.01,
                "frame {frame}: {second} against {analytic}"
            );
        }
        let peak = 20.0 * 0.5 * (std::f32::consts::PI / 10.0).powi(2);
        assert!((FERRY.acceleration_at(50, dt).x - peak).abs() < 1e-4);
        assert!(
            (FERRY.acceleration_at(100, dt).x).abs() < 1e-4,
            "none mid-journey"
        );
        assert_eq!(FERRY.acceleration_at(20, dt), Vec3::ZERO);
        assert!(
            (FERRY.acceleration_at(200, dt).x + peak).abs() < 1e-4,
            "setting off back"
        );
    }

    #[test]
    fn frames_give_each_platform_its_offset_and_its_velocity_over_the_step() {
        let platforms = [Platform {
            layer: 2,
            motion: PlatformMotion::Shuttle(FERRY),
        }];
        let frames = platform_frames(&platforms, 100, 0.1);
        assert_eq!(frames.offset(0), Vec3::ZERO);
        assert_eq!(frames.offset(1), Vec3::ZERO);
        assert!((frames.offset(2).x - 10.0).abs() < 1e-4);
        // Top speed mid-journey: 20 m * pi / 2 over the 10 s journey.
        let expected = (FERRY.offset_at(101).x - FERRY.offset_at(100).x) / 0.1;
        assert!((frames.velocity(2).x - expected).abs() < 1e-3);
        let top_speed = 20.0 * std::f32::consts::PI / 2.0 / 10.0;
        assert!((frames.velocity(2).x - top_speed).abs() < 0.01);
        assert_eq!(frames.velocity(7), Vec3::ZERO);
        let placed = [Platform {
            layer: 1,
            motion: PlatformMotion::Placed {
                offset: Vec3::new(1.0, 2.0, 3.0),
                velocity: Vec3::new(0.0, 1.0, 0.0),
            },
        }];
        let frames = platform_frames(&placed, 15, 0.1);
        assert_eq!(frames.offset(1), Vec3::new(1.0, 2.0, 3.0));
        let carried = placed[0].motion.after_step(0.5);
        assert!((carried.offset_at(16) - Vec3::new(1.0, 2.5, 3.0)).length() < 1e-5);
        assert!((frames.velocity(1) - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-4);
    }

    #[test]
    fn bad_motions_and_docks_name_their_limit() {
        let mut shuttle = FERRY;
        shuttle.dwell_frames = 0;
        assert_eq!(
            PlatformMotion::Shuttle(shuttle).problem(),
            Some("dwell_frames must be at least 1")
        );
        shuttle = FERRY;
        shuttle.to.x = f32::NAN;
        assert_eq!(
            PlatformMotion::Shuttle(shuttle).problem(),
            Some("the stops must be finite")
        );
        let placed = PlatformMotion::Placed {
            offset: Vec3::ZERO,
            velocity: Vec3::new(f32::INFINITY, 0.0, 0.0),
        };
        assert!(placed.problem().is_some());
        let dock = LinkDock {
            support: crate::ids::SupportId(0),
            offset: Vec3::ZERO,
            tolerance_m: -1.0,
        };
        assert_eq!(
            dock.problem(),
            Some("tolerance_m must be finite and at least 0")
        );
    }
}
