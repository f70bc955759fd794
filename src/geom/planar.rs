//! Exact planar regions: intersections of half-planes and disk constraints, in the
//! horizontal (x, z) plane, with open or closed boundaries.
//!
//! Stage: base geometry for target projection (spec 000). A region is what is left of an
//! allowed stand area after clipping it by walkable polygons, tolerance circles, distance
//! annuli, facing wedges and visibility: every boundary is kept as what it is (a line or an
//! arc, strict or not), never replaced by a bounding box, so a region's extent and emptiness
//! are answered exactly (up to `f32` rounding).
//!
//! Inputs: half-planes `normal · p <= offset` (or `<` when strict) and disks (inside or
//! outside a circle). Outputs: membership, the z-intervals of a vertical slice at a given x,
//! the x-extent over which the region is non-empty, and convex polygon clipping.
//!
//! Invariants: a region is the intersection of its bounds, so slicing it at one x gives at
//! most one interval per excluded disk plus one; a bound never changes once added.

use glam::Vec2;

/// Boundary tolerance, metres: two bounds that meet within this are treated as touching.
const TOUCH_M: f32 = 1e-6;

/// The half-plane `normal · p <= offset` (`<` when `strict`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HalfPlane {
    /// Outward normal (need not be unit length).
    pub normal: Vec2,
    /// Offset along the normal.
    pub offset: f32,
    /// Whether the boundary line itself is excluded.
    pub strict: bool,
}

impl HalfPlane {
    /// The closed half-plane to the left of the directed line `from -> to` (counter-clockwise
    /// side in (x, z) maths orientation).
    pub fn left_of(from: Vec2, to: Vec2) -> HalfPlane {
        let direction = to - from;
        // Left of the direction is where perp_dot(direction, p - from) >= 0, i.e.
        // -perp(direction) · p <= -perp(direction) · from.
        let normal = -direction.perp();
        HalfPlane {
            normal,
            offset: normal.dot(from),
            strict: false,
        }
    }

    /// The points this half-plane leaves out (the boundary switches sides).
    pub fn complement(self) -> HalfPlane {
        HalfPlane {
            normal: -self.normal,
            offset: -self.offset,
            strict: !self.strict,
        }
    }

    /// How far inside `point` is, in units of |normal| (negative outside).
    pub fn slack(&self, point: Vec2) -> f32 {
        self.offset - self.normal.dot(point)
    }

    /// Whether `point` satisfies the half-plane.
    pub fn contains(&self, point: Vec2) -> bool {
        let slack = self.slack(point);
        if self.strict {
            slack > 0.0
        } else {
            slack >= 0.0
        }
    }
}

/// A circle constraint: inside (`|p - centre| <= radius`) or outside (`>=`), strict or not.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskBound {
    /// Centre, metres.
    pub centre: Vec2,
    /// Radius, metres.
    pub radius: f32,
    /// Inside the circle (true) or outside it.
    pub inside: bool,
    /// Whether the circle itself is excluded.
    pub strict: bool,
}

impl DiskBound {
    /// Whether `point` satisfies the bound.
    pub fn contains(&self, point: Vec2) -> bool {
        let distance = point.distance(self.centre);
        match (self.inside, self.strict) {
            (true, false) => distance <= self.radius,
            (true, true) => distance < self.radius,
            (false, false) => distance >= self.radius,
            (false, true) => distance > self.radius,
        }
    }
}

/// One bound of a region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Bound {
    /// A straight boundary.
    Line(HalfPlane),
    /// A circular boundary (an arc of the region's outline).
    Circle(DiskBound),
}

impl Bound {
    /// Whether `point` satisfies the bound.
    pub fn contains(&self, point: Vec2) -> bool {
        match self {
            Bound::Line(half_plane) => half_plane.contains(point),
            Bound::Circle(disk) => disk.contains(point),
        }
    }
}

/// An interval of z values on a vertical slice, each end open or closed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SliceInterval {
    /// Lower end.
    pub low: f32,
    /// Whether `low` itself is excluded.
    pub low_open: bool,
    /// Upper end.
    pub high: f32,
    /// Whether `high` itself is excluded.
    pub high_open: bool,
}

impl SliceInterval {
    fn everything() -> SliceInterval {
        SliceInterval {
            low: f32::NEG_INFINITY,
            low_open: true,
            high: f32::INFINITY,
            high_open: true,
        }
    }

    /// Whether the interval holds at least one point.
    pub fn is_empty(&self) -> bool {
        self.low > self.high || (self.low == self.high && (self.low_open || self.high_open))
    }

    /// The middle of the interval.
    pub fn midpoint(&self) -> f32 {
        0.5 * (self.low + self.high)
    }

    fn raise_low(&mut self, value: f32, open: bool) {
        if value > self.low {
            self.low = value;
            self.low_open = open;
        } else if value == self.low {
            self.low_open |= open;
        }
    }

    fn lower_high(&mut self, value: f32, open: bool) {
        if value < self.high {
            self.high = value;
            self.high_open = open;
        } else if value == self.high {
            self.high_open |= open;
        }
    }
}

/// An intersection of bounds in the horizontal plane.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlanarRegion {
    /// The bounds; the region is where all of them hold.
    pub bounds: Vec<Bound>,
}

impl PlanarRegion {
    /// The region bounded by a convex polygon's edges (corners in either winding).
    pub fn from_convex_polygon(corners: &[Vec2]) -> PlanarRegion {
        let mut region = PlanarRegion::default();
        for half_plane in convex_polygon_half_planes(corners) {
            region.bounds.push(Bound::Line(half_plane));
        }
        region
    }

    /// Whether `point` lies in the region.
    pub fn contains(&self, point: Vec2) -> bool {
        self.bounds.iter().all(|bound| bound.contains(point))
    }

    /// The z-intervals of the region on the vertical line at `x`, in increasing z.
    pub fn slice(&self, x: f32) -> Vec<SliceInterval> {
        let mut interval = SliceInterval::everything();
        let mut holes: Vec<(f32, f32, bool)> = Vec::new();
        for bound in &self.bounds {
            match *bound {
                Bound::Line(half_plane) => {
                    let (a, b) = (half_plane.normal.x, half_plane.normal.y);
                    let rest = half_plane.offset - a * x;
                    if b.abs() <= f32::EPSILON * (a.abs() + 1.0) {
                        // A vertical boundary: the whole slice is in or out.
                        let inside = if half_plane.strict {
                            rest > 0.0
                        } else {
                            rest >= 0.0
                        };
                        if !inside {
                            return Vec::new();
                        }
                    } else if b > 0.0 {
                        interval.lower_high(rest / b, half_plane.strict);
                    } else {
                        interval.raise_low(rest / b, half_plane.strict);
                    }
                }
                Bound::Circle(disk) => {
                    let dx = x - disk.centre.x;
                    let squared = disk.radius * disk.radius - dx * dx;
                    if disk.inside {
                        if squared < 0.0 || (squared == 0.0 && disk.strict) {
                            return Vec::new();
                        }
                        let half = squared.sqrt();
                        interval.raise_low(disk.centre.y - half, disk.strict);
                        interval.lower_high(disk.centre.y + half, disk.strict);
                    } else if squared > 0.0 || (squared == 0.0 && !disk.strict) {
                        let half = squared.max(0.0).sqrt();
                        // Excluded: (centre - half, centre + half), ends excluded if strict.
                        holes.push((disk.centre.y - half, disk.centre.y + half, disk.strict));
                    }
                }
            }
        }
        if interval.is_empty() {
            return Vec::new();
        }
        let mut pieces = vec![interval];
        holes.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (hole_low, hole_high, ends_excluded) in holes {
            let mut next = Vec::with_capacity(pieces.len() + 1);
            for piece in pieces {
                // The hole's ends belong to the region unless the circle is strict.
                let mut below = piece;
                below.lower_high(hole_low, ends_excluded);
                let mut above = piece;
                above.raise_low(hole_high, ends_excluded);
                next.extend([below, above].into_iter().filter(|p| !p.is_empty()));
            }
            pieces = next;
        }
        pieces
    }

    /// Whether the slice at `x` holds any point.
    pub fn slice_is_empty(&self, x: f32) -> bool {
        self.slice(x).is_empty()
    }

    /// The x values where a boundary begins, ends or meets another: between two
    /// consecutive ones, whether a slice is empty cannot change.
    fn critical_xs(&self) -> Vec<f32> {
        let mut xs = Vec::new();
        let lines: Vec<HalfPlane> = self
            .bounds
            .iter()
            .filter_map(|b| match b {
                Bound::Line(h) => Some(*h),
                Bound::Circle(_) => None,
            })
            .collect();
        let circles: Vec<DiskBound> = self
            .bounds
            .iter()
            .filter_map(|b| match b {
                Bound::Circle(d) => Some(*d),
                Bound::Line(_) => None,
            })
            .collect();
        for (index, first) in lines.iter().enumerate() {
            if first.normal.y.abs() <= f32::EPSILON * (first.normal.x.abs() + 1.0) {
                xs.push(first.offset / first.normal.x);
            }
            for second in &lines[index + 1..] {
                let determinant = first.normal.perp_dot(second.normal);
                if determinant.abs() > 1e-12 {
                    xs.push(
                        (first.offset * second.normal.y - second.offset * first.normal.y)
                            / determinant,
                    );
                }
            }
            for circle in &circles {
                xs.extend(line_circle_xs(first, circle));
            }
        }
        for (index, first) in circles.iter().enumerate() {
            xs.push(first.centre.x - first.radius);
            xs.push(first.centre.x + first.radius);
            for second in &circles[index + 1..] {
                xs.extend(circle_circle_xs(first, second));
            }
        }
        xs.retain(|x| x.is_finite());
        xs.sort_by(f32::total_cmp);
        xs.dedup_by(|a, b| (*a - *b).abs() <= TOUCH_M);
        xs
    }

    /// The smallest and largest x at which the region holds points, or `None` when it is
    /// empty. Exact up to rounding: the ends are where two boundaries meet (for a region
    /// whose end is an open meeting point, the returned end is that point itself).
    pub fn x_extent(&self) -> Option<(f32, f32)> {
        let xs = self.critical_xs();
        let mut extent: Option<(f32, f32)> = None;
        let mut grow = |low: f32, high: f32| {
            extent = Some(match extent {
                None => (low, high),
                Some((a, b)) => (a.min(low), b.max(high)),
            });
        };
        for (index, &x) in xs.iter().enumerate() {
            if !self.slice_is_empty(x) {
                grow(x, x);
            }
            if let Some(&next) = xs.get(index + 1) {
                if !self.slice_is_empty(0.5 * (x + next)) {
                    grow(x, next);
                }
            }
        }
        extent
    }

    /// Whether the region holds no point.
    pub fn is_empty(&self) -> bool {
        self.x_extent().is_none()
    }

    /// A stable 64-bit hash of the bounds (FNV-1a over their bits), naming the region in
    /// results so a consumer can tell whether two results speak of the same region.
    pub fn hash(&self) -> u64 {
        let mut hash = 0xcbf2_9ce4_8422_2325u64;
        let mut mix = |bits: u32| {
            for byte in bits.to_le_bytes() {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
            }
        };
        for bound in &self.bounds {
            match bound {
                Bound::Line(h) => {
                    mix(1);
                    mix(h.normal.x.to_bits());
                    mix(h.normal.y.to_bits());
                    mix(h.offset.to_bits());
                    mix(u32::from(h.strict));
                }
                Bound::Circle(d) => {
                    mix(2);
                    mix(d.centre.x.to_bits());
                    mix(d.centre.y.to_bits());
                    mix(d.radius.to_bits());
                    mix(u32::from(d.inside) | u32::from(d.strict) << 1);
                }
            }
        }
        hash
    }
}

fn line_circle_xs(line: &HalfPlane, circle: &DiskBound) -> Vec<f32> {
    // Points p = foot + t * direction on the line n·p = o, with |p - c| = r.
    let length_squared = line.normal.length_squared();
    if length_squared == 0.0 {
        return Vec::new();
    }
    let foot = line.normal * (line.offset / length_squared);
    let direction = line.normal.perp() / length_squared.sqrt();
    let to_foot = foot - circle.centre;
    let b = to_foot.dot(direction);
    let discriminant = b * b - (to_foot.length_squared() - circle.radius * circle.radius);
    if discriminant < 0.0 {
        return Vec::new();
    }
    let root = discriminant.sqrt();
    vec![
        (foot + direction * (-b - root)).x,
        (foot + direction * (-b + root)).x,
    ]
}

fn circle_circle_xs(first: &DiskBound, second: &DiskBound) -> Vec<f32> {
    let offset = second.centre - first.centre;
    let distance = offset.length();
    if distance == 0.0
        || distance > first.radius + second.radius
        || distance < (first.radius - second.radius).abs()
    {
        return Vec::new();
    }
    let along = (first.radius * first.radius - second.radius * second.radius + distance * distance)
        / (2.0 * distance);
    let across = (first.radius * first.radius - along * along)
        .max(0.0)
        .sqrt();
    let unit = offset / distance;
    let base = first.centre + unit * along;
    vec![
        (base + unit.perp() * across).x,
        (base - unit.perp() * across).x,
    ]
}

/// The closed half-planes whose intersection is the convex polygon (either winding).
pub fn convex_polygon_half_planes(corners: &[Vec2]) -> Vec<HalfPlane> {
    let count = corners.len();
    let counter_clockwise = signed_area(corners) >= 0.0;
    (0..count)
        .map(|i| {
            let (a, b) = (corners[i], corners[(i + 1) % count]);
            if counter_clockwise {
                HalfPlane::left_of(a, b)
            } else {
                HalfPlane::left_of(b, a)
            }
        })
        .collect()
}

/// Twice-signed area in (x, z) maths orientation halved: positive when counter-clockwise.
pub fn signed_area(corners: &[Vec2]) -> f32 {
    let count = corners.len();
    0.5 * (0..count)
        .map(|i| corners[i].perp_dot(corners[(i + 1) % count]))
        .sum::<f32>()
}

/// Whether the polygon is convex (no turn in the wrong direction; collinear corners and
/// either winding allowed) and has a non-zero area.
pub fn is_convex(corners: &[Vec2]) -> bool {
    let count = corners.len();
    if count < 3 || signed_area(corners).abs() <= 1e-12 {
        return false;
    }
    let sign = signed_area(corners).signum();
    (0..count).all(|i| {
        let (a, b, c) = (
            corners[i],
            corners[(i + 1) % count],
            corners[(i + 2) % count],
        );
        (b - a).perp_dot(c - b) * sign >= -1e-9
    })
}

/// Clips a convex polygon by a closed half-plane (Sutherland-Hodgman: keeps the corners
/// inside and inserts the crossing points on edges that cross the boundary).
pub fn clip_convex(corners: &[Vec2], half_plane: &HalfPlane) -> Vec<Vec2> {
    let count = corners.len();
    let mut out = Vec::with_capacity(count + 1);
    for i in 0..count {
        let (a, b) = (corners[i], corners[(i + 1) % count]);
        let (slack_a, slack_b) = (half_plane.slack(a), half_plane.slack(b));
        if slack_a >= 0.0 {
            out.push(a);
        }
        if (slack_a >= 0.0) != (slack_b >= 0.0) {
            let t = slack_a / (slack_a - slack_b);
            out.push(a + (b - a) * t);
        }
    }
    out.dedup_by(|a, b| a.distance(*b) <= TOUCH_M);
    if out.len() > 1 && out[0].distance(out[out.len() - 1]) <= TOUCH_M {
        out.pop();
    }
    out
}

/// The intersection of two convex polygons (empty when they do not overlap in area).
pub fn intersect_convex(subject: &[Vec2], clip: &[Vec2]) -> Vec<Vec2> {
    let mut result = subject.to_vec();
    for half_plane in convex_polygon_half_planes(clip) {
        result = clip_convex(&result, &half_plane);
        if result.len() < 3 {
            return Vec::new();
        }
    }
    if signed_area(&result).abs() <= 1e-12 {
        return Vec::new();
    }
    result
}

/// The convex hull of points (counter-clockwise, no collinear corners).
pub fn convex_hull(points: &[Vec2]) -> Vec<Vec2> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    sorted.dedup();
    if sorted.len() < 3 {
        return sorted;
    }
    let mut hull: Vec<Vec2> = Vec::with_capacity(sorted.len() * 2);
    for pass in 0..2 {
        let start = hull.len();
        let iterate: Box<dyn Iterator<Item = &Vec2>> = if pass == 0 {
            Box::new(sorted.iter())
        } else {
            Box::new(sorted.iter().rev())
        };
        for &point in iterate {
            while hull.len() >= start + 2 {
                let (a, b) = (hull[hull.len() - 2], hull[hull.len() - 1]);
                if (b - a).perp_dot(point - b) <= 0.0 {
                    hull.pop();
                } else {
                    break;
                }
            }
            hull.push(point);
        }
        hull.pop();
    }
    hull
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rectangle(x0: f32, x1: f32, z0: f32, z1: f32) -> Vec<Vec2> {
        vec![
            Vec2::new(x0, z0),
            Vec2::new(x1, z0),
            Vec2::new(x1, z1),
            Vec2::new(x0, z1),
        ]
    }

    #[test]
    fn clipping_two_rectangles_takes_the_overlap() {
        let overlap = intersect_convex(
            &rectangle(0.65, 1.0, -0.6, 0.6),
            &rectangle(0.6, 0.9, -0.7, 0.7),
        );
        let region = PlanarRegion::from_convex_polygon(&overlap);
        let (low, high) = region.x_extent().unwrap();
        assert!((low - 0.65).abs() < 1e-6 && (high - 0.9).abs() < 1e-6);
        let slice = region.slice(0.7);
        assert_eq!(slice.len(), 1);
        assert!((slice[0].low + 0.6).abs() < 1e-6 && (slice[0].high - 0.6).abs() < 1e-6);
    }

    #[test]
    fn an_excluded_disk_splits_a_slice_in_two() {
        let mut region = PlanarRegion::from_convex_polygon(&rectangle(-2.0, 2.0, -2.0, 2.0));
        region.bounds.push(Bound::Circle(DiskBound {
            centre: Vec2::ZERO,
            radius: 1.0,
            inside: false,
            strict: false,
        }));
        let slice = region.slice(0.0);
        assert_eq!(slice.len(), 2);
        assert_eq!((slice[0].low, slice[0].high), (-2.0, -1.0));
        assert_eq!((slice[1].low, slice[1].high), (1.0, 2.0));
        assert!(!region.contains(Vec2::new(0.5, 0.0)));
        assert!(region.contains(Vec2::new(0.0, 1.0)));
    }

    #[test]
    fn an_open_meeting_point_ends_the_extent() {
        // z > x and z <= 1 - x meet at x = 0.5, where the slice is empty (open below).
        let mut region = PlanarRegion::from_convex_polygon(&rectangle(0.0, 2.0, -2.0, 2.0));
        region.bounds.push(Bound::Line(HalfPlane {
            normal: Vec2::new(1.0, -1.0),
            offset: 0.0,
            strict: true,
        }));
        region.bounds.push(Bound::Line(HalfPlane {
            normal: Vec2::new(1.0, 1.0),
            offset: 1.0,
            strict: false,
        }));
        let (low, high) = region.x_extent().unwrap();
        assert!(
            low.abs() < 1e-6 && (high - 0.5).abs() < 1e-6,
            "{low} {high}"
        );
        assert!(region.slice_is_empty(0.5));
        assert!(!region.slice_is_empty(0.499));
    }

    #[test]
    fn convexity_and_hulls() {
        assert!(is_convex(&rectangle(0.0, 1.0, 0.0, 1.0)));
        let dart = [
            Vec2::new(0.0, 0.0),
            Vec2::new(2.0, 1.0),
            Vec2::new(0.0, 2.0),
            Vec2::new(0.5, 1.0),
        ];
        assert!(!is_convex(&dart));
        let hull = convex_hull(&dart);
        assert_eq!(hull.len(), 3);
        assert!(signed_area(&hull) > 0.0);
    }
}
