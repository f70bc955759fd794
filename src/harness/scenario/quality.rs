//! The per-frame quality of any crowd run: overlapping pairs and their depths, agents off
//! the mesh, as a histogram of depths so percentiles cost no memory per frame.
//!
//! Stage: harness. Input: a crowd after a step; output: [`FrameQuality`].

use glam::Vec3;

use crate::crowd::internals::NeighbourGrid;
use crate::crowd::{AgentStatus, Crowd};

/// Quality of one frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FrameQuality {
    /// Agent pairs closer than the sum of their radii (by more than 1 mm).
    pub overlap_pairs: u32,
    /// Of those, the pairs with a walker passing through in them (avoidance on, and held
    /// without progress along its corridor for
    /// [`pass_through_after_s`](crate::crowd::AvoidanceConfig::pass_through_after_s) or
    /// longer, as the next step will treat it): the overlaps the escalation pays for,
    /// apart from the ones avoidance and separation leave.
    pub overlap_pairs_passing: u32,
    /// The deepest overlap, metres.
    pub max_overlap_m: f32,
    /// Agents whose foot is not over their polygon (more than 1 mm outside), or whose
    /// polygon is gone.
    pub off_mesh_agents: u32,
}

/// Overlaps are counted beyond this depth: feet resting against each other after a
/// resolved contact differ from touching by rounding only.
const OVERLAP_SLACK_M: f32 = 1e-3;

/// Depths of overlapping pairs counted over a run, in millimetre bins: exact percentiles
/// to the millimetre at a fixed size, however many pairs a dense crowd gives (the native
/// reference run keeps the same bins).
#[derive(Clone, Debug, PartialEq)]
pub struct DepthHistogram {
    bins: Vec<u64>,
    count: u64,
}

impl Default for DepthHistogram {
    fn default() -> Self {
        DepthHistogram {
            bins: vec![0; DEPTH_BINS],
            count: 0,
        }
    }
}

/// Millimetre bins kept; deeper overlaps fall in the last one.
const DEPTH_BINS: usize = 4001;

impl DepthHistogram {
    /// Counts one overlapping pair `depth_m` deep.
    pub fn add(&mut self, depth_m: f32) {
        let bin = ((depth_m.max(0.0) * 1000.0) as usize).min(DEPTH_BINS - 1);
        self.bins[bin] += 1;
        self.count += 1;
    }

    /// Pairs counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The depth below which `share` (0 to 1) of the counted pairs lie, metres, to the
    /// millimetre above (0 when nothing was counted).
    pub fn percentile_m(&self, share: f64) -> f32 {
        if self.count == 0 {
            return 0.0;
        }
        let wanted = share * self.count as f64;
        let mut seen = 0u64;
        for (bin, &pairs) in self.bins.iter().enumerate() {
            seen += pairs;
            if seen as f64 >= wanted {
                return (bin + 1) as f32 * 1e-3;
            }
        }
        DEPTH_BINS as f32 * 1e-3
    }
}

/// Measures one frame of `crowd`, adding each overlapping pair's depth to `depths`;
/// `grid` is scratch, rebuilt here.
pub fn measure_quality(
    crowd: &Crowd,
    grid: &mut NeighbourGrid,
    depths: &mut DepthHistogram,
) -> FrameQuality {
    let lanes = crowd.lanes();
    let widest = lanes.radius.iter().copied().fold(0.0f32, f32::max);
    let mut quality = FrameQuality::default();
    if lanes.is_empty() {
        return quality;
    }
    // Bodies where they are in the world: an agent on a platform at its foot placed by
    // the platform's pose.
    let platforms = crowd.platform_frames();
    let placed: [Vec<f32>; 3] = if platforms.is_empty() {
        Default::default()
    } else {
        let world: Vec<Vec3> = (0..lanes.len())
            .map(|slot| platforms.place(lanes.support[slot], lanes.position(slot)))
            .collect();
        [
            world.iter().map(|point| point.x).collect(),
            world.iter().map(|point| point.y).collect(),
            world.iter().map(|point| point.z).collect(),
        ]
    };
    let positions = if platforms.is_empty() {
        [
            &lanes.position_x[..],
            &lanes.position_y[..],
            &lanes.position_z[..],
        ]
    } else {
        [&placed[0][..], &placed[1][..], &placed[2][..]]
    };
    grid.rebuild(
        positions,
        2.0 * widest.max(1e-3),
        crowd.config().avoidance.vertical_range_m,
        0,
    );
    let avoidance = crowd.config().avoidance;
    let passing = |slot: usize| {
        avoidance.enabled
            && avoidance.is_passing_through(lanes.status[slot], lanes.unprogressed_s[slot])
    };
    grid.for_each_pair_within(2.0 * widest, |a, b, distance| {
        let overlap = lanes.radius[a as usize] + lanes.radius[b as usize] - distance;
        if overlap > OVERLAP_SLACK_M {
            quality.overlap_pairs += 1;
            quality.overlap_pairs_passing += u32::from(passing(a as usize) || passing(b as usize));
            depths.add(overlap);
            quality.max_overlap_m = quality.max_overlap_m.max(overlap);
        }
    });
    let snapshot = crowd.snapshot();
    for slot in 0..lanes.len() {
        if lanes.status[slot] == AgentStatus::CrossingLink {
            continue; // between the link's ends, off the mesh by design
        }
        let polygon = lanes.polygon[slot];
        let position = lanes.position(slot);
        let on = snapshot.tile(polygon).is_some_and(|tile| {
            let (closest, _) = tile.closest_point(polygon.polygon(), position);
            glam::Vec2::new(closest.x - position.x, closest.z - position.z).length() <= 1e-3
        });
        quality.off_mesh_agents += u32::from(!on);
    }
    quality
}
