//! Moving supports' motion as the crowd and its controller use it (spec 004): each
//! support's velocity field over a step, the carry of a point through it, and the turn of
//! a relative velocity on a rotating support (wCarry).
//!
//! Stage: crowd runtime. Input: the host's motion per support ([`Crowd::set_support_velocity`]
//! for a belt, [`Crowd::set_support_rotation`] for a turntable), held constant over a step.
//! Output: the surface velocity under a foot (`u_support`), a point carried over a step,
//! the body-acceleration terms a rotating support adds (for the host's contact solve).
//!
//! A motion is a twist: the velocity of the support at a `pivot` and a turn rate about Up.
//! Held constant over a step, its velocity field `u(x) = velocity + ω × (x - pivot)` is the
//! same at every instant, so a point rides a circle about the field's still point (or a
//! line when it does not turn) and its carry has a closed form. Both motions leave the
//! support's footprint where it was baked: a belt's surface slides within it, a turntable's
//! disc turns in place; so the support's polygons stay put in the mesh while the bodies on
//! them are carried. Supports whose footprint moves (a ferry, a lift) need their polygons
//! placed by a pose, which this module does not do.
//!
//! [`Crowd::set_support_velocity`]: crate::crowd::Crowd::set_support_velocity
//! [`Crowd::set_support_rotation`]: crate::crowd::Crowd::set_support_rotation

use glam::{Vec2, Vec3};

use crate::crowd::codec::{Reader, RestoreError, Saved, Writer};

/// `vector` (x, z) turned about Up (+y) by `angle_rad`: a positive angle takes +x towards
/// -z, as a rotation about +y does in a right-handed frame.
#[inline]
pub fn turn_about_up(vector: Vec2, angle_rad: f32) -> Vec2 {
    let (sin, cos) = angle_rad.sin_cos();
    Vec2::new(
        vector.x * cos + vector.y * sin,
        -vector.x * sin + vector.y * cos,
    )
}

/// `ω × r` for ω about Up, horizontally (x, z).
#[inline]
fn cross_up(angular_velocity_rad_s: f32, offset: Vec2) -> Vec2 {
    Vec2::new(
        angular_velocity_rad_s * offset.y,
        -angular_velocity_rad_s * offset.x,
    )
}

/// A support's motion over a step: its velocity at `pivot` and its turn rate about Up.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SupportMotion {
    /// The support's velocity at `pivot`, m/s (a belt's surface velocity `u`).
    pub velocity: Vec3,
    /// The point whose velocity is `velocity`, metres (a turntable's centre).
    pub pivot: Vec3,
    /// Turn rate about Up, rad/s (positive takes +x towards -z).
    pub angular_velocity_rad_s: f32,
}

impl SupportMotion {
    /// Standing still.
    pub const STILL: SupportMotion = SupportMotion {
        velocity: Vec3::ZERO,
        pivot: Vec3::ZERO,
        angular_velocity_rad_s: 0.0,
    };

    /// A belt: its surface moves at `velocity` everywhere.
    pub fn belt(velocity: Vec3) -> SupportMotion {
        SupportMotion {
            velocity,
            ..SupportMotion::STILL
        }
    }

    /// A turntable turning about Up through `centre` at `angular_velocity_rad_s`.
    pub fn turntable(centre: Vec3, angular_velocity_rad_s: f32) -> SupportMotion {
        SupportMotion {
            velocity: Vec3::ZERO,
            pivot: centre,
            angular_velocity_rad_s,
        }
    }

    /// Whether the support stands still.
    pub fn is_still(&self) -> bool {
        self.velocity == Vec3::ZERO && self.angular_velocity_rad_s == 0.0
    }

    /// Whether every value is finite.
    pub fn is_finite(&self) -> bool {
        self.velocity.is_finite()
            && self.pivot.is_finite()
            && self.angular_velocity_rad_s.is_finite()
    }

    /// Whether every value lies in its physical range ([`crate::geom::limits`]): the
    /// velocity within the speed limit, the pivot inside the world, the turn rate within
    /// the turn limit.
    pub fn in_range(&self) -> bool {
        use crate::geom::limits::{
            ANGULAR_SPEED_MAX_RAD_S, COORDINATE_MAX_M, SPEED_MAX_MPS, within, within_each,
        };
        within_each(self.velocity, SPEED_MAX_MPS)
            && within_each(self.pivot, COORDINATE_MAX_M)
            && within(self.angular_velocity_rad_s, ANGULAR_SPEED_MAX_RAD_S)
    }

    /// The support's velocity at `point` (uSupport), m/s.
    #[inline]
    pub fn velocity_at(&self, point: Vec3) -> Vec3 {
        if self.angular_velocity_rad_s == 0.0 {
            return self.velocity;
        }
        let offset = Vec2::new(point.x - self.pivot.x, point.z - self.pivot.z);
        let turning = cross_up(self.angular_velocity_rad_s, offset);
        self.velocity + Vec3::new(turning.x, 0.0, turning.y)
    }

    /// The horizontal point the support turns about (its velocity is zero there), when it
    /// turns.
    pub(crate) fn still_point(&self) -> Option<Vec2> {
        let turn = self.angular_velocity_rad_s;
        (turn != 0.0).then(|| {
            // velocity + ω × (p - pivot) = 0 horizontally.
            Vec2::new(
                self.pivot.x + self.velocity.z / turn,
                self.pivot.z - self.velocity.x / turn,
            )
        })
    }

    /// Where the support carries `point` in `dt_s`: along a line at `velocity` for a support
    /// that does not turn, round the still point of its field for one that does (exactly,
    /// not to first order), plus the vertical velocity.
    pub fn carry(&self, point: Vec3, dt_s: f32) -> Vec3 {
        match self.still_point() {
            None => point + self.velocity * dt_s,
            Some(still) => {
                let offset = Vec2::new(point.x, point.z) - still;
                let carried = still + turn_about_up(offset, self.angular_velocity_rad_s * dt_s);
                Vec3::new(carried.x, point.y + self.velocity.y * dt_s, carried.y)
            }
        }
    }

    /// A velocity relative to the support, `relative` (x, z), as the support carries it
    /// through `dt_s` (wCarry = R1 R0ᵀ w0): the same local velocity on the turned support.
    #[inline]
    pub fn carry_relative_velocity(&self, relative: Vec2, dt_s: f32) -> Vec2 {
        if self.angular_velocity_rad_s == 0.0 {
            relative
        } else {
            turn_about_up(relative, self.angular_velocity_rad_s * dt_s)
        }
    }

    /// The body-acceleration terms the support adds for a body at `point` moving at
    /// `relative` to it (spec 004: the world acceleration is their sum plus R ÿ, the only
    /// part the active budget pays for). A host's contact solve takes them from here.
    pub fn body_acceleration_terms(&self, point: Vec3, relative: Vec3) -> SupportAcceleration {
        let turn = self.angular_velocity_rad_s;
        let offset = Vec2::new(point.x - self.pivot.x, point.z - self.pivot.z);
        // ω × (ω × r) = -ω² r horizontally; 2 ω × w.
        let centripetal = -offset * (turn * turn);
        let coriolis = cross_up(turn, Vec2::new(relative.x, relative.z)) * 2.0;
        SupportAcceleration {
            // The motion is held constant over a step: no translational or angular
            // acceleration within it.
            translation: Vec3::ZERO,
            angular: Vec3::ZERO,
            centripetal: Vec3::new(centripetal.x, 0.0, centripetal.y),
            coriolis: Vec3::new(coriolis.x, 0.0, coriolis.y),
        }
    }
}

/// The least progress a walker leaning into a carry makes along its wish in the world, as
/// a share of the wish's speed, before it walks faster than its pace to keep it.
pub const LEAN_LEAST_PROGRESS: f32 = 0.25;

/// The support velocity a step's relative end velocity is taken from (vSupportEnd) for a
/// foot at `foot` on support layer `layer` (`motions` by layer, as the crowd keeps them):
/// the support's velocity there, horizontal as the controller's, zero on a layer without
/// a motion. Used wherever a step ends on a support other than the one it started on.
pub(crate) fn support_end_velocity(motions: &[SupportMotion], layer: u32, foot: Vec3) -> Vec3 {
    motions.get(layer as usize).map_or(Vec3::ZERO, |motion| {
        let surface = motion.velocity_at(foot);
        Vec3::new(surface.x, 0.0, surface.z)
    })
}

/// The velocity relative to a support carrying the body at `carry` that keeps it heading
/// the way `wish` points in the world (a ferry's crab angle across a current): the part of
/// the carry across the wish is walked against, the part along it is not, so the walker
/// keeps its pace relative to the support along its way, as on a belt, with the belt or
/// against it. Where the carry against the wish leaves less than [`LEAN_LEAST_PROGRESS`]
/// of the pace in the world, the walker walks faster to keep that much. Both within
/// `speed_limit`: cancelling the carry across comes first, the pace along after; a carry
/// across the wish faster than the limit is leaned against with all of it.
pub fn lean_into_carry(wish: Vec2, carry: Vec2, speed_limit: f32) -> Vec2 {
    let speed = wish.length();
    if speed <= 1e-6 || carry == Vec2::ZERO {
        return wish;
    }
    let limit = speed_limit.max(speed);
    let direction = wish / speed;
    let along = direction.dot(carry);
    let across = carry - direction * along;
    // The pace along the wish, more where the carry against it would leave too little.
    let pace = speed.max(speed * LEAN_LEAST_PROGRESS - along);
    let room = limit * limit - across.length_squared();
    if room <= 0.0 {
        return -across.normalize_or_zero() * limit;
    }
    direction * pace.min(room.sqrt()) - across
}

/// The world-acceleration terms of a body on a moving support besides its own active
/// acceleration (spec 004: ö + α × R y + ω × (ω × R y) + 2 ω × w), m/s².
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SupportAcceleration {
    /// The support's translational acceleration ö.
    pub translation: Vec3,
    /// The angular-acceleration term α × R y.
    pub angular: Vec3,
    /// The centripetal term ω × (ω × R y).
    pub centripetal: Vec3,
    /// The Coriolis term 2 ω × w.
    pub coriolis: Vec3,
}

impl Saved for SupportMotion {
    const MIN_BYTES: usize = 28;
    fn write(&self, out: &mut Writer) {
        self.velocity.write(out);
        self.pivot.write(out);
        out.f32(self.angular_velocity_rad_s);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(SupportMotion {
            velocity: Vec3::read(input)?,
            pivot: Vec3::read(input)?,
            angular_velocity_rad_s: input.f32()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_ending_on_another_support_takes_its_horizontal_velocity_at_the_foot() {
        // Layer 0 the ground, 1 a rising belt (1 m/s along x, 0.5 m/s up), 2 a table turning
        // at 0.5 rad/s about (10, 0, 0); layer 3 has no motion at all.
        let motions = [
            SupportMotion::STILL,
            SupportMotion::belt(Vec3::new(1.0, 0.5, 0.0)),
            SupportMotion::turntable(Vec3::new(10.0, 0.0, 0.0), 0.5),
        ];
        let foot = Vec3::new(12.0, 0.0, 0.0);
        assert_eq!(support_end_velocity(&motions, 0, foot), Vec3::ZERO);
        // As the controller reports it: horizontal, the belt's rise left out.
        assert_eq!(support_end_velocity(&motions, 1, foot), Vec3::X);
        // 2 m from the centre along +x at 0.5 rad/s (positive takes +x towards -z).
        let turning = support_end_velocity(&motions, 2, foot);
        assert!(
            turning.distance(Vec3::new(0.0, 0.0, -1.0)) < 1e-6,
            "{turning}"
        );
        assert_eq!(support_end_velocity(&motions, 3, foot), Vec3::ZERO);
    }

    #[test]
    fn a_quarter_turn_takes_x_to_minus_z() {
        let turned = turn_about_up(Vec2::X, std::f32::consts::FRAC_PI_2);
        assert!(turned.distance(Vec2::new(0.0, -1.0)) < 1e-6, "{turned}");
        // The same as glam's rotation about +y.
        let quat = glam::Quat::from_rotation_y(0.7) * Vec3::new(0.3, 0.0, -1.2);
        let ours = turn_about_up(Vec2::new(0.3, -1.2), 0.7);
        assert!(ours.distance(Vec2::new(quat.x, quat.z)) < 1e-6);
    }

    #[test]
    fn a_turntable_carries_a_point_round_its_centre() {
        let table = SupportMotion::turntable(Vec3::new(5.0, 1.0, 5.0), 0.5);
        // Velocity at 2 m along +x from the centre: ω × r = (0, 0, -1).
        let at = Vec3::new(7.0, 1.0, 5.0);
        assert!(table.velocity_at(at).distance(Vec3::new(0.0, 0.0, -1.0)) < 1e-6);
        // After π seconds (a quarter turn at 0.5 rad/s) the point is at 2 m along -z.
        let carried = table.carry(at, std::f32::consts::PI);
        assert!(
            carried.distance(Vec3::new(5.0, 1.0, 3.0)) < 1e-5,
            "{carried}"
        );
        // The centre stays.
        assert_eq!(table.carry(table.pivot, 1.0), table.pivot);
    }

    #[test]
    fn a_turning_twist_given_away_from_its_still_point_carries_the_same() {
        // The turntable's field described at another point: the velocity there and the
        // same turn rate carry every point the same way.
        let table = SupportMotion::turntable(Vec3::new(5.0, 0.0, 5.0), 0.5);
        let elsewhere = Vec3::new(8.0, 0.0, 3.0);
        let described = SupportMotion {
            velocity: table.velocity_at(elsewhere),
            pivot: elsewhere,
            angular_velocity_rad_s: 0.5,
        };
        let point = Vec3::new(6.0, 0.0, 9.0);
        assert!(
            described
                .carry(point, 0.8)
                .distance(table.carry(point, 0.8))
                < 1e-5
        );
        assert!(
            described
                .velocity_at(point)
                .distance(table.velocity_at(point))
                < 1e-6
        );
    }

    #[test]
    fn a_belt_carries_along_a_line_and_keeps_relative_velocities() {
        let belt = SupportMotion::belt(Vec3::new(1.0, 0.0, 0.0));
        assert_eq!(belt.carry(Vec3::ZERO, 0.5), Vec3::new(0.5, 0.0, 0.0));
        assert_eq!(
            belt.carry_relative_velocity(Vec2::new(0.3, 0.4), 0.5),
            Vec2::new(0.3, 0.4)
        );
        assert!(!belt.is_still());
        assert!(SupportMotion::STILL.is_still());
    }

    #[test]
    fn leaning_into_a_carry_keeps_the_pace_and_the_heading() {
        // Along a belt, with or against: the wish itself.
        let wish = Vec2::new(1.4, 0.0);
        for belt in [1.0, -1.0] {
            let leaned = lean_into_carry(wish, Vec2::new(belt, 0.0), 2.0);
            assert!(leaned.distance(wish) < 1e-6, "{leaned}");
        }
        // Across a 1 m/s current: walk against it, keep the pace along the way; the world
        // velocity is the wish.
        let carry = Vec2::new(0.0, 1.0);
        let leaned = lean_into_carry(wish, carry, 2.0);
        assert!(leaned.distance(Vec2::new(1.4, -1.0)) < 1e-6, "{leaned}");
        assert!((leaned + carry).distance(wish) < 1e-6);
        // Across at 1.8 m/s: the across first, the pace with what the 2 m/s limit leaves
        // (sqrt(4 - 3.24) = 0.87 m/s).
        let leaned = lean_into_carry(wish, Vec2::new(0.0, 1.8), 2.0);
        assert!(
            leaned.distance(Vec2::new(0.76f32.sqrt(), -1.8)) < 1e-5,
            "{leaned}"
        );
        // Across at 2.1 m/s, beyond the limit: lean against it with all of it.
        let leaned = lean_into_carry(wish, Vec2::new(0.0, 2.1), 2.0);
        assert!(leaned.distance(Vec2::new(0.0, -2.0)) < 1e-5, "{leaned}");
        // A carry against the wish at the pace would leave nothing: walk faster, to keep a
        // quarter of the pace (1.4 + 0.35 = 1.75 m/s against a 1.4 m/s current).
        let leaned = lean_into_carry(wish, Vec2::new(-1.4, 0.0), 2.0);
        assert!(leaned.distance(Vec2::new(1.75, 0.0)) < 1e-5, "{leaned}");
        // Standing still stays still: the support carries the body.
        assert_eq!(lean_into_carry(Vec2::ZERO, carry, 2.0), Vec2::ZERO);
    }

    #[test]
    fn centripetal_and_coriolis_terms() {
        // 2 m from the centre of a table at 0.5 rad/s: centripetal 0.25 × 2 = 0.5 m/s²
        // towards the centre; walking outwards at 1 m/s: Coriolis 2 ω × w = (0, 0, -1).
        let table = SupportMotion::turntable(Vec3::ZERO, 0.5);
        let terms = table.body_acceleration_terms(Vec3::new(2.0, 0.0, 0.0), Vec3::X);
        assert!(terms.centripetal.distance(Vec3::new(-0.5, 0.0, 0.0)) < 1e-6);
        assert!(terms.coriolis.distance(Vec3::new(0.0, 0.0, -1.0)) < 1e-6);
        assert_eq!(terms.translation, Vec3::ZERO);
    }
}
