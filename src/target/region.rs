//! Legal stand regions: the allowed stand area cut down, exactly, by walkable space, the
//! tolerance circle, the distance annulus, the facing wedge and visibility, into convex
//! fragments with ids (spec 000, "连续区域").
//!
//! Every fragment is an intersection of half-planes and circle bounds ([`PlanarRegion`]),
//! each bound labelled with where it came from. Visibility is not convex: the shadow of each
//! occluder (a convex set seen from the contact) is subtracted by splitting a fragment along
//! the shadow's edges, so the visible part of a fragment becomes up to one piece per shadow
//! edge. Empty pieces are dropped.

use glam::{Vec2, Vec3};

use super::TargetError;
use super::collision::CollisionWorld;
use super::record::{StandArea, TargetRecord};
use crate::geom::Aabb;
use crate::geom::planar::{Bound, DiskBound, HalfPlane, PlanarRegion, convex_polygon_half_planes};
use crate::mesh::{PolyRef, Snapshot};
use crate::query::QueryFilter;

/// One convex piece of a legal region.
#[derive(Clone, Debug, PartialEq)]
pub struct Fragment {
    /// Id, stable for the same inputs (its index among the non-empty fragments).
    pub id: u32,
    /// The region: every bound holds in it.
    pub region: PlanarRegion,
    /// Where each bound of `region` came from, in the same order.
    pub labels: Vec<String>,
    /// The walkable polygon the fragment lies on.
    pub polygon: PolyRef,
    /// The x range over which the fragment holds points, metres.
    pub x_extent: (f32, f32),
}

impl Fragment {
    /// Hash of the region's bounds (see [`PlanarRegion::hash`]).
    pub fn region_hash(&self) -> u64 {
        self.region.hash()
    }

    /// Labels of the bounds that shape the fragment's outline (those a point of its
    /// boundary lies on), in bound order.
    pub fn active_labels(&self) -> Vec<&str> {
        let (low, high) = self.x_extent;
        let mut active = vec![false; self.region.bounds.len()];
        let samples = 32;
        for step in 0..=samples {
            let x = low + (high - low) * step as f32 / samples as f32;
            let x = x.clamp(low, high);
            for interval in self.region.slice(x) {
                for z in [interval.low, interval.high] {
                    let point = Vec2::new(x, z);
                    for (index, bound) in self.region.bounds.iter().enumerate() {
                        if on_boundary(bound, point) {
                            active[index] = true;
                        }
                    }
                }
            }
        }
        // Vertical bounds show at the ends of the extent.
        for x in [low, high] {
            for (index, bound) in self.region.bounds.iter().enumerate() {
                if let Bound::Line(line) = bound {
                    if line.normal.y.abs() < 1e-6 && (line.normal.x * x - line.offset).abs() < 1e-5
                    {
                        active[index] = true;
                    }
                }
            }
        }
        self.labels
            .iter()
            .zip(active)
            .filter(|(_, on)| *on)
            .map(|(label, _)| label.as_str())
            .collect()
    }
}

fn on_boundary(bound: &Bound, point: Vec2) -> bool {
    match bound {
        Bound::Line(line) => line.slack(point).abs() <= 1e-5 * line.normal.length().max(1e-6),
        Bound::Circle(disk) => (point.distance(disk.centre) - disk.radius).abs() <= 1e-5,
    }
}

/// A walkable polygon considered for a region, in plan.
#[derive(Clone, Debug, PartialEq)]
pub struct WalkableFace {
    /// The polygon.
    pub polygon: PolyRef,
    /// Its corners (x, z).
    pub corners: Vec<Vec2>,
}

/// An occluder's shadow as used for splitting, for reports and drawings.
#[derive(Clone, Debug, PartialEq)]
pub struct Shadow {
    /// The occluder's name or id.
    pub occluder: String,
    /// Its widened plan outline (x, z), shifted into foot space.
    pub outline: Vec<Vec2>,
    /// The point the shadow is cast from (the contact, in foot space).
    pub apex: Vec2,
}

/// Everything region building found.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct RegionReport {
    /// The non-empty fragments.
    pub fragments: Vec<Fragment>,
    /// The walkable polygons used.
    pub walkable: Vec<WalkableFace>,
    /// The shadows subtracted.
    pub shadows: Vec<Shadow>,
}

struct Piece {
    bounds: LabelledBounds,
    polygon: PolyRef,
}

impl Piece {
    fn with(&self, bound: Bound, label: String) -> Piece {
        let mut bounds = self.bounds.clone();
        bounds.push((bound, label));
        Piece {
            bounds,
            polygon: self.polygon,
        }
    }

    fn region(&self) -> PlanarRegion {
        PlanarRegion {
            bounds: self.bounds.iter().map(|(bound, _)| *bound).collect(),
        }
    }
}

/// Bounds with the label of where each came from.
type LabelledBounds = Vec<(Bound, String)>;

/// The allowed areas in plan (their bounds and 3-D boxes) and the height of their support.
fn allowed_areas(record: &TargetRecord) -> (Vec<(LabelledBounds, Aabb)>, f32) {
    let delta_h = record.tolerances.horizontal_m;
    match &record.stand {
        StandArea::Region { polygons, height_m } => {
            let areas = polygons
                .iter()
                .enumerate()
                .map(|(index, polygon)| {
                    let bounds = convex_polygon_half_planes(polygon)
                        .into_iter()
                        .enumerate()
                        .map(|(edge, h)| {
                            (
                                Bound::Line(h),
                                format!("allowed region {index} edge {edge}"),
                            )
                        })
                        .collect();
                    let mut aabb = Aabb::EMPTY;
                    for corner in polygon {
                        aabb.add_point(Vec3::new(corner.x, *height_m, corner.y));
                    }
                    (bounds, aabb)
                })
                .collect();
            (areas, *height_m)
        }
        StandArea::Points { points, .. } => {
            let areas = points
                .iter()
                .enumerate()
                .map(|(index, point)| {
                    let centre = Vec2::new(point.x, point.z);
                    let bound = Bound::Circle(DiskBound {
                        centre,
                        radius: delta_h,
                        inside: true,
                        strict: false,
                    });
                    let aabb = Aabb {
                        min: *point - Vec3::new(delta_h, 0.0, delta_h),
                        max: *point + Vec3::new(delta_h, 0.0, delta_h),
                    };
                    (
                        vec![(bound, format!("tolerance circle of stand point {index}"))],
                        aabb,
                    )
                })
                .collect();
            (areas, points[0].y)
        }
    }
}

/// Walkable polygons of the record's layer, on its approach side, overlapping `area`
/// within the vertical tolerance.
fn walkable_faces(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    record: &TargetRecord,
    area: &Aabb,
) -> Vec<WalkableFace> {
    let delta_v = record.tolerances.vertical_m;
    let query = Aabb {
        min: area.min - Vec3::new(0.0, delta_v, 0.0),
        max: area.max + Vec3::new(0.0, delta_v, 0.0),
    };
    let mut faces = Vec::new();
    for (slot, generation, tile) in snapshot.tiles_overlapping(&query) {
        tile.for_each_overlapping(&query, |polygon| {
            let data = &tile.data.polygons[usize::from(polygon)];
            if !filter.passes(data) || data.layer != record.layer {
                return;
            }
            let corners: Vec<Vec2> = tile.corners(polygon).map(|c| Vec2::new(c.x, c.z)).collect();
            if let Some(side) = record.approach_side {
                if corners
                    .iter()
                    .all(|c| (*c - side.origin).dot(side.outward) < 0.0)
                {
                    return;
                }
            }
            if let Some(reference) = PolyRef::new(generation, slot, polygon) {
                faces.push(WalkableFace {
                    polygon: reference,
                    corners,
                });
            }
        });
    }
    faces.sort_by_key(|face| face.polygon);
    faces
}

fn rotate(vector: Vec2, degrees: f32) -> Vec2 {
    let (sin, cos) = degrees.to_radians().sin_cos();
    Vec2::new(
        vector.x * cos - vector.y * sin,
        vector.x * sin + vector.y * cos,
    )
}

/// Builds the legal stand region of a record as convex fragments.
pub fn legal_fragments(
    snapshot: &Snapshot,
    filter: &QueryFilter,
    record: &TargetRecord,
    world: &impl CollisionWorld,
) -> Result<RegionReport, TargetError> {
    record.validate()?;
    let (areas, height) = allowed_areas(record);
    let forward = record.forward();
    let interaction = &record.interaction;
    let contact = Vec2::new(interaction.contact.x, interaction.contact.z);
    // Bounds on the hand point s = q + forward * hand_forward become bounds on the foot q
    // centred at the contact shifted back by the same offset.
    let apex = contact - forward * record.body.hand_forward_m;
    let hand_height = height + record.body.hand_height_m;
    let rise = interaction.contact.y - hand_height;
    let mut report = RegionReport::default();
    let mut pieces: Vec<Piece> = Vec::new();
    for (area_bounds, area_box) in &areas {
        for face in walkable_faces(snapshot, filter, record, area_box) {
            let mut bounds = area_bounds.clone();
            for (edge, h) in convex_polygon_half_planes(&face.corners)
                .into_iter()
                .enumerate()
            {
                bounds.push((
                    Bound::Line(h),
                    format!("walkable polygon {:?} edge {edge}", face.polygon),
                ));
            }
            if let Some(side) = record.approach_side {
                bounds.push((
                    Bound::Line(HalfPlane {
                        normal: -side.outward,
                        offset: -side.outward.dot(side.origin),
                        strict: false,
                    }),
                    "approach side".into(),
                ));
            }
            if !report.walkable.contains(&face) {
                report.walkable.push(face.clone());
            }
            pieces.push(Piece {
                bounds,
                polygon: face.polygon,
            });
        }
    }
    // Distance band: |t - s| in [min, max] with the height difference fixed by the support.
    let outer_squared = interaction.distance_max_m.powi(2) - rise * rise;
    if outer_squared < 0.0 {
        pieces.clear();
    }
    let inner_squared = interaction.distance_min_m.powi(2) - rise * rise;
    let mut next = Vec::new();
    for piece in pieces {
        let mut piece = piece.with(
            Bound::Circle(DiskBound {
                centre: apex,
                radius: outer_squared.max(0.0).sqrt(),
                inside: true,
                strict: false,
            }),
            "interaction distance max".into(),
        );
        if inner_squared > 0.0 {
            piece = piece.with(
                Bound::Circle(DiskBound {
                    centre: apex,
                    radius: inner_squared.sqrt(),
                    inside: false,
                    strict: false,
                }),
                "interaction distance min".into(),
            );
        }
        next.push(piece);
    }
    pieces = next;
    // Facing: s - t within max_angle of -forward. Up to 90 degrees the wedge is convex;
    // beyond, it is split along its axis into two convex halves.
    let angle = record.facing.max_angle_deg;
    if angle < 180.0 {
        let axis = -forward;
        let (counter_clockwise_edge, clockwise_edge) = (rotate(axis, angle), rotate(axis, -angle));
        let right_of_ccw = Bound::Line(HalfPlane::left_of(apex + counter_clockwise_edge, apex));
        let left_of_cw = Bound::Line(HalfPlane::left_of(apex, apex + clockwise_edge));
        let mut next = Vec::new();
        for piece in pieces {
            if angle <= 90.0 {
                next.push(
                    piece
                        .with(right_of_ccw, "facing wedge, counter-clockwise edge".into())
                        .with(left_of_cw, "facing wedge, clockwise edge".into()),
                );
            } else {
                let left_of_axis = Bound::Line(HalfPlane::left_of(apex, apex + axis));
                let right_of_axis = Bound::Line(HalfPlane::left_of(apex + axis, apex));
                next.push(
                    piece
                        .with(left_of_axis, "facing wedge axis (left half)".into())
                        .with(right_of_ccw, "facing wedge, counter-clockwise edge".into()),
                );
                next.push(
                    piece
                        .with(right_of_axis, "facing wedge axis (right half)".into())
                        .with(left_of_cw, "facing wedge, clockwise edge".into()),
                );
            }
        }
        pieces = next;
    }
    // Visibility: subtract each occluder's shadow from the contact.
    if interaction.line_of_sight {
        let sight_height = height
            + match interaction.sight_from {
                super::record::SightFrom::Hand => record.body.hand_height_m,
                super::record::SightFrom::Eye => record.body.eye_height_m,
            };
        let mut reach = Aabb::EMPTY;
        for (_, area_box) in &areas {
            reach.add_box(area_box);
        }
        reach.add_point(interaction.contact);
        reach.add_point(Vec3::new(reach.min.x, sight_height, reach.min.z));
        let shift = -forward * record.body.hand_forward_m;
        for id in world.shapes_near(&reach) {
            if id == record.target_shape {
                continue;
            }
            let Some(shape) = world.shape(id) else {
                continue;
            };
            let Some((outline, low, high)) = shape.sight_footprint(interaction.sight_margin_m)
            else {
                continue;
            };
            let heights = [sight_height, interaction.contact.y];
            if heights.iter().all(|&y| y > high) || heights.iter().all(|&y| y < low) {
                continue; // the sight line passes over or under it
            }
            let outline: Vec<Vec2> = outline.iter().map(|&p| p + shift).collect();
            let name = format!("occluder '{}'", world.shape_name(id));
            let Some(shadow_bounds) = shadow_half_planes(apex, &outline, &name) else {
                // The contact is inside the occluder: nothing sees it.
                pieces.clear();
                continue;
            };
            report.shadows.push(Shadow {
                occluder: name,
                outline,
                apex,
            });
            let mut next = Vec::new();
            for piece in pieces {
                // piece minus shadow = union over i of piece ∩ H_1..H_{i-1} ∩ not H_i.
                let mut inside = piece;
                for (bound, label) in &shadow_bounds {
                    let outside =
                        inside.with(Bound::Line(bound.complement()), format!("visible: {label}"));
                    if !outside.region().is_empty() {
                        next.push(outside);
                    }
                    inside = inside.with(Bound::Line(*bound), format!("shadowed: {label}"));
                }
            }
            pieces = next;
        }
    }
    for piece in pieces {
        let region = piece.region();
        let Some(x_extent) = region.x_extent() else {
            continue;
        };
        report.fragments.push(Fragment {
            id: report.fragments.len() as u32,
            region,
            labels: piece.bounds.into_iter().map(|(_, label)| label).collect(),
            polygon: piece.polygon,
            x_extent,
        });
    }
    Ok(report)
}

/// The half-planes whose intersection is the shadow of a convex `outline` seen from `apex`:
/// the two silhouette rays, then the outline edges that face the apex. `None` when the apex
/// lies inside the outline.
fn shadow_half_planes(
    apex: Vec2,
    outline: &[Vec2],
    name: &str,
) -> Option<Vec<(HalfPlane, String)>> {
    if outline.len() < 2 {
        return Some(Vec::new());
    }
    let centre = outline.iter().copied().sum::<Vec2>() / outline.len() as f32;
    let towards = centre - apex;
    if outline.len() >= 3
        && convex_polygon_half_planes(outline)
            .iter()
            .all(|h| h.contains(apex))
    {
        return None;
    }
    let angle = |p: Vec2| {
        let v = p - apex;
        towards.perp_dot(v).atan2(towards.dot(v))
    };
    let by_angle = |a: &&Vec2, b: &&Vec2| angle(**a).total_cmp(&angle(**b));
    let most_counter_clockwise = *outline.iter().max_by(by_angle)?;
    let most_clockwise = *outline.iter().min_by(by_angle)?;
    let corner = |p: Vec2| format!("{name} corner ({:.4}, {:.4})", p.x, p.y);
    let mut bounds = vec![
        (
            HalfPlane::left_of(most_counter_clockwise, apex),
            format!("ray through {}", corner(most_counter_clockwise)),
        ),
        (
            HalfPlane::left_of(apex, most_clockwise),
            format!("ray through {}", corner(most_clockwise)),
        ),
    ];
    if outline.len() == 2 {
        // A segment: its far side.
        let (a, b) = (outline[0], outline[1]);
        let far = if HalfPlane::left_of(a, b).contains(apex) {
            HalfPlane::left_of(b, a)
        } else {
            HalfPlane::left_of(a, b)
        };
        bounds.push((far, format!("{name} front")));
        return Some(bounds);
    }
    // Hull corners run counter-clockwise, interior on the left of each edge: an edge faces
    // the apex when the apex is strictly on its right.
    for (edge, half_plane) in convex_polygon_half_planes(outline).into_iter().enumerate() {
        if half_plane.slack(apex) < 0.0 {
            bounds.push((half_plane, format!("{name} front edge {edge}")));
        }
    }
    Some(bounds)
}
