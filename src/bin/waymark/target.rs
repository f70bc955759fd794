//! `waymark target SCENARIO.json`: project an interaction target (spec 000) and report the
//! fragments, the chosen candidate, every check's measured value and the verdict. The
//! scenario format is documented in `docs/target_scenario.md`.

use std::io::Write;
use std::path::{Path, PathBuf};

use glam::{Vec2, Vec3};
use serde::Deserialize;
use serde_json::{Value, json};
use waymark::debug::{draw_target, picture::Picture};
use waymark::ids::{AreaId, TransformVersion};
use waymark::mesh::blob::BakeParams;
use waymark::mesh::{NavMesh, Snapshot, TileData, WalkablePolygon};
use waymark::query::{ApproachSide, QueryFilter, raycast};
use waymark::target::{
    BodyProfile, FacingRule, InPlaceRule, InteractionRule, Placement, PoseReport, ProbeRule, Shape,
    SightFrom, StandArea, StartProjection, StaticWorld, TargetRecord, TargetResult, Tolerances,
    Verdict, project_start, project_target,
};

use crate::CliError;
use crate::common::write_picture;

#[derive(clap::Args, Debug)]
pub struct TargetCommand {
    /// Scenario file (JSON): walkable polygons, obstacles, the target record and the body.
    scenario: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Draw the regions, fragments, occluders, candidates and rays into this SVG.
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    /// Draw the same picture to this PNG file (the caption in its text chunks).
    #[arg(long, value_name = "FILE")]
    png: Option<PathBuf>,
}

#[cfg(test)]
impl TargetCommand {
    /// The command a fuzz target runs: the JSON report of the scenario at `scenario`.
    pub(crate) fn json_report(scenario: PathBuf) -> TargetCommand {
        TargetCommand {
            scenario,
            svg: None,
            png: None,
            json: true,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    walkable: Vec<WalkableSpec>,
    #[serde(default)]
    boxes: Vec<BoxSpec>,
    #[serde(default)]
    planes: Vec<PlaneSpec>,
    #[serde(default)]
    capsules: Vec<CapsuleSpec>,
    /// Name of the shape (box, plane or capsule) that is the interaction target.
    target_shape: String,
    body: BodySpec,
    target: TargetSpec,
    /// An actual foot position to project as the navigation start.
    #[serde(default)]
    start: Option<StartSpec>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WalkableSpec {
    corners: Vec<[f32; 3]>,
    #[serde(default)]
    layer: u16,
    #[serde(default = "ground")]
    area: u8,
}

fn ground() -> u8 {
    AreaId::GROUND.0
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct BoxSpec {
    name: String,
    min: [f32; 3],
    max: [f32; 3],
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct PlaneSpec {
    name: String,
    normal: [f32; 3],
    offset: f32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct CapsuleSpec {
    name: String,
    a: [f32; 3],
    b: [f32; 3],
    radius: f32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct BodySpec {
    radius_m: f32,
    height_m: f32,
    eye_height_m: f32,
    hand_height_m: f32,
    #[serde(default)]
    hand_forward_m: f32,
    #[serde(default = "clearance_tolerance")]
    clearance_tolerance_m: f32,
}

fn clearance_tolerance() -> f32 {
    1e-4
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct TargetSpec {
    #[serde(default)]
    instance: u32,
    #[serde(default)]
    asset_version: u64,
    #[serde(default)]
    transform_version: u64,
    slot: u32,
    stand: StandSpec,
    facing: FacingSpec,
    #[serde(default)]
    layer: u16,
    #[serde(default)]
    approach_side: Option<SideSpec>,
    tolerances: ToleranceSpec,
    interaction: InteractionSpec,
    #[serde(default = "sample_spacing")]
    sample_spacing_m: f32,
    #[serde(default = "candidates_max")]
    candidates_max: u32,
}

fn sample_spacing() -> f32 {
    0.05
}

fn candidates_max() -> u32 {
    64
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
pub(crate) enum StandSpec {
    Region {
        polygons: Vec<Vec<[f32; 2]>>,
        height_m: f32,
    },
    Points {
        points: Vec<[f32; 3]>,
        #[serde(default)]
        continuous_offset: bool,
    },
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct FacingSpec {
    forward: [f32; 2],
    max_angle_deg: f32,
    #[serde(default)]
    in_place_accept: bool,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct SideSpec {
    origin: [f32; 2],
    outward: [f32; 2],
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToleranceSpec {
    horizontal_m: f32,
    vertical_m: f32,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct InteractionSpec {
    contact: [f32; 3],
    distance_min_m: f32,
    distance_max_m: f32,
    #[serde(default = "yes")]
    line_of_sight: bool,
    #[serde(default)]
    sight_from_eye: bool,
    #[serde(default)]
    sight_margin_m: f32,
    #[serde(default)]
    probe: Option<ProbeSpec>,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProbeSpec {
    radius_m: f32,
    surface_normal: [f32; 3],
    lift_from_height_m: f32,
    reach_m: f32,
    patch_min: [f32; 3],
    patch_max: [f32; 3],
    contact_error_m: f32,
    penetration_m: f32,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StartSpec {
    foot: [f32; 3],
    correction_max_m: f32,
    vertical_m: f32,
}

fn usage(message: String) -> CliError {
    CliError::Usage(message)
}

fn parse_scenario(text: &str, path: &Path) -> Result<Scenario, CliError> {
    serde_json::from_str(text)
        .map_err(|error| usage(format!("scenario '{}': {error}", path.display())))
}

fn build_world(scenario: &Scenario) -> Result<StaticWorld, CliError> {
    build_world_of(&scenario.boxes, &scenario.planes, &scenario.capsules)
}

/// A collision world of named boxes, half-spaces and capsules (as a target scenario, or a
/// `waymark sim` level, lists them).
pub(crate) fn build_world_of(
    boxes: &[BoxSpec],
    planes: &[PlaneSpec],
    capsules: &[CapsuleSpec],
) -> Result<StaticWorld, CliError> {
    let mut world = StaticWorld::new();
    let bad = |error: waymark::target::BadShape| CliError::library(error);
    for spec in boxes {
        let shape = Shape::Box {
            min: Vec3::from(spec.min),
            max: Vec3::from(spec.max),
        };
        world.add(&spec.name, shape).map_err(bad)?;
    }
    for spec in planes {
        let shape = Shape::HalfSpace {
            normal: Vec3::from(spec.normal),
            offset: spec.offset,
        };
        world.add(&spec.name, shape).map_err(bad)?;
    }
    for spec in capsules {
        let shape = Shape::Capsule {
            a: Vec3::from(spec.a),
            b: Vec3::from(spec.b),
            radius: spec.radius,
        };
        world.add(&spec.name, shape).map_err(bad)?;
    }
    Ok(world)
}

fn build_record(scenario: &Scenario, world: &StaticWorld) -> Result<TargetRecord, CliError> {
    build_record_of(
        &scenario.target_shape,
        &scenario.body,
        &scenario.target,
        world,
    )
}

/// A fixed target record from its scenario form, its target shape named in `world`.
pub(crate) fn build_record_of(
    target_shape: &str,
    body: &BodySpec,
    spec: &TargetSpec,
    world: &StaticWorld,
) -> Result<TargetRecord, CliError> {
    let target_shape = world.find(target_shape).ok_or_else(|| {
        usage(format!(
            "target_shape '{target_shape}' names no box, plane or capsule of the scenario"
        ))
    })?;
    let interaction = &spec.interaction;
    Ok(TargetRecord {
        instance: spec.instance,
        asset_version: spec.asset_version,
        placement: Placement::Fixed {
            transform_version: TransformVersion(spec.transform_version),
        },
        slot: spec.slot,
        body: BodyProfile {
            radius_m: body.radius_m,
            height_m: body.height_m,
            eye_height_m: body.eye_height_m,
            hand_height_m: body.hand_height_m,
            hand_forward_m: body.hand_forward_m,
            clearance_tolerance_m: body.clearance_tolerance_m,
        },
        stand: match &spec.stand {
            StandSpec::Region { polygons, height_m } => StandArea::Region {
                polygons: polygons
                    .iter()
                    .map(|polygon| polygon.iter().map(|&c| Vec2::from(c)).collect())
                    .collect(),
                height_m: *height_m,
            },
            StandSpec::Points {
                points,
                continuous_offset,
            } => StandArea::Points {
                points: points.iter().map(|&p| Vec3::from(p)).collect(),
                continuous_offset: *continuous_offset,
            },
        },
        facing: FacingRule {
            forward: Vec2::from(spec.facing.forward),
            max_angle_deg: spec.facing.max_angle_deg,
            in_place: if spec.facing.in_place_accept {
                InPlaceRule::Accept
            } else {
                InPlaceRule::Reject
            },
        },
        layer: spec.layer,
        approach_side: spec.approach_side.as_ref().map(|side| ApproachSide {
            origin: Vec2::from(side.origin),
            outward: Vec2::from(side.outward),
        }),
        tolerances: Tolerances {
            horizontal_m: spec.tolerances.horizontal_m,
            vertical_m: spec.tolerances.vertical_m,
        },
        interaction: InteractionRule {
            contact: Vec3::from(interaction.contact),
            distance_min_m: interaction.distance_min_m,
            distance_max_m: interaction.distance_max_m,
            line_of_sight: interaction.line_of_sight,
            sight_from: if interaction.sight_from_eye {
                SightFrom::Eye
            } else {
                SightFrom::Hand
            },
            sight_margin_m: interaction.sight_margin_m,
            probe: interaction.probe.as_ref().map(|probe| ProbeRule {
                radius_m: probe.radius_m,
                surface_normal: Vec3::from(probe.surface_normal),
                lift_from_height_m: probe.lift_from_height_m,
                reach_m: probe.reach_m,
                patch_min: Vec3::from(probe.patch_min),
                patch_max: Vec3::from(probe.patch_max),
                contact_error_m: probe.contact_error_m,
                penetration_m: probe.penetration_m,
            }),
        },
        target_shape,
        sample_spacing_m: spec.sample_spacing_m,
        candidates_max: spec.candidates_max,
    })
}

fn build_mesh(scenario: &Scenario) -> Result<NavMesh, CliError> {
    let polygons: Vec<WalkablePolygon> = scenario
        .walkable
        .iter()
        .map(|spec| WalkablePolygon {
            corners: spec.corners.iter().map(|&c| Vec3::from(c)).collect(),
            area: AreaId(spec.area),
            layer: spec.layer,
        })
        .collect();
    let tile = TileData::from_walkable_polygons(&polygons).map_err(CliError::library)?;
    let params = BakeParams {
        agent_radius_m: scenario.body.radius_m,
        agent_height_m: scenario.body.height_m,
        ..BakeParams::default()
    };
    let mut mesh = NavMesh::new(params);
    mesh.add_tiles(vec![tile]).map_err(CliError::library)?;
    Ok(mesh)
}

fn v3(v: Vec3) -> Value {
    json!([v.x, v.y, v.z])
}

fn pose_json(report: &PoseReport, world: &StaticWorld) -> Value {
    let name = |id| world.name(id).unwrap_or("?").to_owned();
    json!({
        "foot": v3(report.foot),
        "hand": v3(report.hand),
        "facing": [report.facing.x, report.facing.y],
        "passed": report.passed,
        "failure": report.failure(),
        "distance_m": report.distance_m,
        "distance_ok": report.distance_ok,
        "facing_dot": report.facing_dot,
        "facing_limit": report.facing_limit,
        "facing_ok": report.facing_ok,
        "body_clear": report.body_clear,
        "body": report.body.iter().map(|c| json!({
            "shape": name(c.shape),
            "axis_distance_m": c.axis_distance_m,
            "clearance_m": c.clearance_m,
        })).collect::<Vec<_>>(),
        "sight": report.sight.as_ref().map(|sight| json!({
            "from": v3(sight.from),
            "clear": sight.clear,
            "crossings": sight.crossings.iter().map(|c| json!({
                "shape": name(c.shape),
                "point": v3(c.point),
                "face_axis": c.face_axis,
                "blocked": c.blocked,
            })).collect::<Vec<_>>(),
        })),
        "probe": report.probe.as_ref().map(|probe| json!({
            "lift_start": v3(probe.lift_start),
            "centre_end": v3(probe.centre_end),
            "extension_m": probe.extension_m,
            "obstacles": probe.obstacle_distances.iter().map(|(id, d)| json!({
                "shape": name(*id),
                "distance_m": d,
            })).collect::<Vec<_>>(),
            "worst_clearance_m": probe.worst_obstacle.map(|(_, c)| c),
            "contact_error_m": probe.contact_error_m,
            "penetration_m": probe.penetration_m,
            "in_patch": probe.in_patch,
            "passed": probe.passed,
        })),
    })
}

fn start_json(
    scenario: &Scenario,
    snapshot: &Snapshot,
    record: &TargetRecord,
    result: &TargetResult,
    world: &StaticWorld,
) -> Result<Value, CliError> {
    let Some(start) = &scenario.start else {
        return Ok(Value::Null);
    };
    let filter = QueryFilter::new();
    let projection = project_start(
        snapshot,
        &filter,
        Vec3::from(start.foot),
        record.layer,
        start.correction_max_m,
        start.vertical_m,
        &record.body,
        world,
    )
    .map_err(CliError::library)?;
    Ok(match projection {
        StartProjection::OnMesh {
            polygon,
            point,
            correction_m,
        } => {
            // The access from the start to the chosen foot point: a straight walk on the mesh?
            let reaches = match &result.verdict {
                Verdict::Success(pose) => {
                    let ray = raycast(snapshot, polygon, point, pose.foot, &filter)
                        .map_err(CliError::library)?;
                    Some(ray.hit_fraction.is_none())
                }
                _ => None,
            };
            json!({
                "kind": "on_mesh",
                "point": v3(point),
                "correction_m": correction_m,
                "straight_to_pose": reaches,
            })
        }
        StartProjection::InTheAir { height_above_m } => {
            json!({ "kind": "in_the_air", "height_above_m": height_above_m })
        }
        StartProjection::OutOfReach => json!({ "kind": "out_of_reach" }),
        StartProjection::AccessBlocked { shape, clearance_m } => json!({
            "kind": "access_blocked",
            "shape": world.name(shape),
            "clearance_m": clearance_m,
        }),
    })
}

pub fn run(command: &TargetCommand) -> Result<(), CliError> {
    let path = &command.scenario;
    let text = waymark::geom::limits::read_text_file(path)
        .map_err(|source| usage(format!("cannot read '{}': {source}", path.display())))?;
    run_text(command, &text, &mut std::io::stdout().lock())
}

/// Runs the scenario `text` (read from `command.scenario`), writing the report to `out`.
pub(crate) fn run_text(
    command: &TargetCommand,
    text: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let scenario = parse_scenario(text, &command.scenario)?;
    let world = build_world(&scenario)?;
    let record = build_record(&scenario, &world)?;
    let mesh = build_mesh(&scenario)?;
    let snapshot = mesh.snapshot();
    let result = project_target(&snapshot, &QueryFilter::new(), &record, &world, None)
        .map_err(CliError::library)?;
    let verdict = match &result.verdict {
        Verdict::Success(_) => "success",
        Verdict::NoLegalRegion => "no_legal_region",
        Verdict::CandidatesExhausted => "candidates_exhausted",
    };
    let fragments: Vec<Value> = result
        .region
        .fragments
        .iter()
        .map(|fragment| {
            json!({
                "id": fragment.id,
                "x_extent": [fragment.x_extent.0, fragment.x_extent.1],
                "region_hash": format!("{:016x}", fragment.region_hash()),
                "bounds": fragment.active_labels(),
            })
        })
        .collect();
    let chosen = match &result.verdict {
        Verdict::Success(pose) => json!({
            "slot": pose.slot,
            "fragment": pose.fragment,
            "region_hash": format!("{:016x}", pose.region_hash),
            "foot": v3(pose.foot),
            "facing": [pose.facing.x, pose.facing.y],
            "layer": pose.layer,
            "projection_distance_m": pose.projection_distance_m,
            "checks": pose_json(&result.attempts.last().expect("a success has an attempt").report, &world),
        }),
        _ => Value::Null,
    };
    let attempts: Vec<Value> = result
        .attempts
        .iter()
        .map(|attempt| {
            json!({
                "fragment": attempt.fragment,
                "foot": v3(attempt.report.foot),
                "failure": attempt.report.failure(),
            })
        })
        .collect();
    let start = start_json(&scenario, &snapshot, &record, &result, &world)?;
    if command.svg.is_some() || command.png.is_some() {
        let mut drawer = Picture::new();
        draw_target(&record, &result, &world, &mut drawer);
        let caption = format!(
            "{}: {verdict}, {} fragment(s), {} candidate(s)",
            command.scenario.display(),
            fragments.len(),
            attempts.len()
        );
        write_picture(
            &drawer,
            command.svg.as_deref(),
            command.png.as_deref(),
            640,
            &caption,
        )?;
    }
    if command.json {
        let report = json!({
            "verdict": verdict,
            "fragments": fragments,
            "chosen": chosen,
            "attempts": attempts,
            "start": start,
        });
        writeln!(out, "{report}")?;
        return Ok(());
    }
    writeln!(out, "verdict: {verdict}")?;
    for fragment in &result.region.fragments {
        writeln!(
            out,
            "fragment {}: x in [{:.4}, {:.4}], bounded by: {}",
            fragment.id,
            fragment.x_extent.0,
            fragment.x_extent.1,
            fragment.active_labels().join("; ")
        )?;
    }
    for (index, attempt) in result.attempts.iter().enumerate() {
        let report = &attempt.report;
        writeln!(
            out,
            "candidate {index} (fragment {:?}) at ({:.4}, {:.4}, {:.4}): distance {:.4} m, facing dot {}, {}",
            attempt.fragment,
            report.foot.x,
            report.foot.y,
            report.foot.z,
            report.distance_m,
            report
                .facing_dot
                .map_or("in place".to_owned(), |dot| format!("{dot:.4}")),
            report
                .failure()
                .map_or("passed".to_owned(), |f| format!("fails {f}")),
        )?;
        if let Some(sight) = &report.sight {
            for crossing in &sight.crossings {
                writeln!(
                    out,
                    "  sight crosses {} at ({:.4}, {:.4}, {:.4}){}",
                    world.name(crossing.shape).unwrap_or("?"),
                    crossing.point.x,
                    crossing.point.y,
                    crossing.point.z,
                    if crossing.blocked { ": blocked" } else { "" }
                )?;
            }
        }
        if let Some(probe) = &report.probe {
            writeln!(
                out,
                "  probe: extension {:.5} m, nearest obstacle clearance {}, contact error {:.5} m",
                probe.extension_m,
                probe
                    .worst_obstacle
                    .map_or("none".to_owned(), |(id, c)| format!(
                        "{:.5} m ({})",
                        c,
                        world.name(id).unwrap_or("?")
                    )),
                probe.contact_error_m
            )?;
        }
    }
    if !start.is_null() {
        writeln!(out, "start: {start}")?;
    }
    Ok(())
}
