//! Stage [`Stage::Contours`](super::Stage::Contours): trace each region's outline and simplify it into a contour.
//!
//! Inputs: the compact heightfield with regions. Output: [`ContourSet`], one contour per
//! region (holes already spliced into their outline), vertices in grid cells.
//!
//! Tracing walks each region's boundary edges, emitting one raw vertex per cell corner with
//! the region across that edge. Simplification keeps every vertex where the neighbouring
//! region changes (so two regions agree on their shared portal exactly), then inserts the
//! raw vertex farthest from each wall segment until no raw vertex strays more than the edge
//! error, then splits wall segments longer than the edge length.
//!
//! Invariants: outlines wind counter-clockwise seen from above (+Y) in (x, z) cell space;
//! consecutive vertices differ in (x, z).

use super::compact::CompactHeightfield;
use super::regions::BORDER_REGION;

/// Vertex flag: the vertex lies on the tile border.
pub const VERTEX_ON_BORDER: u32 = 1 << 16;
/// Edge flag: the region across has another area (water beside ground). Such an edge is
/// simplified within the error like a wall, so an area keeps its shape even where it is
/// surrounded by portals.
pub const AREA_BORDER: u32 = 1 << 17;
/// Mask of the neighbour-region bits of a vertex's `tag`.
pub const REGION_MASK: u32 = 0xffff;

/// A contour vertex: cell coordinates, floor height, and the tag of the edge that starts at
/// it (the region across it in the low 16 bits, [`VERTEX_ON_BORDER`] above).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContourVertex {
    /// Cell corner along X.
    pub x: i32,
    /// Floor height, cell heights.
    pub y: i32,
    /// Cell corner along Z.
    pub z: i32,
    /// Region across the edge that starts here, plus flags.
    pub tag: u32,
}

/// The simplified outline of one region.
#[derive(Clone, Debug)]
pub struct Contour {
    /// Region id.
    pub region: u16,
    /// Area of the region.
    pub area: u8,
    /// Simplified vertices.
    pub vertices: Vec<ContourVertex>,
}

/// All contours of a grid.
#[derive(Clone, Debug, Default)]
pub struct ContourSet {
    /// One contour per region that survived.
    pub contours: Vec<Contour>,
}

/// Contour stage parameters, in cells.
#[derive(Clone, Copy, Debug)]
pub struct ContourParams {
    /// Largest deviation of the simplified outline from the traced one. Units: cells.
    pub max_error_cells: f32,
    /// Longest wall edge (0: unlimited). Units: cells.
    pub max_edge_length_cells: u32,
}

/// Traces and simplifies every region.
pub fn build_contours(compact: &CompactHeightfield, params: &ContourParams) -> ContourSet {
    let span_total = compact.span_count();
    // Bit d set: the edge towards direction d is a boundary of the span's region.
    let mut boundary = vec![0u8; span_total];
    let mut coordinates = vec![(0u32, 0u32); span_total];
    compact.for_each_span(|x, z, span| {
        coordinates[span] = (x, z);
        let region = compact.regions[span];
        if region == 0 || region & BORDER_REGION != 0 {
            return;
        }
        let mut bits = 0u8;
        for direction in 0..4 {
            let same = compact
                .neighbour(x, z, span, direction)
                .is_some_and(|neighbour| compact.regions[neighbour] == region);
            if !same {
                bits |= 1 << direction;
            }
        }
        // A lone cell has no interior to trace around usefully.
        boundary[span] = if bits == 0xf { 0 } else { bits };
    });

    let mut loops_by_region: Vec<(u16, u8, Vec<ContourVertex>)> = Vec::new();
    let mut raw: Vec<ContourVertex> = Vec::new();
    for span in 0..span_total {
        if boundary[span] == 0 {
            continue;
        }
        let region = compact.regions[span];
        raw.clear();
        trace(compact, &coordinates, &mut boundary, span, &mut raw);
        let simplified = simplify(&raw, params);
        let simplified = remove_degenerate(simplified);
        if simplified.len() >= 3 {
            loops_by_region.push((region, compact.areas[span], simplified));
        }
    }

    // Group loops by region; the loop with positive area is the outline, the rest holes.
    loops_by_region.sort_by_key(|(region, _, _)| *region);
    let mut contours = Vec::new();
    let mut index = 0;
    while index < loops_by_region.len() {
        let region = loops_by_region[index].0;
        let end = loops_by_region[index..]
            .iter()
            .position(|(other, _, _)| *other != region)
            .map_or(loops_by_region.len(), |offset| index + offset);
        let group = &mut loops_by_region[index..end];
        group.sort_by_key(|(_, _, vertices)| std::cmp::Reverse(signed_area2(vertices)));
        let (outline_group, holes) = group.split_at_mut(1);
        let (_, area, outline) = &mut outline_group[0];
        if signed_area2(outline) > 0 {
            let mut outline = std::mem::take(outline);
            let mut hole_list: Vec<Vec<ContourVertex>> = holes
                .iter_mut()
                .filter(|(_, _, vertices)| signed_area2(vertices) < 0)
                .map(|(_, _, vertices)| std::mem::take(vertices))
                .collect();
            merge_holes(&mut outline, &mut hole_list);
            contours.push(Contour {
                region,
                area: *area,
                vertices: outline,
            });
        }
        index = end;
    }
    ContourSet { contours }
}

/// Walks one boundary loop starting at `start`, clearing the boundary bits it passes.
fn trace(
    compact: &CompactHeightfield,
    coordinates: &[(u32, u32)],
    boundary: &mut [u8],
    start: usize,
    raw: &mut Vec<ContourVertex>,
) {
    let mut direction = (0..4)
        .find(|&d| boundary[start] & (1 << d) != 0)
        .unwrap_or(0);
    let start_direction = direction;
    let mut span = start;
    // Bounded: each step clears a bit or moves; a loop visits each edge once.
    let iterations_max = 4 * compact.span_count() + 4;
    for _ in 0..iterations_max {
        let (x, z) = coordinates[span];
        if boundary[span] & (1 << direction) != 0 {
            let (corner_y, on_border) = corner_height(compact, x, z, span, direction);
            let (mut corner_x, mut corner_z) = (x as i32, z as i32);
            match direction {
                0 => corner_z += 1,
                1 => {
                    corner_x += 1;
                    corner_z += 1;
                }
                2 => corner_x += 1,
                _ => {}
            }
            let (across, other_area) =
                compact
                    .neighbour(x, z, span, direction)
                    .map_or((0u32, false), |neighbour| {
                        let region = compact.regions[neighbour];
                        let walkable = region != 0 && region & BORDER_REGION == 0;
                        (
                            u32::from(region),
                            walkable && compact.areas[neighbour] != compact.areas[span],
                        )
                    });
            let mut tag = across;
            if other_area {
                tag |= AREA_BORDER;
            }
            if on_border {
                tag |= VERTEX_ON_BORDER;
            }
            raw.push(ContourVertex {
                x: corner_x,
                y: corner_y,
                z: corner_z,
                tag,
            });
            boundary[span] &= !(1 << direction);
            direction = (direction + 1) % 4;
        } else {
            let Some(neighbour) = compact.neighbour(x, z, span, direction) else {
                // A linked same-region neighbour always exists when the bit is clear.
                break;
            };
            span = neighbour;
            direction = (direction + 3) % 4;
        }
        if span == start && direction == start_direction {
            break;
        }
    }
}

/// Height of a cell corner: the highest floor among the spans sharing it, so the contour
/// never cuts below a step. Also whether the corner sits where border regions meet the tile.
fn corner_height(
    compact: &CompactHeightfield,
    x: u32,
    z: u32,
    span: usize,
    direction: usize,
) -> (i32, bool) {
    let next_direction = (direction + 1) % 4;
    let mut height = i32::from(compact.floor[span]);
    let mut regions = [compact.regions[span], 0, 0, 0];
    let step = |x: u32, z: u32, direction: usize| {
        let (dx, dz) = super::filter::DIRECTIONS[direction];
        ((x as i32 + dx) as u32, (z as i32 + dz) as u32)
    };
    if let Some(first) = compact.neighbour(x, z, span, direction) {
        height = height.max(i32::from(compact.floor[first]));
        regions[1] = compact.regions[first];
        let (fx, fz) = step(x, z, direction);
        if let Some(diagonal) = compact.neighbour(fx, fz, first, next_direction) {
            height = height.max(i32::from(compact.floor[diagonal]));
            regions[2] = compact.regions[diagonal];
        }
    }
    if let Some(second) = compact.neighbour(x, z, span, next_direction) {
        height = height.max(i32::from(compact.floor[second]));
        regions[3] = compact.regions[second];
        let (sx, sz) = step(x, z, next_direction);
        if let Some(diagonal) = compact.neighbour(sx, sz, second, direction) {
            height = height.max(i32::from(compact.floor[diagonal]));
            regions[2] = regions[2].max(compact.regions[diagonal]);
        }
    }
    // On the tile border: two consecutive corner cells are border regions and the other two
    // are walkable, non-border cells of the tile.
    let on_border = (0..4).any(|a| {
        let b = (a + 1) % 4;
        let c = (a + 2) % 4;
        let d = (a + 3) % 4;
        let is_border = |r: u16| r & BORDER_REGION != 0;
        is_border(regions[a])
            && is_border(regions[b])
            && !is_border(regions[c])
            && !is_border(regions[d])
            && regions[c] != 0
            && regions[d] != 0
    });
    (height, on_border)
}

fn region_of(tag: u32) -> u32 {
    tag & REGION_MASK
}

/// Squared distance from `p` to segment `a`-`b`, in the (x, z) plane.
fn distance_squared_to_segment(p: (i32, i32), a: (i32, i32), b: (i32, i32)) -> f32 {
    let (px, pz) = (p.0 as f32, p.1 as f32);
    let (ax, az) = (a.0 as f32, a.1 as f32);
    let (dx, dz) = (b.0 as f32 - ax, b.1 as f32 - az);
    let length_squared = dx * dx + dz * dz;
    let t = if length_squared > 0.0 {
        (((px - ax) * dx + (pz - az) * dz) / length_squared).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let (ex, ez) = (ax + t * dx - px, az + t * dz - pz);
    ex * ex + ez * ez
}

/// Simplifies a raw loop. Returns indices into `raw` turned into vertices, tagged with the
/// raw tag of the edge they start.
fn simplify(raw: &[ContourVertex], params: &ContourParams) -> Vec<ContourVertex> {
    let count = raw.len();
    if count < 3 {
        return raw.to_vec();
    }
    // A raw vertex sits at the end of the edge it was emitted for, so the edge that starts at
    // raw vertex `i` is the one emitted with `raw[i + 1]`.
    let edge_tag = |i: usize| raw[(i + 1) % count].tag;
    // Keep the vertices where the region across changes (portal ends, tile-border corners),
    // or an area border starts or ends.
    let mut kept: Vec<usize> = (0..count)
        .filter(|&i| {
            region_of(raw[i].tag) != region_of(edge_tag(i))
                || (raw[i].tag & AREA_BORDER) != (edge_tag(i) & AREA_BORDER)
        })
        .collect();
    if kept.is_empty() {
        // A region surrounded by walls only: start from its lowest-left and highest-right
        // corners.
        let lowest = (0..count)
            .min_by_key(|&i| (raw[i].x, raw[i].z))
            .unwrap_or(0);
        let highest = (0..count)
            .max_by_key(|&i| (raw[i].x, raw[i].z))
            .unwrap_or(0);
        kept = if lowest == highest {
            vec![lowest]
        } else {
            vec![lowest.min(highest), lowest.max(highest)]
        };
    }

    // Insert the farthest raw vertex of each wall or area-border segment until all lie within
    // the error. An area border is traced by both regions, in opposite directions: measuring
    // from the segment's lexicographically smaller end and breaking ties on position makes
    // both pick the same points.
    let error_squared = params.max_error_cells * params.max_error_cells;
    let mut index = 0;
    while index < kept.len() {
        let a = kept[index];
        let b = kept[(index + 1) % kept.len()];
        let tessellate = region_of(edge_tag(a)) == 0 || edge_tag(a) & AREA_BORDER != 0;
        let mut farthest: Option<(usize, f32)> = None;
        if tessellate {
            let (mut from, mut to) = ((raw[a].x, raw[a].z), (raw[b].x, raw[b].z));
            if to < from {
                std::mem::swap(&mut from, &mut to);
            }
            let mut cursor = (a + 1) % count;
            while cursor != b {
                let point = (raw[cursor].x, raw[cursor].z);
                let d = distance_squared_to_segment(point, from, to);
                let better = farthest.is_none_or(|(best_index, best)| {
                    d > best || (d == best && point < (raw[best_index].x, raw[best_index].z))
                });
                if d > error_squared && better {
                    farthest = Some((cursor, d));
                }
                cursor = (cursor + 1) % count;
            }
        }
        match farthest {
            Some((vertex, _)) => kept.insert(index + 1, vertex),
            None => index += 1,
        }
    }

    // Split wall edges longer than the edge limit at their raw midpoint.
    if params.max_edge_length_cells > 0 {
        let limit_squared = (params.max_edge_length_cells as i64).pow(2);
        let mut index = 0;
        while index < kept.len() {
            let a = kept[index];
            let b = kept[(index + 1) % kept.len()];
            let (dx, dz) = ((raw[b].x - raw[a].x) as i64, (raw[b].z - raw[a].z) as i64);
            let raw_between = (b + count - a) % count;
            if region_of(edge_tag(a)) == 0 && dx * dx + dz * dz > limit_squared && raw_between > 1 {
                kept.insert(index + 1, (a + raw_between / 2) % count);
            } else {
                index += 1;
            }
        }
    }

    kept.iter()
        .map(|&i| {
            // Position and border flag are the vertex's own; the region across is that of the
            // edge it starts.
            let mut vertex = raw[i];
            vertex.tag = (raw[i].tag & !REGION_MASK) | region_of(edge_tag(i));
            vertex
        })
        .collect()
}

/// Removes consecutive vertices at the same (x, z).
fn remove_degenerate(mut vertices: Vec<ContourVertex>) -> Vec<ContourVertex> {
    let mut index = 0;
    while vertices.len() > 1 && index < vertices.len() {
        let next = (index + 1) % vertices.len();
        if vertices[index].x == vertices[next].x && vertices[index].z == vertices[next].z {
            vertices.remove(next);
        } else {
            index += 1;
        }
    }
    vertices
}

/// Twice the signed area in (x, z); positive for the winding outlines have.
pub fn signed_area2(vertices: &[ContourVertex]) -> i64 {
    let count = vertices.len();
    let mut area = 0i64;
    for i in 0..count {
        let a = vertices[i];
        let b = vertices[(i + 1) % count];
        area += i64::from(a.x) * i64::from(b.z) - i64::from(b.x) * i64::from(a.z);
    }
    // Sign chosen so that the tracing direction of outlines is positive.
    -area
}

/// Splices each hole into the outline through the shortest bridge that crosses no edge.
fn merge_holes(outline: &mut Vec<ContourVertex>, holes: &mut [Vec<ContourVertex>]) {
    // Leftmost holes first, as their bridges are least likely to be blocked by later ones.
    holes.sort_by_key(|hole| hole.iter().map(|v| (v.x, v.z)).min());
    for hole in holes.iter() {
        if hole.len() < 3 {
            continue;
        }
        let hole_start = (0..hole.len())
            .min_by_key(|&i| (hole[i].x, hole[i].z))
            .unwrap_or(0);
        let target = hole[hole_start];
        let mut best: Option<(usize, i64)> = None;
        for (index, vertex) in outline.iter().enumerate() {
            let (dx, dz) = (
                i64::from(vertex.x - target.x),
                i64::from(vertex.z - target.z),
            );
            let distance = dx * dx + dz * dz;
            if best.is_some_and(|(_, best_distance)| distance >= best_distance) {
                continue;
            }
            if bridge_is_clear(outline, hole, index, hole_start) {
                best = Some((index, distance));
            }
        }
        let Some((outline_index, _)) = best else {
            continue;
        };
        // outline[..=i], hole from start around back to start, outline[i..].
        let mut merged = Vec::with_capacity(outline.len() + hole.len() + 2);
        merged.extend_from_slice(&outline[..=outline_index]);
        for offset in 0..=hole.len() {
            merged.push(hole[(hole_start + offset) % hole.len()]);
        }
        merged.extend_from_slice(&outline[outline_index..]);
        *outline = merged;
    }
}

fn cross(o: (i64, i64), a: (i64, i64), b: (i64, i64)) -> i64 {
    (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0)
}

fn segments_cross(a: (i64, i64), b: (i64, i64), c: (i64, i64), d: (i64, i64)) -> bool {
    let (d1, d2) = (cross(c, d, a), cross(c, d, b));
    let (d3, d4) = (cross(a, b, c), cross(a, b, d));
    ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
}

fn bridge_is_clear(
    outline: &[ContourVertex],
    hole: &[ContourVertex],
    outline_index: usize,
    hole_index: usize,
) -> bool {
    let point = |v: &ContourVertex| (i64::from(v.x), i64::from(v.z));
    let (a, b) = (point(&outline[outline_index]), point(&hole[hole_index]));
    let crosses_loop = |loop_vertices: &[ContourVertex]| {
        (0..loop_vertices.len()).any(|i| {
            let (c, d) = (
                point(&loop_vertices[i]),
                point(&loop_vertices[(i + 1) % loop_vertices.len()]),
            );
            segments_cross(a, b, c, d)
        })
    };
    !crosses_loop(outline) && !crosses_loop(hole)
}
