//! The follow pass's funnel, run on eight agents at once.
//!
//! Stage: crowd, inside the follow pass. Input: per agent, the window of portals ahead of
//! it (its foot as a degenerate first portal, the corridor's next portals, the window's
//! end as a degenerate last one), at most [`FUNNEL_PORTALS_MAX`]. Output per agent: the
//! first corner farther than a millimetre from the foot, whether that corner is the
//! window's end, and the length of the pulled string, corner to corner, from the foot to
//! the end (what the speed profile brakes along).
//!
//! [`funnel_scalar`] pulls one window with [`pull`] (the query layer's string pulling) and
//! measures the result; [`funnel_lanes`] runs the same algorithm on eight windows in the
//! lanes of `wide` vectors: every lane keeps its own apex, funnel sides and portal index,
//! restarts are blends, and portals are gathered per lane. The two agree bit for bit
//! (tested): the same operations in the same order.

use glam::{Vec2, Vec3};
use wide::{f32x8, i32x8};

use crate::query::pull;

/// Lanes per batch.
pub const FUNNEL_LANES: usize = 8;

/// Most portals in one window: the foot, a rejoin edge, the look-ahead portals and the end.
pub const FUNNEL_PORTALS_MAX: usize = super::passes::LOOKAHEAD_PORTALS + 3;

/// Corners closer to the foot than this are not steered for, metres.
const CORNER_MIN_M: f32 = 1e-3;

/// What the follow pass needs from one pulled window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FunnelResult {
    /// The first corner farther than a millimetre from the foot (the foot if none is).
    pub corner: Vec2,
    /// Whether that corner is the window's end.
    pub corner_is_end: bool,
    /// Length of the pulled string from the foot to the window's end, metres.
    pub length_m: f32,
}

/// Pulls one window (first and last portals degenerate: the foot and the end) and measures
/// it: the reference for [`funnel_lanes`].
pub fn funnel_scalar(portals: &[(Vec3, Vec3)], corners: &mut Vec<(Vec3, usize)>) -> FunnelResult {
    corners.clear();
    pull(portals, corners);
    let start = portals.first().map_or(Vec3::ZERO, |portal| portal.0);
    let foot = Vec2::new(start.x, start.z);
    let mut result = FunnelResult {
        corner: foot,
        corner_is_end: false,
        length_m: 0.0,
    };
    let (mut previous, mut found) = (foot, false);
    for (index, &(corner, _)) in corners.iter().enumerate() {
        let corner = Vec2::new(corner.x, corner.z);
        result.length_m += previous.distance(corner);
        previous = corner;
        if !found && result.length_m > CORNER_MIN_M {
            found = true;
            result.corner = corner;
            result.corner_is_end = index == corners.len() - 1;
        }
    }
    result
}

/// Up to eight windows as lanes: portal `k` of lane `l` at `[k][l]`, so a portal index
/// shared by all lanes is one vector load and a lane's own index a gather.
#[derive(Clone, Debug)]
pub struct FunnelBatch {
    /// Windows in the batch (lanes beyond it are idle).
    pub count: usize,
    /// Portals per lane.
    pub portal_count: [i32; FUNNEL_LANES],
    left: [[[f32; FUNNEL_LANES]; 3]; FUNNEL_PORTALS_MAX],
    right: [[[f32; FUNNEL_LANES]; 3]; FUNNEL_PORTALS_MAX],
}

impl Default for FunnelBatch {
    fn default() -> Self {
        FunnelBatch {
            count: 0,
            portal_count: [0; FUNNEL_LANES],
            left: [[[0.0; FUNNEL_LANES]; 3]; FUNNEL_PORTALS_MAX],
            right: [[[0.0; FUNNEL_LANES]; 3]; FUNNEL_PORTALS_MAX],
        }
    }
}

impl FunnelBatch {
    /// Empties the batch.
    pub fn clear(&mut self) {
        self.count = 0;
        self.portal_count = [0; FUNNEL_LANES];
    }

    /// Whether all lanes are taken.
    pub fn is_full(&self) -> bool {
        self.count == FUNNEL_LANES
    }

    /// Adds a window (at least the foot and the end, at most [`FUNNEL_PORTALS_MAX`]
    /// portals); returns its lane.
    ///
    /// # Panics
    /// If the batch is full or the window has the wrong length (the follow pass builds
    /// windows within these bounds).
    pub fn push(&mut self, portals: &[(Vec3, Vec3)]) -> usize {
        assert!(!self.is_full(), "a full funnel batch");
        assert!((2..=FUNNEL_PORTALS_MAX).contains(&portals.len()));
        let lane = self.count;
        for (k, (left, right)) in portals.iter().enumerate() {
            for (axis, (l, r)) in [(left.x, right.x), (left.y, right.y), (left.z, right.z)]
                .into_iter()
                .enumerate()
            {
                self.left[k][axis][lane] = l;
                self.right[k][axis][lane] = r;
            }
        }
        self.portal_count[lane] = portals.len() as i32;
        self.count += 1;
        lane
    }

    /// Portal `index[l]` of every lane `l` (left or right side), as three vectors.
    #[inline]
    fn gather(
        &self,
        side: &[[[f32; FUNNEL_LANES]; 3]; FUNNEL_PORTALS_MAX],
        index: [i32; 8],
    ) -> [f32x8; 3] {
        let mut out = [[0.0f32; FUNNEL_LANES]; 3];
        for lane in 0..FUNNEL_LANES {
            let k = (index[lane].max(0) as usize).min(FUNNEL_PORTALS_MAX - 1);
            for axis in 0..3 {
                out[axis][lane] = side[k][axis][lane];
            }
        }
        out.map(f32x8::from)
    }
}

/// A point per lane.
#[derive(Clone, Copy)]
struct Points {
    x: f32x8,
    y: f32x8,
    z: f32x8,
}

impl Points {
    fn from_axes([x, y, z]: [f32x8; 3]) -> Points {
        Points { x, y, z }
    }

    fn blend(mask: f32x8, then: Points, otherwise: Points) -> Points {
        Points {
            x: mask.select(then.x, otherwise.x),
            y: mask.select(then.y, otherwise.y),
            z: mask.select(then.z, otherwise.z),
        }
    }

    /// Lanes where the two points are equal in all three coordinates.
    fn equals(self, other: Points) -> f32x8 {
        self.x.simd_eq(other.x) & self.y.simd_eq(other.y) & self.z.simd_eq(other.z)
    }
}

/// The funnel's turn test, per lane: the same expression as the query layer's.
#[inline]
fn turn(a: Points, b: Points, c: Points) -> f32x8 {
    -((b.x - a.x) * (c.z - a.z) - (c.x - a.x) * (b.z - a.z))
}

/// Per-lane indices as a float mask for blends.
#[inline]
fn mask_of(condition: i32x8) -> f32x8 {
    f32x8::from(bytemuck::cast::<i32x8, [f32; 8]>(condition))
}

#[inline]
fn condition_of(mask: f32x8) -> i32x8 {
    i32x8::from(bytemuck::cast::<f32x8, [i32; 8]>(mask))
}

/// The string-pulling state of every lane: the apex, the two sides with the portals they
/// lie on, and the next portal.
struct Funnel {
    apex: Points,
    left: Points,
    right: Points,
    left_index: i32x8,
    right_index: i32x8,
    index: i32x8,
}

impl Funnel {
    /// The lanes in `mask` restart at `corner` (a side that became a corner, on portal
    /// `corner_index`): it is recorded and becomes the apex, both sides collapse onto it,
    /// and the walk resumes at the portal after it.
    fn restart(&mut self, mask: f32x8, corner: Points, corner_index: i32x8, measure: &mut Measure) {
        if !mask.any() {
            return;
        }
        measure.record(mask, corner);
        let restart = condition_of(mask);
        self.apex = Points::blend(mask, corner, self.apex);
        self.left = Points::blend(mask, corner, self.left);
        self.right = Points::blend(mask, corner, self.right);
        self.left_index = restart.select(corner_index, self.left_index);
        self.right_index = restart.select(corner_index, self.right_index);
        self.index = restart.select(corner_index + i32x8::splat(1), self.index);
    }
}

/// The measuring side of the lane funnel: what [`funnel_scalar`] computes from the list of
/// corners, kept as the corners come.
struct Measure {
    /// The last corner (the foot before any).
    previous_x: f32x8,
    previous_z: f32x8,
    /// The last pushed corner in three coordinates, and whether any was pushed.
    last: Points,
    pushed: f32x8,
    /// Corners pushed so far, and how many there were when the first far one came.
    corners: i32x8,
    found_rank: i32x8,
    length: f32x8,
    first_x: f32x8,
    first_z: f32x8,
    /// All-ones in lanes that found their first far corner.
    found: f32x8,
}

impl Measure {
    fn new(start: Points) -> Measure {
        Measure {
            previous_x: start.x,
            previous_z: start.z,
            last: start,
            pushed: f32x8::splat(0.0),
            corners: i32x8::splat(0),
            found_rank: i32x8::splat(0),
            length: f32x8::splat(0.0),
            first_x: start.x,
            first_z: start.z,
            found: f32x8::splat(0.0),
        }
    }

    /// A corner for the lanes in `mask`: the string grows by the step from the last
    /// corner, and the first corner past a millimetre is kept.
    fn record(&mut self, mask: f32x8, corner: Points) {
        let step_x = corner.x - self.previous_x;
        let step_z = corner.z - self.previous_z;
        let step = (step_x * step_x + step_z * step_z).sqrt();
        self.length = mask.select(self.length + step, self.length);
        self.previous_x = mask.select(corner.x, self.previous_x);
        self.previous_z = mask.select(corner.z, self.previous_z);
        self.last = Points::blend(mask, corner, self.last);
        self.pushed |= mask;
        let condition = condition_of(mask);
        self.corners += condition & i32x8::splat(1);
        let newly = mask & !self.found & self.length.simd_gt(f32x8::splat(CORNER_MIN_M));
        self.first_x = newly.select(corner.x, self.first_x);
        self.first_z = newly.select(corner.z, self.first_z);
        self.found_rank = condition_of(newly).select(self.corners, self.found_rank);
        self.found |= newly;
    }
}

/// Pulls every window of `batch` at once; lane `l` of the answer is
/// `funnel_scalar(window l)` exactly.
pub fn funnel_lanes(batch: &FunnelBatch) -> [FunnelResult; FUNNEL_LANES] {
    let count = i32x8::from(batch.portal_count);
    let one = i32x8::splat(1);
    let zero = f32x8::splat(0.0);
    let start = Points::from_axes(batch.gather(&batch.left, [0; 8]));
    let end_index = (count - one).max(i32x8::splat(0)).to_array();
    let end = Points::from_axes(batch.gather(&batch.left, end_index));

    let mut funnel = Funnel {
        apex: start,
        left: start,
        right: start,
        left_index: i32x8::splat(0),
        right_index: i32x8::splat(0),
        index: one,
    };
    let mut measure = Measure::new(start);
    // The scalar loop's bound, per lane.
    let limit = count * count + i32x8::splat(8);
    let mut iterations = i32x8::splat(0);

    loop {
        let active = funnel.index.simd_lt(count) & iterations.simd_lt(limit);
        if active.to_array().iter().all(|&lane| lane == 0) {
            break;
        }
        let active_mask = mask_of(active);
        iterations += active & one;
        let index = funnel.index.to_array();
        let portal_left = Points::from_axes(batch.gather(&batch.left, index));
        let portal_right = Points::from_axes(batch.gather(&batch.right, index));

        // The right side of the funnel: tighten it, or, when it would cross the left side,
        // the left side becomes a corner.
        let Funnel {
            apex, left, right, ..
        } = funnel;
        let right_turn = turn(apex, right, portal_right).simd_ge(zero);
        let tighten_right = apex.equals(right) | turn(apex, left, portal_right).simd_lt(zero);
        let move_right = active_mask & right_turn & tighten_right;
        let restart_left = active_mask & right_turn & !tighten_right;
        funnel.right = Points::blend(move_right, portal_right, funnel.right);
        funnel.right_index = condition_of(move_right).select(funnel.index, funnel.right_index);
        funnel.restart(restart_left, funnel.left, funnel.left_index, &mut measure);

        // The left side, for lanes that did not restart.
        let live = active_mask & !restart_left;
        let Funnel {
            apex, left, right, ..
        } = funnel;
        let left_turn = turn(apex, left, portal_left).simd_le(zero);
        let tighten_left = apex.equals(left) | turn(apex, right, portal_left).simd_gt(zero);
        let move_left = live & left_turn & tighten_left;
        let restart_right = live & left_turn & !tighten_left;
        funnel.left = Points::blend(move_left, portal_left, funnel.left);
        funnel.left_index = condition_of(move_left).select(funnel.index, funnel.left_index);
        funnel.restart(
            restart_right,
            funnel.right,
            funnel.right_index,
            &mut measure,
        );

        // Lanes that did not restart go on to the next portal.
        let restarted = restart_left | restart_right;
        funnel.index += condition_of(active_mask & !restarted) & one;
    }

    // The end, unless the last corner already is it.
    let append_end = !measure.pushed | !measure.last.equals(end);
    measure.record(append_end, end);

    let mut results = [FunnelResult::default(); FUNNEL_LANES];
    let (first_x, first_z) = (measure.first_x.to_array(), measure.first_z.to_array());
    let (found, rank, corners) = (
        condition_of(measure.found).to_array(),
        measure.found_rank.to_array(),
        measure.corners.to_array(),
    );
    let length = measure.length.to_array();
    for lane in 0..batch.count {
        results[lane] = FunnelResult {
            corner: Vec2::new(first_x[lane], first_z[lane]),
            corner_is_end: found[lane] != 0 && rank[lane] == corners[lane],
            length_m: length[lane],
        };
    }
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geom::SplitMix64;

    /// A random window: the foot, portals that wander left and right along +x (some
    /// degenerate, some repeated, some twisted), the end.
    fn window(random: &mut SplitMix64, portals: usize) -> Vec<(Vec3, Vec3)> {
        let mut value = |scale: f32| (random.next_f32() * 2.0 - 1.0) * scale;
        let foot = Vec3::new(value(1.0), value(0.5), value(1.0));
        let mut out = vec![(foot, foot)];
        let mut x = foot.x;
        for k in 0..portals {
            x += 0.5 + value(0.5).abs() * 3.0;
            let centre = value(4.0);
            let half = value(2.0).abs() + if k % 5 == 0 { 0.0 } else { 0.3 };
            let y = value(0.3);
            // Walking +x the left is -z; every eleventh portal is twisted the wrong way
            // round (the funnel must still terminate and agree).
            let side = if k % 11 == 10 { -half } else { half };
            let left = Vec3::new(x + value(0.5), y, centre - side);
            let right = Vec3::new(x + value(0.5), y, centre + side);
            out.push((left, right));
            if k % 7 == 3 {
                out.push((left, right)); // the same portal twice
            }
        }
        let end = Vec3::new(x + 1.0 + value(1.0).abs(), value(0.3), value(4.0));
        out.push((end, end));
        out.truncate(FUNNEL_PORTALS_MAX);
        let last = out.len() - 1;
        out[last] = (end, end);
        out
    }

    #[test]
    fn the_lane_funnel_agrees_with_the_scalar_one_bit_for_bit() {
        let mut random = SplitMix64::new(5);
        let mut corners = Vec::new();
        for round in 0..3_000 {
            let mut batch = FunnelBatch::default();
            let mut windows = Vec::new();
            // Batches of every size, windows of every length (the degenerate two-portal
            // window of an agent next to its goal included).
            for lane in 0..(1 + round % FUNNEL_LANES) {
                let portals = (round + lane * 3) % (FUNNEL_PORTALS_MAX - 1);
                let w = window(&mut random, portals);
                batch.push(&w);
                windows.push(w);
            }
            let lanes = funnel_lanes(&batch);
            for (lane, w) in windows.iter().enumerate() {
                let scalar = funnel_scalar(w, &mut corners);
                assert_eq!(lanes[lane], scalar, "round {round} lane {lane}: {w:?}");
            }
        }
    }

    #[test]
    fn a_bend_gives_its_inner_corner_and_the_string_length() {
        // Foot at the origin walking +x (its left is -z, y up); a portal at x = 2 from
        // z = -2 (left) to z = 0.5 (right); then the path turns right: the end at (4, 0, 4).
        let foot = Vec3::ZERO;
        let portals = [
            (foot, foot),
            (Vec3::new(2.0, 0.0, -2.0), Vec3::new(2.0, 0.0, 0.5)),
            (Vec3::new(4.0, 0.0, 4.0), Vec3::new(4.0, 0.0, 4.0)),
        ];
        let mut corners = Vec::new();
        let scalar = funnel_scalar(&portals, &mut corners);
        let mut batch = FunnelBatch::default();
        batch.push(&portals);
        assert_eq!(funnel_lanes(&batch)[0], scalar);
        // The string bends round the portal's right end at (2, 0.5).
        let bend = Vec2::new(2.0, 0.5);
        let expected = bend.length() + bend.distance(Vec2::new(4.0, 4.0));
        assert_eq!(scalar.corner, bend);
        assert!(!scalar.corner_is_end);
        assert!((scalar.length_m - expected).abs() < 1e-5, "{scalar:?}");
    }
}
