//! A scenario's timed commands given to the crowd, each traced with its answer.

use glam::Vec3;
use serde_json::{Value, json};
use waymark::crowd::{ConnectionWindow, Crowd, HoldPolicy};
use waymark::harness::HostWorld;
use waymark::ids::SupportId;

use crate::CliError;
use crate::target::build_record_of;

use super::report::{cancel_record, command_agent, command_name, identity, v3};
use super::spec::{CommandSpec, PolicySpec};
use super::{SavedGame, Sim};

impl Sim {
    /// Gives one command; returns its trace record. A command the crowd refuses is traced
    /// with the crowd's error and the run goes on; a name the scenario does not define
    /// stops it.
    pub(super) fn give(&mut self, tick: u64, command: &CommandSpec) -> Result<Value, CliError> {
        let result: Result<Value, String> = match command {
            CommandSpec::Move {
                agent,
                target,
                deadline_in_ticks,
                then_hold,
            } => {
                let id = self.agent(agent, tick)?;
                let target = Vec3::from(*target);
                if *then_hold && deadline_in_ticks.is_some() {
                    return Err(CliError::Usage(format!(
                        "tick {tick}: a move with `then_hold` takes no deadline"
                    )));
                }
                let issued = match deadline_in_ticks {
                    _ if *then_hold => self
                        .crowd
                        .request_move_then_hold(id, target, HoldPolicy::SPEC_EXAMPLE)
                        .map(|(order, hold)| {
                            json!({ "order": identity(order), "hold": identity(hold) })
                        }),
                    Some(ticks) => self
                        .crowd
                        .request_move_by(id, target, self.crowd.frame().saturating_add(*ticks))
                        .map(|order| json!({ "order": identity(order) })),
                    None => self
                        .crowd
                        .request_move(id, target)
                        .map(|order| json!({ "order": identity(order) })),
                };
                issued.map_err(|error| error.to_string())
            }
            CommandSpec::Velocity { agent, velocity } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .request_velocity(id, Vec3::from(*velocity))
                    .map(|order| json!({ "order": identity(order) }))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Cancel { agent } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .cancel(id)
                    .map(|record| json!({ "record": cancel_record(record) }))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Belt { support, velocity } => self
                .crowd
                .set_support_velocity(SupportId(*support), Vec3::from(*velocity))
                .map(|()| json!({}))
                .map_err(|error| error.to_string()),
            CommandSpec::Turntable {
                support,
                centre,
                angular_velocity_rad_s,
            } => self
                .crowd
                .set_support_rotation(
                    SupportId(*support),
                    Vec3::from(*centre),
                    *angular_velocity_rad_s,
                )
                .map(|()| json!({}))
                .map_err(|error| error.to_string()),
            CommandSpec::Release { agent } => {
                let id = self.agent(agent, tick)?;
                let hold = self.crowd.hold(id).ok().flatten().map(|hold| hold.order);
                match hold {
                    None => Err(format!("{agent} holds no pose")),
                    Some(hold) => self
                        .crowd
                        .release_hold(id, hold)
                        .map(|()| json!({ "hold": identity(hold) }))
                        .map_err(|error| error.to_string()),
                }
            }
            CommandSpec::Teleport { agent, position } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .teleport(id, Vec3::from(*position))
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Push { agent, by } => {
                let id = self.agent(agent, tick)?;
                self.crowd
                    .push(id, Vec3::from(*by))
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Hold {
                agent,
                target,
                kp_per_s,
                correction_cap_mps,
                brake_budget_mps2,
                position_deadband_m,
                enter_m,
                exit_m,
                speed_enter_mps,
                recovery_ticks,
            } => {
                let id = self.agent(agent, tick)?;
                let policy = PolicySpec {
                    kp_per_s: *kp_per_s,
                    correction_cap_mps: *correction_cap_mps,
                    brake_budget_mps2: *brake_budget_mps2,
                    position_deadband_m: *position_deadband_m,
                    enter_m: *enter_m,
                    exit_m: *exit_m,
                    speed_enter_mps: *speed_enter_mps,
                    recovery_ticks: *recovery_ticks,
                }
                .policy();
                self.crowd
                    .request_hold(id, Vec3::from(*target), policy)
                    .map(|order| json!({ "order": identity(order) }))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Interact {
                agent,
                target_shape,
                body,
                target,
                hold,
            } => {
                let id = self.agent(agent, tick)?;
                let record = build_record_of(target_shape, body, target, &self.world)?;
                let host = HostWorld {
                    collision: &self.world,
                    objects: &[],
                    fixed: &[],
                };
                self.crowd
                    .request_interaction(id, record, hold.policy(), &host)
                    .map(|(order, hold)| {
                        let foot = self
                            .crowd
                            .interaction(id)
                            .ok()
                            .flatten()
                            .map(|view| v3(view.foot));
                        json!({ "order": identity(order), "hold": identity(hold), "foot": foot })
                    })
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Add(agent) => match self.add(agent) {
                Ok(id) => Ok(json!({ "id": id.to_bits() })),
                Err(CliError::Crowd(error)) => Err(error.to_string()),
                Err(other) => return Err(other),
            },
            CommandSpec::Remove { agent } => {
                let id = self.agent(agent, tick)?;
                let removed = self.crowd.remove_agent(id);
                if removed.is_ok() {
                    self.agents.retain(|&(_, known)| known != id);
                    self.last.remove(&id);
                }
                removed
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Door { link, open } => {
                let &id = self.links.get(link).ok_or_else(|| {
                    CliError::Usage(format!("tick {tick}: no link named '{link}'"))
                })?;
                match self.mesh.set_link_open(id, *open) {
                    Ok(version) => {
                        self.crowd.set_mesh(&self.mesh);
                        Ok(json!({ "version": version.0 }))
                    }
                    Err(error) => Err(error.to_string()),
                }
            }
            CommandSpec::Obstacle { name, shape, area } => {
                self.place_obstacle(tick, name, shape.shape(), area.as_deref())?
            }
            CommandSpec::RemoveObstacle { name } => self.remove_obstacle(tick, name)?,
            CommandSpec::LinkWindow {
                link,
                first_open_frame,
                open_frames,
                period_frames,
            } => {
                let &id = self.links.get(link).ok_or_else(|| {
                    CliError::Usage(format!("tick {tick}: no link named '{link}'"))
                })?;
                let window = match (first_open_frame, open_frames, period_frames) {
                    (None, None, None) => None,
                    (Some(first), Some(open), Some(period)) => Some(ConnectionWindow {
                        first_open_frame: *first,
                        open_frames: *open,
                        period_frames: *period,
                    }),
                    _ => {
                        return Err(CliError::Usage(format!(
                            "tick {tick}: link_window takes first_open_frame, open_frames and \
                             period_frames together, or none of them"
                        )));
                    }
                };
                self.crowd
                    .set_link_window(id, window)
                    .map(|()| json!({}))
                    .map_err(|error| error.to_string())
            }
            CommandSpec::Save => {
                let bytes = self.crowd.save();
                let size = bytes.len();
                self.save = Some(SavedGame {
                    bytes,
                    agents: self.agents.clone(),
                    profiles: self.profiles.clone(),
                });
                Ok(json!({ "bytes": size }))
            }
            CommandSpec::Restore => match &self.save {
                None => Err("no save to restore".to_string()),
                Some(saved) => match Crowd::restore(&self.mesh, self.config, &saved.bytes) {
                    Ok(crowd) => {
                        self.crowd = crowd;
                        self.agents = saved.agents.clone();
                        self.profiles = saved.profiles.clone();
                        Ok(json!({ "epoch": self.crowd.epoch() }))
                    }
                    Err(error) => Err(error.to_string()),
                },
            },
        };
        let name = command_name(command);
        let mut record = json!({ "command": name });
        let fields = record.as_object_mut().expect("an object");
        if let Some(agent) = command_agent(command) {
            fields.insert("agent".into(), json!(agent));
        }
        match result {
            Ok(Value::Object(returned)) => fields.extend(returned),
            Ok(_) => {}
            Err(error) => {
                fields.insert("refused".into(), json!(error));
                self.refused
                    .push(json!({ "tick": tick, "command": name, "error": error }));
            }
        }
        Ok(record)
    }
}

/// Why a scenario cannot place obstacles.
fn no_cache(tick: u64) -> CliError {
    CliError::Usage(format!(
        "tick {tick}: obstacles need a level baked from a file (.obj, .gltf, .glb or the proving ground)"
    ))
}

impl Sim {
    /// Places an obstacle and rebuilds its tiles; the answer counts them.
    fn place_obstacle(
        &mut self,
        tick: u64,
        name: &str,
        shape: waymark::bake::tile_cache::ObstacleShape,
        area: Option<&str>,
    ) -> Result<Result<Value, String>, CliError> {
        use waymark::bake::tile_cache::ObstacleEffect;
        let effect = match area {
            None => ObstacleEffect::Cut,
            Some(area) => {
                ObstacleEffect::Area(waymark::ids::AreaId::parse(area).ok_or_else(|| {
                    CliError::Usage(format!(
                        "tick {tick}: '{area}' is not an area name or number"
                    ))
                })?)
            }
        };
        if self.obstacles.contains_key(name) {
            return Err(CliError::Usage(format!(
                "tick {tick}: obstacle '{name}' is in place already"
            )));
        }
        let cache = self.cache.as_mut().ok_or_else(|| no_cache(tick))?;
        let id = match cache.add_obstacle(&mut self.mesh, shape, effect) {
            Ok(id) => id,
            Err(error) => return Ok(Err(error.to_string())),
        };
        let rebuilt = cache.update(&mut self.mesh, usize::MAX)?;
        self.obstacles.insert(name.to_owned(), id);
        self.crowd.set_mesh(&self.mesh);
        Ok(Ok(json!({ "tiles_rebuilt": rebuilt.committed.len() })))
    }

    /// Takes an obstacle away and rebuilds its tiles.
    fn remove_obstacle(
        &mut self,
        tick: u64,
        name: &str,
    ) -> Result<Result<Value, String>, CliError> {
        let id = *self
            .obstacles
            .get(name)
            .ok_or_else(|| CliError::Usage(format!("tick {tick}: no obstacle named '{name}'")))?;
        let cache = self.cache.as_mut().ok_or_else(|| no_cache(tick))?;
        if let Err(error) = cache.remove_obstacle(&mut self.mesh, id) {
            return Ok(Err(error.to_string()));
        }
        let rebuilt = cache.update(&mut self.mesh, usize::MAX)?;
        self.obstacles.remove(name);
        self.crowd.set_mesh(&self.mesh);
        Ok(Ok(json!({ "tiles_rebuilt": rebuilt.committed.len() })))
    }
}
