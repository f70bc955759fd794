//! Stage [`Stage::Erode`](super::Stage::Erode): erode walkable space by the body radius.
//!
//! Spec 002: erosion propagates the distance to obstacles along the horizontal adjacency of
//! walkable spans and removes the centre positions closer than the radius; it is not a
//! shrinking of 3-D triangles. A span is a boundary (distance 0) when it lacks one of its
//! four links, or a linked neighbour is not walkable. With the radius in cells
//! `r = ceil(radius / cell)`, every span fewer than `r` steps from a boundary, the boundary
//! included, is removed: 3 cells for radius 0.4 at cell 0.15 (n1), never 2, which would keep
//! 0.3 m gaps.

use super::compact::CompactHeightfield;

/// Removes (sets area 0 on) every span within `radius_cells` of a boundary.
pub fn erode(compact: &mut CompactHeightfield, radius_cells: u32) {
    if radius_cells == 0 {
        return;
    }
    let mut distances = vec![u16::MAX; compact.span_count()];
    compact.for_each_span(|x, z, span| {
        let boundary = compact.areas[span] == 0
            || (0..4).any(|direction| match compact.neighbour(x, z, span, direction) {
                Some(neighbour) => compact.areas[neighbour] == 0,
                None => true,
            });
        if boundary {
            distances[span] = 0;
        }
    });
    super::compact::chamfer_distance(compact, &mut distances);
    // Chamfer units are half cells: `r` cells from the boundary is 2r.
    let threshold = (radius_cells * 2).min(u32::from(u16::MAX)) as u16;
    for (area, distance) in compact.areas.iter_mut().zip(&distances) {
        if *distance < threshold {
            *area = 0;
        }
    }
}
