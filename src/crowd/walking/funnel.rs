//! The follow pass's funnel: one agent's window of portals pulled and measured.
//!
//! Stage: crowd, inside the follow pass. Input: per agent, the window of portals ahead of
//! it (its foot as a degenerate first portal, the corridor's next portals, the window's
//! end as a degenerate last one), at most [`FUNNEL_PORTALS_MAX`]. Output per agent: the
//! first corner farther than a millimetre from the foot, whether that corner is the
//! window's end, and the length of the pulled string, corner to corner, from the foot to
//! the end (what the speed profile brakes along).
//!
//! [`funnel_scalar`] pulls the window with [`pull`] (the query layer's string pulling) and
//! measures the result. The follow pass runs it per agent: its cost is in fetching the
//! portals, not in pulling them, so an eight-wide twin does not pay (docs/benchmarks.md).

use glam::{Vec2, Vec3};

use crate::query::pull;

/// Portals ahead of the cursor the follow pass pulls the string through.
pub const LOOKAHEAD_PORTALS: usize = 12;

/// Most portals in one window: the foot, a rejoin edge, the look-ahead portals and the end.
pub const FUNNEL_PORTALS_MAX: usize = LOOKAHEAD_PORTALS + 3;

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
/// it.
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

#[cfg(test)]
mod tests {
    use super::*;

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
        // The string bends round the portal's right end at (2, 0.5).
        let bend = Vec2::new(2.0, 0.5);
        let expected = bend.length() + bend.distance(Vec2::new(4.0, 4.0));
        assert_eq!(scalar.corner, bend);
        assert!(!scalar.corner_is_end);
        assert!((scalar.length_m - expected).abs() < 1e-5, "{scalar:?}");
    }
}
