//! Platforms: supports whose footprint moves (a ferry's deck, a lift's car, a swing
//! bridge), spec 002's platform geometry and spec 004's carried body.
//!
//! Stage: crowd runtime, read by the step (neighbours, avoidance, separation, link
//! crossings) and by what answers the host in the world
//! ([`Crowd::world_position`](crate::crowd::Crowd::world_position)). Input: a [`PlatformMotion`]
//! per platform support
//! ([`Crowd::set_platform_motion`](crate::crowd::Crowd::set_platform_motion): placed by the host
//! each step, or a built-in [`Shuttle`] between two stops) and, per platform-to-ground
//! link, a [`LinkDock`]: the pose the platform must stand at, within a tolerance, for the
//! link to join the two sides. Output: each platform's pose and velocity field at a frame.
//!
//! A platform's polygons are baked once in its own frame and stay there in the mesh: a
//! scene instance marked as a support, baked where no ground is (so no edge joins it to
//! the ground; only links do), and placed in the world by its pose, world = o(t) + R(t)
//! mesh, R a turn about Up. An agent on a platform keeps its foot in the platform's frame
//! (its lanes hold mesh coordinates, like every agent's, and its velocities are relative to
//! the platform, in its frame), so its corridor, the follow pass, the controller and the
//! slope pass see a still floor: a corridor on a platform stays valid while the platform
//! moves or turns (a turn about Up keeps clearance and slope), and is rejected only when
//! the platform's tiles are rebuilt (their generation is the platform's shape version, in
//! every corridor's read set). The relative velocity kept in the turning frame is spec
//! 004's wCarry = R1 R0ᵀ w0 with no work at all. Only what compares agents in different
//! frames (the neighbour grid, avoidance, separation) or answers in the world (positions,
//! velocities, link crossings) places them by the pose.
//!
//! Invariants: a platform's support has no surface motion of its own (a belt on a ferry
//! is not modelled); the pose of a frame depends only on the motion and the frame number,
//! so runs are the same at any thread count and a restored crowd places its platforms
//! where the saved one did. A rotation about any other axis (a ship's roll) changes the
//! platform's slopes, so its walkable region must be found again: the host bakes it under
//! the tilted pose and commits the tile (`NavMesh::commit_rebuilt_tile`, then
//! `Crowd::set_mesh`; the runtime has no baker), whose new generation is the new region
//! version: corridors that read the old region are rejected, named, and searched again on
//! the new one, as for any rebuilt tile.

use glam::{Vec2, Vec3};

use super::connection::ConnectionWindow;
use super::support::SupportMotion;
use super::support::turn_about_up;
use crate::geom::limits;

/// Where a platform stands: its polygons, baked in its own frame, are placed at
/// world = `offset` + R(`yaw_rad`) mesh, R a turn about Up (a positive angle takes +x
/// towards -z).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PlatformPose {
    /// Where the mesh's origin is placed, metres.
    pub offset: Vec3,
    /// The turn about Up, radians.
    pub yaw_rad: f32,
}

impl PlatformPose {
    /// The pose that leaves the polygons where they were baked.
    pub const IDENTITY: PlatformPose = PlatformPose {
        offset: Vec3::ZERO,
        yaw_rad: 0.0,
    };

    /// A pose that only moves the polygons by `offset`.
    pub const fn at(offset: Vec3) -> PlatformPose {
        PlatformPose {
            offset,
            yaw_rad: 0.0,
        }
    }

    /// `point` of the platform's frame (mesh coordinates) in the world.
    #[inline]
    pub fn place(&self, point: Vec3) -> Vec3 {
        self.offset + self.place_vector(point)
    }

    /// A vector of the platform's frame in the world (turned, not moved).
    #[inline]
    pub fn place_vector(&self, vector: Vec3) -> Vec3 {
        let turned = turn_about_up(Vec2::new(vector.x, vector.z), self.yaw_rad);
        Vec3::new(turned.x, vector.y, turned.y)
    }

    /// A world vector in the platform's frame.
    #[inline]
    pub fn local_vector(&self, vector: Vec3) -> Vec3 {
        let turned = turn_about_up(Vec2::new(vector.x, vector.z), -self.yaw_rad);
        Vec3::new(turned.x, vector.y, turned.y)
    }

    /// How far `point` of the platform's frame is between this pose and `other`, metres.
    pub fn distance_of(&self, point: Vec3, other: &PlatformPose) -> f32 {
        self.place(point).distance(other.place(point))
    }

    /// Whether the offset lies inside the world's coordinates
    /// ([`COORDINATE_MAX_M`](crate::geom::limits::COORDINATE_MAX_M)) and the turn is finite.
    fn in_range(&self) -> bool {
        limits::within_each(self.offset, limits::COORDINATE_MAX_M) && self.yaw_rad.is_finite()
    }
}

/// A platform's frame seen from above, for the passes that compare agents in different
/// frames: world (x, z) = `offset` + R `local`, with R's cosine and sine kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FlatFrame {
    /// Where the frame's origin is, seen from above.
    pub offset: Vec2,
    cos: f32,
    sin: f32,
}

impl FlatFrame {
    /// The world's own frame.
    pub const WORLD: FlatFrame = FlatFrame {
        offset: Vec2::ZERO,
        cos: 1.0,
        sin: 0.0,
    };

    /// The frame of `pose`, seen from above.
    pub fn of(pose: &PlatformPose) -> FlatFrame {
        let (sin, cos) = pose.yaw_rad.sin_cos();
        FlatFrame {
            offset: Vec2::new(pose.offset.x, pose.offset.z),
            cos,
            sin,
        }
    }

    /// A point of the frame in the world.
    #[inline(always)]
    pub fn place(&self, point: Vec2) -> Vec2 {
        self.offset + self.to_world(point)
    }

    /// A vector of the frame in the world.
    #[inline(always)]
    pub fn to_world(self, vector: Vec2) -> Vec2 {
        Vec2::new(
            vector.x * self.cos + vector.y * self.sin,
            -vector.x * self.sin + vector.y * self.cos,
        )
    }

    /// A world vector in the frame.
    #[inline(always)]
    pub fn to_local(self, vector: Vec2) -> Vec2 {
        Vec2::new(
            vector.x * self.cos - vector.y * self.sin,
            vector.x * self.sin + vector.y * self.cos,
        )
    }
}

/// How a platform moves.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PlatformMotion {
    /// Placed by the host: at `pose` now, its mesh origin moving at `velocity` (m/s) and
    /// turning about Up at `yaw_rate_rad_s` over the next step. The host sets it again
    /// each step it moves
    /// ([`Crowd::set_platform_motion`](crate::crowd::Crowd::set_platform_motion)); between
    /// settings the platform goes on at that velocity and turn rate.
    Placed {
        /// Where it stands at the frame it is set.
        pose: PlatformPose,
        /// The velocity of its mesh origin, m/s.
        velocity: Vec3,
        /// Its turn rate about Up, rad/s (positive takes +x towards -z).
        yaw_rate_rad_s: f32,
    },
    /// Shuttles between two stops by itself, without turning ([`Shuttle`]).
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
    /// ([`Crowd::set_link_window`](crate::crowd::Crowd::set_link_window)).
    pub fn stop_window(&self, at_from: bool) -> ConnectionWindow {
        let (dwell, travel) = (u64::from(self.dwell_frames), u64::from(self.travel_frames));
        ConnectionWindow {
            first_open_frame: if at_from { 0 } else { dwell + travel },
            open_frames: dwell,
            period_frames: self.period_frames(),
        }
    }

    fn problem(&self) -> Option<&'static str> {
        if !(limits::within_each(self.from, limits::COORDINATE_MAX_M)
            && limits::within_each(self.to, limits::COORDINATE_MAX_M))
        {
            Some("the stops must be finite, inside the world's coordinates (1e5 m)")
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
    /// A host's placing that only moves the platform: at `offset`, moving at `velocity`.
    pub fn placed_at(offset: Vec3, velocity: Vec3) -> PlatformMotion {
        PlatformMotion::Placed {
            pose: PlatformPose::at(offset),
            velocity,
            yaw_rate_rad_s: 0.0,
        }
    }

    /// Why the motion is not one (`None`: it is): the first limit it breaks.
    pub fn problem(&self) -> Option<&'static str> {
        match self {
            PlatformMotion::Placed {
                pose,
                velocity,
                yaw_rate_rad_s,
            } => (!(pose.in_range()
                && limits::within_each(*velocity, limits::SPEED_MAX_MPS)
                && limits::within(*yaw_rate_rad_s, limits::ANGULAR_SPEED_MAX_RAD_S)))
            .then_some(
                "the pose must lie inside the world's coordinates (1e5 m), the velocity \
                 within 1e3 m/s and the turn rate within 100 rad/s",
            ),
            PlatformMotion::Shuttle(shuttle) => shuttle.problem(),
        }
    }

    /// The pose at `frame` and at the frame after, a step of `dt_s` later (a placed
    /// platform goes on at its velocity and turn rate).
    pub fn poses_over_step(&self, frame: u64, dt_s: f32) -> (PlatformPose, PlatformPose) {
        match *self {
            PlatformMotion::Placed { pose, .. } => (pose, self.after_step(dt_s).pose_at(frame)),
            PlatformMotion::Shuttle(shuttle) => (
                PlatformPose::at(shuttle.offset_at(frame)),
                PlatformPose::at(shuttle.offset_at(frame + 1)),
            ),
        }
    }

    /// The pose at `frame` (a placed platform's where it was last placed or carried to).
    pub fn pose_at(&self, frame: u64) -> PlatformPose {
        match self {
            PlatformMotion::Placed { pose, .. } => *pose,
            PlatformMotion::Shuttle(shuttle) => PlatformPose::at(shuttle.offset_at(frame)),
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

    /// The motion after a step of `dt_s`: a placed platform carried on by its velocity
    /// and turn rate.
    pub(crate) fn after_step(self, dt_s: f32) -> PlatformMotion {
        match self {
            PlatformMotion::Placed {
                pose,
                velocity,
                yaw_rate_rad_s,
            } => PlatformMotion::Placed {
                pose: PlatformPose {
                    offset: pose.offset + velocity * dt_s,
                    yaw_rad: pose.yaw_rad + yaw_rate_rad_s * dt_s,
                },
                velocity,
                yaw_rate_rad_s,
            },
            shuttle => shuttle,
        }
    }
}

/// The contact condition of a link between a platform and the ground (or another
/// platform): the link joins its two sides only while the platform stands within
/// `tolerance_m` of `pose` (the ferry at its dock, the lift car at its floor), measured
/// where it matters, at the link's end on the platform: that point placed by the
/// platform's pose now and by the dock's lie within the tolerance (a turn counts by how far
/// it moves the end). Checked when a crossing would start and at each of its steps; an
/// agent whose crossing loses the contact goes back to the entry and waits.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinkDock {
    /// The platform.
    pub support: crate::ids::SupportId,
    /// Where the platform must stand.
    pub pose: PlatformPose,
    /// How far the link's end on the platform may be from where the dock puts it, metres.
    /// Limit: finite, at least 0.
    pub tolerance_m: f32,
}

impl LinkDock {
    /// Why the dock is not one (`None`: it is).
    pub fn problem(&self) -> Option<&'static str> {
        if !self.pose.in_range() {
            Some("the pose must be finite, inside the world's coordinates (1e5 m)")
        } else if !(self.tolerance_m.is_finite() && self.tolerance_m >= 0.0) {
            Some("tolerance_m must be finite and at least 0")
        } else {
            None
        }
    }
}

/// Every platform's pose and motion for one frame, by support layer (empty: no
/// platform), as the step's passes read them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlatformFrames {
    /// Pose by layer (the identity for layers that are not platforms).
    pub poses: Vec<PlatformPose>,
    /// The velocity field over the step by layer, in the world: the mesh origin's
    /// velocity at its place and the turn rate (still for layers that are not platforms).
    pub motions: Vec<SupportMotion>,
}

impl PlatformFrames {
    /// The pose of layer `layer`'s frame (the identity: the ground, or a support in place).
    #[inline]
    pub fn pose(&self, layer: u32) -> PlatformPose {
        self.poses
            .get(layer as usize)
            .copied()
            .unwrap_or(PlatformPose::IDENTITY)
    }

    /// `point` of layer `layer`'s frame in the world.
    #[inline]
    pub fn place(&self, layer: u32, point: Vec3) -> Vec3 {
        match self.poses.get(layer as usize) {
            Some(pose) => pose.place(point),
            None => point,
        }
    }

    /// Layer `layer`'s frame seen from above.
    #[inline]
    pub fn flat(&self, layer: u32) -> FlatFrame {
        self.poses
            .get(layer as usize)
            .map_or(FlatFrame::WORLD, FlatFrame::of)
    }

    /// The velocity of layer `layer`'s platform at world point `point` (zero: not a
    /// platform), m/s.
    #[inline]
    pub fn velocity_at(&self, layer: u32, point: Vec3) -> Vec3 {
        self.motions
            .get(layer as usize)
            .map_or(Vec3::ZERO, |motion| motion.velocity_at(point))
    }

    /// Whether no platform is placed.
    pub fn is_empty(&self) -> bool {
        self.poses.is_empty()
    }
}

/// A platform of the crowd: its support layer and motion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Platform {
    pub layer: u16,
    pub motion: PlatformMotion,
}

/// The frames of `platforms` at `frame`, over steps of `dt_s` (motion: the pose's change
/// over the step from `frame`).
pub(crate) fn platform_frames(platforms: &[Platform], frame: u64, dt_s: f32) -> PlatformFrames {
    let Some(last) = platforms.iter().map(|platform| platform.layer).max() else {
        return PlatformFrames::default();
    };
    let mut frames = PlatformFrames {
        poses: vec![PlatformPose::IDENTITY; usize::from(last) + 1],
        motions: vec![SupportMotion::STILL; usize::from(last) + 1],
    };
    for platform in platforms {
        let (now, next) = platform.motion.poses_over_step(frame, dt_s);
        frames.poses[usize::from(platform.layer)] = now;
        frames.motions[usize::from(platform.layer)] = SupportMotion {
            velocity: (next.offset - now.offset) / dt_s,
            pivot: now.offset,
            angular_velocity_rad_s: (next.yaw_rad - now.yaw_rad) / dt_s,
        };
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
    fn frames_give_each_platform_its_pose_and_its_velocity_over_the_step() {
        let platforms = [Platform {
            layer: 2,
            motion: PlatformMotion::Shuttle(FERRY),
        }];
        let frames = platform_frames(&platforms, 100, 0.1);
        assert_eq!(frames.pose(0), PlatformPose::IDENTITY);
        assert_eq!(frames.pose(1), PlatformPose::IDENTITY);
        assert!((frames.pose(2).offset.x - 10.0).abs() < 1e-4);
        // Top speed mid-journey: 20 m * pi / 2 over the 10 s journey, everywhere on it.
        let expected = (FERRY.offset_at(101).x - FERRY.offset_at(100).x) / 0.1;
        let anywhere = Vec3::new(13.0, 0.0, -4.0);
        assert!((frames.velocity_at(2, anywhere).x - expected).abs() < 1e-3);
        let top_speed = 20.0 * std::f32::consts::PI / 2.0 / 10.0;
        assert!((frames.velocity_at(2, anywhere).x - top_speed).abs() < 0.01);
        assert_eq!(frames.velocity_at(7, anywhere), Vec3::ZERO);
        // A placed platform turning a quarter turn a second about its origin, placed at
        // (1, 2, 3): its point (1, 0, 0) is at (1, 2, 2) once turned a quarter.
        let placed = [Platform {
            layer: 1,
            motion: PlatformMotion::Placed {
                pose: PlatformPose {
                    offset: Vec3::new(1.0, 2.0, 3.0),
                    yaw_rad: 0.0,
                },
                velocity: Vec3::new(0.0, 1.0, 0.0),
                yaw_rate_rad_s: std::f32::consts::FRAC_PI_2,
            },
        }];
        let frames = platform_frames(&placed, 15, 0.1);
        assert_eq!(frames.place(1, Vec3::X), Vec3::new(2.0, 2.0, 3.0));
        let turned = placed[0].motion.after_step(1.0).pose_at(16);
        assert!((turned.place(Vec3::X) - Vec3::new(1.0, 3.0, 2.0)).length() < 1e-5);
        assert!(
            (turned.local_vector(turned.place_vector(Vec3::new(0.3, 0.1, -2.0)))
                - Vec3::new(0.3, 0.1, -2.0))
            .length()
                < 1e-6
        );
        // Its point (1, 0, 0) moves at the origin's velocity plus the turn's, -z at 1.57 m/s.
        let velocity = frames.velocity_at(1, frames.place(1, Vec3::X));
        assert!((velocity - Vec3::new(0.0, 1.0, -std::f32::consts::FRAC_PI_2)).length() < 1e-3);
        // The frame from above agrees with the pose.
        let flat = FlatFrame::of(&turned);
        let point = Vec3::new(0.7, 0.0, -1.1);
        let placed_flat = flat.place(Vec2::new(point.x, point.z));
        let placed_3d = turned.place(point);
        assert!((placed_flat - Vec2::new(placed_3d.x, placed_3d.z)).length() < 1e-5);
        assert!(
            (flat.to_local(flat.to_world(Vec2::new(0.2, 0.9))) - Vec2::new(0.2, 0.9)).length()
                < 1e-6
        );
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
            Some("the stops must be finite, inside the world's coordinates (1e5 m)")
        );
        shuttle = FERRY;
        shuttle.to.z = 2e5;
        assert!(PlatformMotion::Shuttle(shuttle).problem().is_some());
        let placed = PlatformMotion::placed_at(Vec3::ZERO, Vec3::new(f32::INFINITY, 0.0, 0.0));
        assert!(placed.problem().is_some());
        let placed = PlatformMotion::placed_at(Vec3::ZERO, Vec3::new(0.0, 0.0, 1.1e3));
        assert!(placed.problem().is_some(), "faster than SPEED_MAX_MPS");
        let dock = LinkDock {
            support: crate::ids::SupportId(0),
            pose: PlatformPose::IDENTITY,
            tolerance_m: -1.0,
        };
        assert_eq!(
            dock.problem(),
            Some("tolerance_m must be finite and at least 0")
        );
    }
}
