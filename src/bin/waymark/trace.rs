//! The replay trace of `waymark crowd --trace` and `waymark scenario --trace`: what
//! `waymark view` plays back.
//!
//! JSON lines. The first line is the header: the format and its version, the level's name,
//! the step length, the quantisation of positions and velocities, the status names, and the
//! navigation mesh as drawn from above ([`mesh_json`]). Every other line is one frame:
//!
//! - `frame`: the frame number, from 1;
//! - `added` (when agents appear): `[trace index, agent index, agent generation, radius m]`
//!   for each agent seen for the first time; trace indices count from 0, never reused;
//! - `live` (when the set of agents changes): the trace indices present, in the order of
//!   the frame's records;
//! - `agents`: the records of the `live` agents, base64 of [`RECORD_BYTES`] bytes each,
//!   little-endian: x and z as u16 steps of `position_step_m` from the header's origin, the
//!   velocity's x and z as i16 cm/s, height as a u8 step of `height_step_m` above the
//!   origin's, and the status (its index in the header's `statuses`, bit 7 set where the
//!   position lies beyond the quantised range or a velocity component beyond ±327.67 m/s,
//!   and was clamped to it);
//! - `events` (when any): `[trace index, event name]` for each crowd event of the step,
//!   with a third entry for an order's end (its outcome) and a block (what blocked);
//! - `corridors` (when any changed): `[trace index, [polygon...]]`, the agent's new
//!   corridor as indices into the header mesh's polygons (`[]` when it has none).
//!
//! Ten bytes an agent a frame, a third more in base64: 10,000 agents over 300 frames are
//! about 40 MB. Binary records inside JSON keep the file one format, readable line by line
//! by any JSON reader, while the positions cost no more than a binary file's.

use std::collections::HashMap;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use glam::Vec3;
use serde_json::{Value, json};
use waymark::crowd::{AgentId, AgentStatus, Crowd, CrowdEvent};
use waymark::mesh::{Snapshot, TilePoly, TileSlot};

use crate::CliError;
use crate::sim::report::{blocked_by, outcome_name};

/// The trace format's name, in the header's `format`.
pub const FORMAT: &str = "waymark-trace";
/// The trace format's version, in the header's `version`.
pub const VERSION: u32 = 1;
/// Bytes of one agent's record in a frame's `agents`.
pub const RECORD_BYTES: usize = 10;

/// Every status, in the order of their indices in a record.
const STATUSES: [(AgentStatus, &str); 11] = [
    (AgentStatus::Idle, "idle"),
    (AgentStatus::WaitingForPath, "waiting_for_path"),
    (AgentStatus::Moving, "moving"),
    (AgentStatus::VelocityControlled, "velocity_controlled"),
    (AgentStatus::CrossingLink, "crossing_link"),
    (AgentStatus::Arrived, "arrived"),
    (AgentStatus::PartialArrived, "partial_arrived"),
    (AgentStatus::Failed, "failed"),
    (AgentStatus::Cancelling, "cancelling"),
    (AgentStatus::Holding, "holding"),
    (AgentStatus::Quarantined, "quarantined"),
];

/// Set in a record's status byte when its position or velocity was clamped into the
/// quantised range.
const CLAMPED_BIT: u8 = 0x80;

/// The navigation mesh as `waymark view` draws it, in world metres (to the centimetre):
/// polygon corners as `[x, z]` pairs in `vertices`; per polygon its `area`, its support
/// `layer` (0: the ground), the offset of its corners in `corners` (`start`, one more entry
/// than polygons) and a bit per edge with nothing across it (`walls`); each live tile's
/// bounds as `[min x, min z, max x, max z]`; each link as `[start x, start z, end x, end z,
/// open, bidirectional]`. Polygons are numbered tile slot by tile slot; `polygon_base`
/// gives the first number of each slot's tile.
pub fn mesh_json(snapshot: &Snapshot) -> (Value, Vec<u32>) {
    let centimetres = |value: f32| (f64::from(value) * 100.0).round() / 100.0;
    let data = snapshot.data();
    let (mut vertices, mut areas, mut layers, mut starts, mut corners, mut walls, mut tiles) =
        (vec![], vec![], vec![], vec![0u32], vec![], vec![], vec![]);
    let mut polygon_base = vec![0u32; data.slots.len()];
    let mut polygons = 0u32;
    let mut low = Vec3::splat(f32::INFINITY);
    let mut high = Vec3::splat(f32::NEG_INFINITY);
    for (slot, base) in polygon_base.iter_mut().enumerate() {
        *base = polygons;
        let Some((tile, _)) = snapshot.live_slot(TileSlot(slot as u16)) else {
            continue;
        };
        let tile = &tile.data;
        let first_vertex = (vertices.len() / 2) as u32;
        for index in 0..tile.vertices.len() {
            let vertex = tile.vertex(index as u16);
            (low, high) = (low.min(vertex), high.max(vertex));
            vertices.extend([centimetres(vertex.x), centimetres(vertex.z)]);
        }
        for polygon in &tile.polygons {
            let indices = polygon.vertex_indices();
            corners.extend(indices.iter().map(|&v| first_vertex + u32::from(v)));
            starts.push(corners.len() as u32);
            areas.push(polygon.area);
            layers.push(polygon.layer);
            let wall_bits = polygon.neighbours[..indices.len()]
                .iter()
                .enumerate()
                .filter(|&(_, &neighbour)| neighbour == TilePoly::NO_NEIGHBOUR)
                .fold(0u32, |bits, (edge, _)| bits | 1 << edge);
            walls.push(wall_bits);
            polygons += 1;
        }
        let (min, max) = (tile.header.bounds_min, tile.header.bounds_max);
        tiles.push([
            centimetres(min[0]),
            centimetres(min[2]),
            centimetres(max[0]),
            centimetres(max[2]),
        ]);
    }
    let links: Vec<Value> = data
        .links
        .iter()
        .map(|link| {
            let (start, end) = (link.desc.start, link.desc.end);
            json!([
                centimetres(start.x),
                centimetres(start.z),
                centimetres(end.x),
                centimetres(end.z),
                u8::from(link.open),
                u8::from(link.desc.bidirectional)
            ])
        })
        .collect();
    if polygons == 0 {
        (low, high) = (Vec3::ZERO, Vec3::ZERO);
    }
    let mesh = json!({
        "bounds": [low.x, low.y, low.z, high.x, high.y, high.z],
        "vertices": vertices,
        "area": areas,
        "layer": layers,
        "start": starts,
        "corners": corners,
        "walls": walls,
        "tiles": tiles,
        "links": links,
        "fingerprint": format!("{:016x}", snapshot.content_fingerprint()),
    });
    (mesh, polygon_base)
}

/// Writes a crowd's frames as a replay trace.
pub struct TraceWriter {
    path: PathBuf,
    out: BufWriter<std::fs::File>,
    snapshot: Snapshot,
    polygon_base: Vec<u32>,
    origin: Vec3,
    position_step_m: f32,
    height_step_m: f32,
    /// Trace index of every agent seen.
    trace_index: HashMap<AgentId, u32>,
    /// The live agents' trace indices as the last frame wrote them.
    live: Vec<u32>,
    /// Per trace index, the corridor last written (its address and length), to write a
    /// corridor only when the agent's changes.
    corridor_written: Vec<Option<(usize, usize)>>,
    frame: u64,
    records: Vec<u8>,
    bytes_written: u64,
}

impl TraceWriter {
    /// Creates `path` and writes the header of a trace of `crowd` on the level `level`.
    pub fn create(path: &Path, crowd: &Crowd, level: &str, dt_s: f32) -> Result<Self, CliError> {
        let write_error = |source| CliError::Write {
            path: path.to_owned(),
            source,
        };
        let file = std::fs::File::create(path).map_err(write_error)?;
        let snapshot = crowd.snapshot();
        let (mesh, polygon_base) = mesh_json(snapshot);
        let bounds: Vec<f32> = serde_json::from_value(mesh["bounds"].clone())
            .expect("the mesh's bounds are six numbers");
        // A margin around the mesh: platforms and links carry agents a little beyond it.
        let margin_m = 2.0;
        let origin = Vec3::new(bounds[0], bounds[1], bounds[2]) - Vec3::splat(margin_m);
        let extent = Vec3::new(bounds[3], bounds[4], bounds[5]) + Vec3::splat(margin_m) - origin;
        let position_step_m = (extent.x.max(extent.z) / f32::from(u16::MAX)).max(1e-4);
        let height_step_m = (extent.y / f32::from(u8::MAX)).max(1e-3);
        let header = json!({
            "format": FORMAT,
            "version": VERSION,
            "level": level,
            "dt_s": dt_s,
            "origin": [origin.x, origin.y, origin.z],
            "position_step_m": position_step_m,
            "height_step_m": height_step_m,
            "velocity_step_m_s": 0.01,
            "record_bytes": RECORD_BYTES,
            "statuses": STATUSES.iter().map(|&(_, name)| name).collect::<Vec<_>>(),
            "mesh": mesh,
        });
        let mut writer = TraceWriter {
            path: path.to_owned(),
            out: BufWriter::new(file),
            snapshot: snapshot.clone(),
            polygon_base,
            origin,
            position_step_m,
            height_step_m,
            trace_index: HashMap::new(),
            live: Vec::new(),
            corridor_written: Vec::new(),
            frame: 0,
            records: Vec::new(),
            bytes_written: 0,
        };
        writer.write_line(&header)?;
        Ok(writer)
    }

    fn write_line(&mut self, value: &Value) -> Result<(), CliError> {
        let line = serde_json::to_string(value).expect("trace values serialise");
        self.bytes_written += line.len() as u64 + 1;
        writeln!(self.out, "{line}").map_err(|source| CliError::Write {
            path: self.path.clone(),
            source,
        })
    }

    /// Writes one frame: the crowd after a step and that step's events.
    pub fn record(&mut self, crowd: &Crowd, events: &[CrowdEvent]) -> Result<(), CliError> {
        self.frame += 1;
        let mut views: Vec<_> = crowd.agents().collect();
        let mut added = Vec::new();
        for view in &views {
            if !self.trace_index.contains_key(&view.id) {
                let index = self.trace_index.len() as u32;
                self.trace_index.insert(view.id, index);
                self.corridor_written.push(None);
                let radius_m = crowd.params(view.id).map_or(0.0, |params| params.radius_m);
                added.push(json!([
                    index,
                    view.id.index(),
                    view.id.generation(),
                    (f64::from(radius_m) * 100.0).round() / 100.0
                ]));
            }
        }
        // Records in trace-index order: the crowd reorders its agents for locality, and a
        // stable order keeps `live` unwritten while no agent comes or goes.
        views.sort_unstable_by_key(|view| self.trace_index[&view.id]);
        let live: Vec<u32> = views
            .iter()
            .map(|view| self.trace_index[&view.id])
            .collect();
        let mut line = json!({ "frame": self.frame });
        if !added.is_empty() {
            line["added"] = Value::Array(added);
        }
        if live != self.live {
            line["live"] = json!(live);
            self.live = live;
        }
        self.records.clear();
        let mut corridors = Vec::new();
        for view in &views {
            self.push_record(view.position, view.velocity, view.status);
            let index = self.trace_index[&view.id];
            let corridor = crowd.corridor(view.id).ok().flatten();
            let key =
                corridor.map(|corridor| (std::ptr::from_ref(corridor) as usize, corridor.len()));
            if key != self.corridor_written[index as usize] {
                self.corridor_written[index as usize] = key;
                let polygons: Vec<u32> = corridor
                    .map(|corridor| {
                        (0..corridor.len())
                            .filter_map(|step| corridor.polygon(&self.snapshot, step))
                            .map(|polygon| {
                                self.polygon_base[usize::from(polygon.slot().0)]
                                    + u32::from(polygon.polygon())
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                corridors.push(json!([index, polygons]));
            }
        }
        line["agents"] = json!(base64(&self.records));
        let events: Vec<Value> = events
            .iter()
            .filter_map(|event| {
                let (name, agent, detail) = event_name(event);
                let index = self.trace_index.get(&agent)?;
                Some(match detail {
                    Some(detail) => json!([index, name, detail]),
                    None => json!([index, name]),
                })
            })
            .collect();
        if !events.is_empty() {
            line["events"] = Value::Array(events);
        }
        if !corridors.is_empty() {
            line["corridors"] = Value::Array(corridors);
        }
        self.write_line(&line)
    }

    fn push_record(&mut self, position: Vec3, velocity: Vec3, status: AgentStatus) {
        let record = encode_record(
            position - self.origin,
            (self.position_step_m, self.height_step_m),
            velocity,
            status,
        );
        self.records.extend(record);
    }

    /// Flushes the file; returns its size in bytes and the frames written.
    pub fn finish(mut self) -> Result<(u64, u64), CliError> {
        self.out.flush().map_err(|source| CliError::Write {
            path: self.path.clone(),
            source,
        })?;
        Ok((self.bytes_written, self.frame))
    }
}

/// A trace written from inside a run's per-frame callback, which cannot return an error:
/// the file is created at the first frame (when the crowd exists) and the first failure is
/// kept for [`TraceRecorder::finish`], after which nothing more is written.
pub struct TraceRecorder<'a> {
    path: Option<&'a Path>,
    level: &'a str,
    dt_s: f32,
    writer: Option<TraceWriter>,
    failure: Option<CliError>,
}

impl<'a> TraceRecorder<'a> {
    /// A recorder writing to `path`, or doing nothing without one.
    pub fn new(path: Option<&'a Path>, level: &'a str, dt_s: f32) -> Self {
        TraceRecorder {
            path,
            level,
            dt_s,
            writer: None,
            failure: None,
        }
    }

    /// Records a frame (creating the file at the first).
    pub fn record(&mut self, crowd: &Crowd, events: &[CrowdEvent]) {
        let Some(path) = self.path else {
            return;
        };
        if self.failure.is_some() {
            return;
        }
        if self.writer.is_none() {
            match TraceWriter::create(path, crowd, self.level, self.dt_s) {
                Ok(writer) => self.writer = Some(writer),
                Err(failure) => {
                    self.failure = Some(failure);
                    return;
                }
            }
        }
        let writer = self.writer.as_mut().expect("created above");
        if let Err(failure) = writer.record(crowd, events) {
            self.failure = Some(failure);
        }
    }

    /// The trace's size in bytes and its frames, or the first failure; `None` without a
    /// path.
    pub fn finish(self) -> Result<Option<(u64, u64)>, CliError> {
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        self.writer.map(TraceWriter::finish).transpose()
    }
}

/// The line a command prints about the trace it wrote.
pub fn trace_line(path: &Path, bytes: u64, frames: u64) -> String {
    format!(
        "trace: {frames} frames, {:.1} MB, in {}",
        bytes as f64 / 1e6,
        path.display()
    )
}

/// An event's name in a trace, the agent it is about, and for an order's end its outcome
/// (for a block, what blocked).
pub fn event_name(event: &CrowdEvent) -> (&'static str, AgentId, Option<&'static str>) {
    let (name, agent) = match *event {
        CrowdEvent::Arrived { agent, .. } => ("arrived", agent),
        CrowdEvent::PartialArrived { agent, .. } => ("partial_arrived", agent),
        CrowdEvent::Blocked { agent, by, .. } => return ("blocked", agent, Some(blocked_by(by))),
        CrowdEvent::LinkStarted { agent, .. } => ("link_started", agent),
        CrowdEvent::LinkFinished { agent, .. } => ("link_finished", agent),
        CrowdEvent::Cancelled { agent, .. } => ("cancelled", agent),
        CrowdEvent::CancelFault { agent, .. } => ("cancel_fault", agent),
        CrowdEvent::RouteInvalidated { agent, .. } => ("route_invalidated", agent),
        CrowdEvent::NoPath { agent, .. } => ("no_path", agent),
        CrowdEvent::Quarantined { agent, .. } => ("quarantined", agent),
        CrowdEvent::StandFact { agent, .. } => ("stand_fact", agent),
        CrowdEvent::OrderEnded { agent, outcome, .. } => {
            return ("order_ended", agent, Some(outcome_name(outcome)));
        }
    };
    (name, agent, None)
}

/// Standard base64 (RFC 4648, with padding), what the browser's `atob` reads.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let triple = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for position in 0..4 {
            if position <= chunk.len() {
                out.push(char::from(
                    ALPHABET[(triple >> (18 - 6 * position) & 63) as usize],
                ));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// One agent's record (see the module doc) for a position relative to the trace's origin,
/// quantised by the trace's (position, height) steps in metres. The clamped bit is set when
/// the position lies beyond the quantised range or a velocity component beyond ±327.67 m/s:
/// either was clamped to fit.
fn encode_record(
    relative: Vec3,
    (position_step_m, height_step_m): (f32, f32),
    velocity: Vec3,
    status: AgentStatus,
) -> [u8; RECORD_BYTES] {
    let mut clamped = false;
    let mut quantise = |value: f32, step: f32, max: f32| {
        let steps = (value / step).round().clamp(0.0, max);
        clamped |= !(steps * step - value).abs().le(&step);
        steps
    };
    let x = quantise(relative.x, position_step_m, f32::from(u16::MAX)) as u16;
    let z = quantise(relative.z, position_step_m, f32::from(u16::MAX)) as u16;
    let y = quantise(relative.y, height_step_m, f32::from(u8::MAX)) as u8;
    let mut centimetres_per_s = |value: f32| {
        let exact = (value * 100.0).round();
        let fitted = exact.clamp(f32::from(i16::MIN), f32::from(i16::MAX));
        // (A NaN compares unequal: flagged, and written as 0.)
        clamped |= fitted != exact;
        fitted as i16
    };
    let velocity_x = centimetres_per_s(velocity.x);
    let velocity_z = centimetres_per_s(velocity.z);
    let status_index = STATUSES
        .iter()
        .position(|&(known, _)| known == status)
        .expect("every status is listed") as u8;
    let mut record = [0u8; RECORD_BYTES];
    record[0..2].copy_from_slice(&x.to_le_bytes());
    record[2..4].copy_from_slice(&z.to_le_bytes());
    record[4..6].copy_from_slice(&velocity_x.to_le_bytes());
    record[6..8].copy_from_slice(&velocity_z.to_le_bytes());
    record[8] = y;
    record[9] = status_index | if clamped { CLAMPED_BIT } else { 0 };
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64(plain.as_bytes()), encoded, "{plain:?}");
        }
    }

    #[test]
    fn a_record_flags_a_position_or_a_velocity_clamped_to_fit() {
        let steps = (0.01, 0.1);
        let inside = Vec3::new(3.0, 1.0, 5.0);
        let record = encode_record(inside, steps, Vec3::new(2.5, 0.0, -1.25), AgentStatus::Idle);
        assert_eq!(record[9] & CLAMPED_BIT, 0);
        assert_eq!(i16::from_le_bytes([record[4], record[5]]), 250);
        assert_eq!(i16::from_le_bytes([record[6], record[7]]), -125);
        // 400 m/s is beyond ±327.67 m/s: clamped and flagged.
        let fast = encode_record(inside, steps, Vec3::new(400.0, 0.0, 0.0), AgentStatus::Idle);
        assert_eq!(fast[9] & CLAMPED_BIT, CLAMPED_BIT);
        assert_eq!(i16::from_le_bytes([fast[4], fast[5]]), i16::MAX);
        let below = encode_record(
            Vec3::new(-1.0, 1.0, 5.0),
            steps,
            Vec3::ZERO,
            AgentStatus::Idle,
        );
        assert_eq!(below[9] & CLAMPED_BIT, CLAMPED_BIT);
        assert_eq!(u16::from_le_bytes([below[0], below[1]]), 0);
    }

    #[test]
    fn every_status_has_a_record_index_below_the_clamped_bit() {
        assert!(STATUSES.len() < usize::from(CLAMPED_BIT));
        let names: std::collections::HashSet<_> = STATUSES.iter().map(|(_, name)| name).collect();
        assert_eq!(names.len(), STATUSES.len());
    }
}
