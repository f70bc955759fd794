//! Geometry shared by the baker and the runtime.
//!
//! Stage: base. Inputs are plain `glam` values; outputs are values, never references into
//! caller data.
//!
//! - [`UpBasis`]: world Up and the horizontal orthonormal basis derived from it. Every
//!   horizontal computation (erosion, funnels, arcs, velocity limits) goes through it, so a
//!   Z-up host maps its axes once here and nothing else needs to know.
//! - [`transform`]: full transform composition (ancestor chain x local) and its handedness.
//! - [`triangle`]: area, normal and degeneracy of world triangles.
//! - [`Aabb`]: axis-aligned bounds in world metres.
//! - [`planar`]: exact regions in the horizontal plane (half-planes and arcs, open or
//!   closed), convex clipping and hulls, for target projection.
//! - [`SplitMix64`]: a seeded random generator (generated levels, random scenarios).
//! - [`limits`]: the physical ranges every value entering waymark must lie in.
//! - [`next_around`]: the next corner of a polygon, for the walks round its edges.
//!
//! Invariants: lengths are world metres; a horizontal length is measured in the (X, Z)
//! basis of the current [`UpBasis`], which preserves lengths because it is orthonormal.

mod bounds;
pub mod limits;
pub mod planar;
mod random;
pub mod transform;
pub mod triangle;
mod up;

pub use bounds::Aabb;
pub use random::SplitMix64;
pub use up::{UpBasis, UpBasisError};

/// The index after `index` around a ring of `count` items (`index < count`): the same as
/// `(index + 1) % count` without the integer division, which the polygon walks of every
/// query and every frame would otherwise pay (20-odd cycles each) for each edge.
#[inline]
pub fn next_around(index: usize, count: usize) -> usize {
    if index + 1 >= count { 0 } else { index + 1 }
}

#[cfg(test)]
mod tests {
    use super::next_around;

    #[test]
    fn the_next_index_around_a_ring_is_the_one_the_remainder_gives() {
        for count in 1..=8 {
            for index in 0..count {
                assert_eq!(
                    next_around(index, count),
                    (index + 1) % count,
                    "{index} of {count}"
                );
            }
        }
    }
}
