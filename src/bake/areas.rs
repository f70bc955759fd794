//! Stage [`Stage::Areas`](super::Stage::Areas): area marking by convex volumes.
//!
//! A level designer marks part of the walkable surface with an area (water, road, a door
//! threshold a filter can close) by a convex prism: a convex polygon seen from above plus a
//! height range. Every walkable open span whose cell centre lies inside the polygon and whose
//! floor lies within the height range takes the volume's area. Volumes apply in order, so a
//! later one wins where they overlap. Triangle tags from the scene are applied earlier, at
//! rasterization; volumes are for areas the geometry does not carry.
//!
//! Runs after erosion, so a volume never makes eroded space walkable again. For the same
//! reason an [`AreaId::UNWALKABLE`] volume removes exactly its footprint from the space the
//! agent's centre may use, with no clearance eroded around it: an obstacle the body must
//! keep clear of belongs in the geometry, not in a volume.

use glam::Vec2;

use super::compact::CompactHeightfield;
use crate::ids::AreaId;

/// A convex prism that assigns an area to the walkable surface inside it.
#[derive(Clone, Debug, PartialEq)]
pub struct AreaVolume {
    /// The polygon seen from above, (x, z) in metres, convex, either winding.
    pub corners: Vec<Vec2>,
    /// Lowest floor height marked, metres.
    pub min_y: f32,
    /// Highest floor height marked, metres.
    pub max_y: f32,
    /// The area given. [`AreaId::UNWALKABLE`] cuts the surface out.
    pub area: AreaId,
}

/// A volume that cannot be used.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum AreaVolumeError {
    /// Fewer than three corners.
    #[error("area volume {index}: {count} corners, at least 3 needed")]
    TooFewCorners {
        /// Volume index.
        index: usize,
        /// Corners given.
        count: usize,
    },
    /// A corner or height is NaN or infinite, or the height range is inverted.
    #[error("area volume {index}: {what}")]
    BadValue {
        /// Volume index.
        index: usize,
        /// What is wrong, with the value.
        what: String,
    },
    /// The polygon is not convex.
    #[error("area volume {index}: the polygon is not convex at corner {corner}")]
    NotConvex {
        /// Volume index.
        index: usize,
        /// The first corner where it turns the other way.
        corner: usize,
    },
    /// The area id is beyond [`AreaId::MAX`].
    #[error(
        "area volume {index}: area {area} is beyond the largest area id {}",
        AreaId::MAX
    )]
    BadArea {
        /// Volume index.
        index: usize,
        /// The area given.
        area: u8,
    },
}

/// Checks every volume: at least three finite corners, convex, an ordered height range.
pub fn validate_volumes(volumes: &[AreaVolume]) -> Result<(), AreaVolumeError> {
    for (index, volume) in volumes.iter().enumerate() {
        let count = volume.corners.len();
        if count < 3 {
            return Err(AreaVolumeError::TooFewCorners { index, count });
        }
        if let Some(corner) = volume.corners.iter().find(|c| !c.is_finite()) {
            return Err(AreaVolumeError::BadValue {
                index,
                what: format!("corner {corner} is not finite"),
            });
        }
        if !(volume.min_y.is_finite() && volume.max_y.is_finite() && volume.min_y <= volume.max_y) {
            let what = format!(
                "height range {}..{} is not a finite, ordered range",
                volume.min_y, volume.max_y
            );
            return Err(AreaVolumeError::BadValue { index, what });
        }
        if volume.area.0 > AreaId::MAX {
            return Err(AreaVolumeError::BadArea {
                index,
                area: volume.area.0,
            });
        }
        let turn = |i: usize| {
            let (a, b, c) = (
                volume.corners[i],
                volume.corners[(i + 1) % count],
                volume.corners[(i + 2) % count],
            );
            (b - a).perp_dot(c - b)
        };
        let sign = (0..count)
            .map(turn)
            .find(|t| *t != 0.0)
            .unwrap_or(0.0)
            .signum();
        if let Some(corner) = (0..count).find(|&i| turn(i) * sign < 0.0) {
            return Err(AreaVolumeError::NotConvex {
                index,
                corner: (corner + 1) % count,
            });
        }
    }
    Ok(())
}

fn contains(corners: &[Vec2], point: Vec2) -> bool {
    let count = corners.len();
    let mut sign = 0.0f32;
    for i in 0..count {
        let (a, b) = (corners[i], corners[(i + 1) % count]);
        let side = (b - a).perp_dot(point - a);
        if side != 0.0 {
            if sign != 0.0 && side.signum() != sign {
                return false;
            }
            sign = side.signum();
        }
    }
    true
}

/// Applies the volumes, in order, to the walkable spans of `compact`.
pub fn mark_volumes(compact: &mut CompactHeightfield, volumes: &[AreaVolume]) {
    if volumes.is_empty() {
        return;
    }
    let (cell_size, cell_height, origin) = (compact.cell_size, compact.cell_height, compact.origin);
    for volume in volumes {
        let (mut low, mut high) = (volume.corners[0], volume.corners[0]);
        for corner in &volume.corners {
            low = low.min(*corner);
            high = high.max(*corner);
        }
        let to_cell = |value: f32, start: f32, limit: u32| {
            ((value - start) / cell_size)
                .floor()
                .clamp(0.0, limit as f32 - 1.0) as u32
        };
        let (x0, x1) = (
            to_cell(low.x, origin.x, compact.width),
            to_cell(high.x, origin.x, compact.width),
        );
        let (z0, z1) = (
            to_cell(low.y, origin.z, compact.depth),
            to_cell(high.y, origin.z, compact.depth),
        );
        if high.x < origin.x || high.y < origin.z {
            continue;
        }
        for z in z0..=z1 {
            for x in x0..=x1 {
                let centre = Vec2::new(
                    origin.x + (x as f32 + 0.5) * cell_size,
                    origin.z + (z as f32 + 0.5) * cell_size,
                );
                if !contains(&volume.corners, centre) {
                    continue;
                }
                let column = (x + z * compact.width) as usize;
                for span in compact.column_spans(column) {
                    let floor_y = origin.y + f32::from(compact.floor[span]) * cell_height;
                    if compact.areas[span] != 0
                        && floor_y >= volume.min_y
                        && floor_y <= volume.max_y
                    {
                        compact.areas[span] = volume.area.0;
                    }
                }
            }
        }
    }
}
