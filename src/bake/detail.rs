//! Stage [`Stage::Detail`](super::Stage::Detail): the detail mesh, a finer triangulation of each polygon that follows the voxel
//! floor within the height error.
//!
//! Per polygon:
//! 1. each edge is sampled every `sample distance` metres; samples whose height strays more
//!    than the error from the edge's straight line are kept (farthest first). An edge is
//!    always sampled from its lexicographically smaller end, so the two polygons sharing it
//!    produce the same points and the surface has no cracks;
//! 2. the boundary is triangulated (shortest diagonal first) and made Delaunay by flips;
//! 3. interior samples on a grid of the same spacing are inserted one at a time, the worst
//!    first, while any strays more than the error from the surface; after each, the edges
//!    round the new point are flipped until the triangulation is Delaunay again.
//!
//! Heights come from the compact heightfield: in each sampled column, the open span whose
//! floor is nearest the polygon's current surface there.
//!
//! Invariants: detail triangles wind counter-clockwise seen from above; a polygon's detail
//! mesh has at most [`DETAIL_VERTICES_MAX`] vertices (indices are `u8`).

use glam::{Vec2, Vec3};

use super::compact::CompactHeightfield;

/// Most vertices (polygon + extra) in one polygon's detail mesh.
pub const DETAIL_VERTICES_MAX: usize = 255;
/// Most samples along one polygon edge.
const EDGE_SAMPLES_MAX: usize = 64;

/// Detail stage parameters.
#[derive(Clone, Copy, Debug)]
pub struct DetailParams {
    /// Sample spacing (0: no samples). Units: m.
    pub sample_distance_m: f32,
    /// Largest height error left. Units: m.
    pub max_error_m: f32,
}

/// One polygon's detail mesh: vertices (the polygon's own first) and triangles.
#[derive(Clone, Debug, Default)]
pub struct PolygonDetail {
    /// All vertices, world metres; the first `polygon vertex count` are the polygon's.
    pub vertices: Vec<Vec3>,
    /// Triangles: three vertex indices and a flags byte (bit `k`: edge `k` lies on the
    /// polygon boundary).
    pub triangles: Vec<[u8; 4]>,
}

/// Height lookup in the compact heightfield.
struct HeightSampler<'a> {
    compact: &'a CompactHeightfield,
}

impl HeightSampler<'_> {
    /// Floor height (metres) nearest `reference_y` in the column under `(x, z)`, or `None`
    /// when the column has no open span.
    fn height(&self, x: f32, z: f32, reference_y: f32) -> Option<f32> {
        let compact = self.compact;
        let column_x = ((x - compact.origin.x) / compact.cell_size).floor();
        let column_z = ((z - compact.origin.z) / compact.cell_size).floor();
        if column_x < 0.0
            || column_z < 0.0
            || column_x >= compact.width as f32
            || column_z >= compact.depth as f32
        {
            return None;
        }
        let column = column_x as usize + column_z as usize * compact.width as usize;
        compact
            .column_spans(column)
            .map(|span| compact.origin.y + f32::from(compact.floor[span]) * compact.cell_height)
            .min_by(|a, b| (a - reference_y).abs().total_cmp(&(b - reference_y).abs()))
    }

    /// Like [`HeightSampler::height`], but looks at the 3x3 columns around `(x, z)` when the
    /// column itself is empty (samples on a polygon edge can fall just outside the floor).
    fn height_near(&self, x: f32, z: f32, reference_y: f32) -> f32 {
        if let Some(height) = self.height(x, z, reference_y) {
            return height;
        }
        let step = self.compact.cell_size;
        let mut best: Option<f32> = None;
        for (dx, dz) in [
            (-1.0, 0.0),
            (1.0, 0.0),
            (0.0, -1.0),
            (0.0, 1.0),
            (-1.0, -1.0),
            (1.0, -1.0),
            (-1.0, 1.0),
            (1.0, 1.0),
        ] {
            if let Some(height) = self.height(x + dx * step, z + dz * step, reference_y) {
                if best.is_none_or(|b| (height - reference_y).abs() < (b - reference_y).abs()) {
                    best = Some(height);
                }
            }
        }
        best.unwrap_or(reference_y)
    }
}

fn horizontal(point: Vec3) -> Vec2 {
    Vec2::new(point.x, point.z)
}

/// Twice the signed area of `a b c` in (x, z): positive when counter-clockwise from above.
fn turn(a: Vec3, b: Vec3, c: Vec3) -> f32 {
    -((b.x - a.x) * (c.z - a.z) - (c.x - a.x) * (b.z - a.z))
}

/// Builds the detail mesh of one polygon given its vertices in world metres.
pub fn build_polygon_detail(
    polygon: &[Vec3],
    compact: &CompactHeightfield,
    params: &DetailParams,
) -> PolygonDetail {
    let sampler = HeightSampler { compact };
    let vertex_count = polygon.len();
    let mut vertices: Vec<Vec3> = polygon.to_vec();
    // Boundary as indices into `vertices`, in polygon order.
    let mut boundary: Vec<usize> = Vec::with_capacity(vertex_count * 2);
    for edge in 0..vertex_count {
        boundary.push(edge);
        if params.sample_distance_m <= 0.0 {
            continue;
        }
        let (start, end) = (polygon[edge], polygon[(edge + 1) % vertex_count]);
        for point in edge_samples(start, end, &sampler, params) {
            if vertices.len() >= DETAIL_VERTICES_MAX {
                break;
            }
            boundary.push(vertices.len());
            vertices.push(point);
        }
    }

    let mut triangles = triangulate_boundary(&vertices, &boundary);
    let is_boundary_edge = |a: usize, b: usize, boundary: &[usize]| {
        let count = boundary.len();
        (0..count).any(|i| {
            (boundary[i] == a && boundary[(i + 1) % count] == b)
                || (boundary[i] == b && boundary[(i + 1) % count] == a)
        })
    };
    legalize_all(&vertices, &mut triangles, &|a, b| {
        is_boundary_edge(a, b, &boundary)
    });

    if params.sample_distance_m > 0.0 {
        add_interior_samples(
            polygon,
            &sampler,
            params,
            &mut vertices,
            &mut triangles,
            &|a, b| is_boundary_edge(a, b, &boundary),
        );
    }

    let triangles = triangles
        .iter()
        .map(|t| {
            let mut flags = 0u8;
            for k in 0..3 {
                if is_boundary_edge(t[k], t[(k + 1) % 3], &boundary) {
                    flags |= 1 << k;
                }
            }
            [t[0] as u8, t[1] as u8, t[2] as u8, flags]
        })
        .collect();
    PolygonDetail {
        vertices,
        triangles,
    }
}

/// The samples of one edge that must stay to keep it within the error, from `start` towards
/// `end` (excluding both).
fn edge_samples(
    start: Vec3,
    end: Vec3,
    sampler: &HeightSampler,
    params: &DetailParams,
) -> Vec<Vec3> {
    // Canonical direction: sample from the smaller end so both polygons agree.
    let swapped = (end.x, end.z) < (start.x, start.z);
    let (from, to) = if swapped { (end, start) } else { (start, end) };
    let length = horizontal(to - from).length();
    let segments =
        ((length / params.sample_distance_m).floor() as usize + 1).min(EDGE_SAMPLES_MAX - 1);
    if segments < 2 {
        return Vec::new();
    }
    let samples: Vec<Vec3> = (0..=segments)
        .map(|i| {
            let t = i as f32 / segments as f32;
            let point = from + (to - from) * t;
            if i == 0 || i == segments {
                point
            } else {
                Vec3::new(
                    point.x,
                    sampler.height_near(point.x, point.z, point.y),
                    point.z,
                )
            }
        })
        .collect();
    // Keep the farthest-off sample of each span until all lie within the error.
    let mut kept = vec![0, segments];
    let mut index = 0;
    while index + 1 < kept.len() {
        let (a, b) = (kept[index], kept[index + 1]);
        let mut worst: Option<(usize, f32)> = None;
        for i in a + 1..b {
            let t = (i - a) as f32 / (b - a) as f32;
            let line_y = samples[a].y + (samples[b].y - samples[a].y) * t;
            let error = (samples[i].y - line_y).abs();
            if error > params.max_error_m && worst.is_none_or(|(_, w)| error > w) {
                worst = Some((i, error));
            }
        }
        match worst {
            Some((i, _)) => kept.insert(index + 1, i),
            None => index += 1,
        }
    }
    let mut points: Vec<Vec3> = kept[1..kept.len() - 1]
        .iter()
        .map(|&i| samples[i])
        .collect();
    if swapped {
        points.reverse();
    }
    points
}

/// Triangulates a convex boundary whose extra points lie on its edges: clip the strictly
/// convex vertex with the shortest diagonal until only collinear points remain.
fn triangulate_boundary(vertices: &[Vec3], boundary: &[usize]) -> Vec<[usize; 3]> {
    let mut remaining = boundary.to_vec();
    let mut triangles = Vec::new();
    while remaining.len() >= 3 {
        let count = remaining.len();
        let mut best: Option<(usize, f32)> = None;
        for i in 0..count {
            let (a, b, c) = (
                remaining[(i + count - 1) % count],
                remaining[i],
                remaining[(i + 1) % count],
            );
            if turn(vertices[a], vertices[b], vertices[c]) <= 1e-9 {
                continue;
            }
            let length = horizontal(vertices[c] - vertices[a]).length_squared();
            if best.is_none_or(|(_, l)| length < l) {
                best = Some((i, length));
            }
        }
        let Some((ear, _)) = best else { break };
        triangles.push([
            remaining[(ear + count - 1) % count],
            remaining[ear],
            remaining[(ear + 1) % count],
        ]);
        remaining.remove(ear);
    }
    triangles
}

/// Whether `point` lies inside the circumcircle of counter-clockwise `a b c`, by more than
/// the rounding of the test: four points on one circle (grid samples often are) are not
/// inside, whichever diagonal joins them.
///
/// The differences are taken in `f64`, where the difference of two `f32` is exact, so the
/// test answers the same for the same four points whatever their order; with the
/// differences rounded in `f32` a nearly square quad could call both of its diagonals
/// illegal and the flips never ended (a fuzzed level spent 11 s flipping one polygon's).
fn in_circumcircle(a: Vec3, b: Vec3, c: Vec3, point: Vec3) -> bool {
    let relative = |v: Vec3| {
        (
            f64::from(v.x) - f64::from(point.x),
            f64::from(v.z) - f64::from(point.z),
        )
    };
    let ((ax, az), (bx, bz), (cx, cz)) = (relative(a), relative(b), relative(c));
    let terms = [
        (ax * ax + az * az) * (bx * cz - cx * bz),
        -(bx * bx + bz * bz) * (ax * cz - cx * az),
        (cx * cx + cz * cz) * (ax * bz - bx * az),
    ];
    let determinant: f64 = terms.iter().sum();
    let scale: f64 = terms.iter().map(|term| term.abs()).sum();
    // Counter-clockwise seen from above is clockwise in the (x, z) plane's own orientation.
    determinant < -CIRCLE_TOLERANCE * scale
}

/// The in-circle test's margin, relative to the size of its terms: far above their
/// rounding (about 1e-16), far below any shape a flip improves.
const CIRCLE_TOLERANCE: f64 = 1e-9;

/// Flips every non-Delaunay interior edge until none is left (bounded); returns the flips.
fn legalize_all(
    vertices: &[Vec3],
    triangles: &mut [[usize; 3]],
    is_boundary: &dyn Fn(usize, usize) -> bool,
) -> usize {
    let flips_max = triangles.len() * triangles.len() + 8;
    let mut flips = 0;
    let mut changed = true;
    while changed && flips < flips_max {
        changed = false;
        for t in 0..triangles.len() {
            for k in 0..3 {
                let (a, b) = (triangles[t][k], triangles[t][(k + 1) % 3]);
                if is_boundary(a, b) {
                    continue;
                }
                if flip_if_illegal(vertices, triangles, t, k).is_some() {
                    changed = true;
                    flips += 1;
                }
            }
        }
    }
    flips
}

/// Restores the Delaunay property after vertex `new` went into a Delaunay triangulation
/// (Lawson's flips): only the edges facing `new` can have become illegal, and each flip
/// makes the two edges beyond it face `new` in turn. Bounded like [`legalize_all`].
fn legalize_around(
    vertices: &[Vec3],
    triangles: &mut [[usize; 3]],
    new: usize,
    is_boundary: &dyn Fn(usize, usize) -> bool,
) {
    // (triangle, edge): the edge from corner `edge` to the next, opposite `new`.
    let mut facing: Vec<(usize, usize)> = triangles
        .iter()
        .enumerate()
        .filter_map(|(index, t)| (0..3).find(|&k| t[k] == new).map(|k| (index, (k + 1) % 3)))
        .collect();
    let mut flips_left = 4 * triangles.len() + 8;
    while let Some((t, k)) = facing.pop() {
        let (a, b) = (triangles[t][k], triangles[t][(k + 1) % 3]);
        if triangles[t][(k + 2) % 3] != new || is_boundary(a, b) {
            continue;
        }
        let Some(other) = flip_if_illegal(vertices, triangles, t, k) else {
            continue;
        };
        // Now (a, d, new) and (d, b, new): their edges a-d and d-b face `new`.
        facing.push((t, 0));
        facing.push((other, 0));
        flips_left -= 1;
        if flips_left == 0 {
            break;
        }
    }
}

/// Flips edge `k` of triangle `t` if the opposite vertex of its neighbour lies in `t`'s
/// circumcircle and the quad is convex. Returns the neighbour it flipped with: `t` becomes
/// `(a, d, c)` and the neighbour `(d, b, c)`, where `a b` was the edge, `c` its opposite
/// corner in `t` and `d` in the neighbour.
fn flip_if_illegal(
    vertices: &[Vec3],
    triangles: &mut [[usize; 3]],
    t: usize,
    k: usize,
) -> Option<usize> {
    let (a, b, c) = (
        triangles[t][k],
        triangles[t][(k + 1) % 3],
        triangles[t][(k + 2) % 3],
    );
    let (other, other_k) = triangles.iter().enumerate().find_map(|(index, tri)| {
        (0..3)
            .find(|&j| tri[j] == b && tri[(j + 1) % 3] == a)
            .map(|j| (index, j))
    })?;
    let d = triangles[other][(other_k + 2) % 3];
    if !in_circumcircle(vertices[a], vertices[b], vertices[c], vertices[d]) {
        return None;
    }
    // The new triangles (a, d, c) and (d, b, c) must both be counter-clockwise.
    if turn(vertices[a], vertices[d], vertices[c]) <= 1e-9
        || turn(vertices[d], vertices[b], vertices[c]) <= 1e-9
    {
        return None;
    }
    triangles[t] = [a, d, c];
    triangles[other] = [d, b, c];
    Some(other)
}

/// Where a point falls in the triangulation: the triangle, its barycentric weights and the
/// interpolated height.
struct Location {
    triangle: usize,
    weights: [f32; 3],
    height: f32,
}

/// Locates `(x, z)` in the triangulated surface, if inside it.
fn locate(vertices: &[Vec3], triangles: &[[usize; 3]], point: Vec2) -> Option<Location> {
    for (index, t) in triangles.iter().enumerate() {
        let (a, b, c) = (vertices[t[0]], vertices[t[1]], vertices[t[2]]);
        let p = Vec3::new(point.x, 0.0, point.y);
        let area = turn(a, b, c);
        if area <= 0.0 {
            continue;
        }
        let weights = [
            turn(p, b, c) / area,
            turn(a, p, c) / area,
            turn(a, b, p) / area,
        ];
        const SLACK: f32 = -1e-4;
        if weights.iter().all(|&w| w >= SLACK) {
            let height = weights[0] * a.y + weights[1] * b.y + weights[2] * c.y;
            return Some(Location {
                triangle: index,
                weights,
                height,
            });
        }
    }
    None
}

/// Inserts vertex `new` at `location`: a split into three, or into two on each side when the
/// point lies on an edge (so no T-junction is left).
fn insert_vertex(triangles: &mut Vec<[usize; 3]>, location: &Location, new: usize) {
    const ON_EDGE: f32 = 1e-3;
    let [a, b, c] = triangles[location.triangle];
    let on_edge = (0..3).find(|&k| location.weights[k].abs() < ON_EDGE);
    let Some(opposite) = on_edge else {
        triangles[location.triangle] = [a, b, new];
        triangles.push([b, c, new]);
        triangles.push([c, a, new]);
        return;
    };
    // The edge opposite corner `opposite`, as (p, q), with r the corner itself.
    let corners = [a, b, c];
    let (r, p, q) = (
        corners[opposite],
        corners[(opposite + 1) % 3],
        corners[(opposite + 2) % 3],
    );
    triangles[location.triangle] = [p, new, r];
    triangles.push([new, q, r]);
    let neighbour = triangles.iter().enumerate().find_map(|(index, t)| {
        (0..3)
            .find(|&j| t[j] == q && t[(j + 1) % 3] == p)
            .map(|j| (index, t[(j + 2) % 3]))
    });
    if let Some((other, s)) = neighbour {
        triangles[other] = [q, new, s];
        triangles.push([new, p, s]);
    }
}

/// Inserts grid samples, the worst first, while any strays beyond the error.
fn add_interior_samples(
    polygon: &[Vec3],
    sampler: &HeightSampler,
    params: &DetailParams,
    vertices: &mut Vec<Vec3>,
    triangles: &mut Vec<[usize; 3]>,
    is_boundary: &dyn Fn(usize, usize) -> bool,
) {
    let spacing = params.sample_distance_m;
    let (mut low, mut high) = (horizontal(polygon[0]), horizontal(polygon[0]));
    for vertex in polygon {
        low = low.min(horizontal(*vertex));
        high = high.max(horizontal(*vertex));
    }
    // Samples stay half a cell inside the polygon so they never duplicate boundary points.
    let inset = sampler.compact.cell_size * 0.5;
    let inside = |point: Vec2| {
        let count = polygon.len();
        (0..count).all(|i| {
            let (a, b) = (horizontal(polygon[i]), horizontal(polygon[(i + 1) % count]));
            let edge = b - a;
            let length = edge.length();
            // Distance to the left of the edge (inside for counter-clockwise from above).
            length > 0.0 && -(edge.x * (point.y - a.y) - edge.y * (point.x - a.x)) / length >= inset
        })
    };
    let mut candidates: Vec<Vec2> = Vec::new();
    let (steps_x, steps_z) = (
        ((high.x - low.x) / spacing).ceil() as i32,
        ((high.y - low.y) / spacing).ceil() as i32,
    );
    for iz in 0..=steps_z {
        for ix in 0..=steps_x {
            let point = Vec2::new(low.x + ix as f32 * spacing, low.y + iz as f32 * spacing);
            if inside(point) {
                candidates.push(point);
            }
        }
    }
    let samples: Vec<Vec3> = candidates
        .iter()
        .filter_map(|&point| {
            let estimate = locate(vertices, triangles, point)?.height;
            Some(Vec3::new(
                point.x,
                sampler.height_near(point.x, point.y, estimate),
                point.y,
            ))
        })
        .collect();
    // Each sample's triangle and its height error there, kept between insertions: an
    // insertion changes a few triangles, and only the samples in those are measured again
    // (measuring every sample against every triangle after each insertion made a polygon
    // of a few hundred samples take most of a second).
    let measure = |vertices: &[Vec3], triangles: &[[usize; 3]], sample: Vec3| {
        locate(vertices, triangles, horizontal(sample))
            .map(|location| (location.triangle, (sample.y - location.height).abs()))
    };
    let mut measured: Vec<(Vec3, Option<(usize, f32)>)> = samples
        .iter()
        .map(|&sample| (sample, measure(vertices, triangles, sample)))
        .collect();
    let mut before: Vec<[usize; 3]> = Vec::with_capacity(triangles.len() * 2);
    let mut changed: Vec<bool> = Vec::new();
    while vertices.len() < DETAIL_VERTICES_MAX && !measured.is_empty() {
        let mut worst: Option<(usize, f32)> = None;
        for (index, (_, known)) in measured.iter().enumerate() {
            let Some((_, error)) = *known else {
                continue;
            };
            if error > params.max_error_m && worst.is_none_or(|(_, w)| error > w) {
                worst = Some((index, error));
            }
        }
        let Some((sample_index, _)) = worst else {
            break;
        };
        let (point, _) = measured.swap_remove(sample_index);
        let Some(location) = locate(vertices, triangles, horizontal(point)) else {
            continue;
        };
        let new_index = vertices.len();
        vertices.push(point);
        before.clear();
        before.extend_from_slice(triangles);
        insert_vertex(triangles, &location, new_index);
        legalize_around(vertices, triangles, new_index, is_boundary);
        changed.clear();
        changed.extend((0..triangles.len()).map(|t| before.get(t) != Some(&triangles[t])));
        for (sample, known) in &mut measured {
            if known.is_some_and(|(triangle, _)| changed[triangle]) {
                *known = measure(vertices, triangles, *sample);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `count` points on a circle of `radius_m` round `centre`, counter-clockwise seen from
    /// above, each rounded to `f32` (so four of them are on one circle only nearly).
    fn circle(centre: Vec3, radius_m: f32, count: usize) -> Vec<Vec3> {
        (0..count)
            .map(|i| {
                let angle = -std::f64::consts::TAU * i as f64 / count as f64;
                Vec3::new(
                    (f64::from(centre.x) + f64::from(radius_m) * angle.cos()) as f32,
                    centre.y,
                    (f64::from(centre.z) + f64::from(radius_m) * angle.sin()) as f32,
                )
            })
            .collect()
    }

    #[test]
    fn a_quad_on_one_circle_never_calls_both_diagonals_illegal() {
        // Far from the origin, large: where the in-circle test's terms are large and its
        // rounding with them.
        for (centre, radius_m) in [
            (Vec3::new(45.0, 1.8, 16.0), 15.0),
            (Vec3::new(-3_000.5, 0.0, 7_001.25), 30.0),
            (Vec3::new(0.3, 0.0, 0.7), 0.9),
        ] {
            let points = circle(centre, radius_m, 97);
            for i in 0..points.len() {
                let [a, b, c, d] = [0, 13, 41, 70].map(|k| points[(i + k) % points.len()]);
                assert!(turn(a, b, c) > 0.0 && turn(a, c, d) > 0.0);
                // Diagonal a-c: is d inside (a, b, c)? Diagonal b-d: is a inside (b, c, d)?
                let first = in_circumcircle(a, b, c, d);
                let second = in_circumcircle(b, c, d, a);
                assert!(
                    !(first && second),
                    "both diagonals of {a} {b} {c} {d} illegal"
                );
            }
        }
    }

    #[test]
    fn flips_round_each_inserted_point_leave_the_whole_triangulation_delaunay() {
        // A 30 m square far from the origin and 200 scattered points put in one at a time,
        // each followed by Lawson's flips round it alone: no edge anywhere is left to flip.
        let corner = Vec3::new(1_024.0, 3.0, -512.0);
        let mut vertices = vec![
            corner,
            corner + Vec3::new(0.0, 0.0, 30.0),
            corner + Vec3::new(30.0, 0.0, 30.0),
            corner + Vec3::new(30.0, 0.0, 0.0),
        ];
        assert!(turn(vertices[0], vertices[1], vertices[2]) > 0.0);
        let mut triangles = vec![[0, 1, 2], [0, 2, 3]];
        let on_boundary = |a: usize, b: usize| a < 4 && b < 4 && a.abs_diff(b) != 2;
        let mut state = 0x9e37_79b9_u32;
        let mut unit = || {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            state as f32 / u32::MAX as f32
        };
        for _ in 0..200 {
            let point = corner + Vec3::new(0.5 + 29.0 * unit(), 0.0, 0.5 + 29.0 * unit());
            let location = locate(&vertices, &triangles, horizontal(point)).unwrap();
            let new = vertices.len();
            vertices.push(point);
            insert_vertex(&mut triangles, &location, new);
            legalize_around(&vertices, &mut triangles, new, &on_boundary);
        }
        assert_eq!(triangles.len(), 2 * vertices.len() - 4 - 2);
        assert_eq!(legalize_all(&vertices, &mut triangles, &on_boundary), 0);
    }

    #[test]
    fn flips_end_on_a_fan_of_nearly_cocircular_points() {
        // The polygon a fuzzed level produced had 113 detail vertices and its flips ran to
        // the bound (201,021 of them, 11 s): points on one circle, fanned from the first,
        // are Delaunay whichever way their quads are split, so legalizing flips few edges
        // and a second pass none.
        let points = circle(Vec3::new(45.0, 1.8, 16.0), 15.0, 60);
        let mut triangles: Vec<[usize; 3]> = (1..points.len() - 1).map(|i| [0, i, i + 1]).collect();
        let count = points.len();
        let on_boundary = |a: usize, b: usize| a.abs_diff(b) == 1 || a.abs_diff(b) == count - 1;
        let flips = legalize_all(&points, &mut triangles, &on_boundary);
        assert!(flips < 2 * count, "{flips} flips for {count} points");
        assert_eq!(legalize_all(&points, &mut triangles, &on_boundary), 0);
        for t in &triangles {
            assert!(turn(points[t[0]], points[t[1]], points[t[2]]) > 0.0);
        }
    }
}
