//! Replaying an ordered log: the logged commands given again at their frames, each step's
//! path results read from the log and put through the same commit point, every decision
//! and outcome checked against the logged one.
//!
//! Stage: crowd runtime, in place of the host's commands and the path searches. Input: a
//! crowd in the state the log starts from and the log. Output: the same run, or a
//! [`ReplayError`] naming the first entry that differs.

use crate::crowd::events::CrowdEvent;
use crate::crowd::interactions::interaction::InteractionWorld;
use crate::crowd::runtime::Crowd;
use crate::crowd::supports::controller::Controller;

use crate::crowd::log::{
    LogEntry, LogRecord, LoggedResult, ReplayError, ReplayFeed, mesh_fingerprint,
};
use std::collections::VecDeque;

/// Runs a log against a crowd (see the module documentation).
///
/// ```
/// # use glam::Vec3;
/// # use waymark::crowd::{AgentParams, Crowd, CrowdConfig, KinematicController, Replay};
/// # use waymark::mesh::{NavMesh, TileData, WalkablePolygon, blob::BakeParams};
/// # let strip = WalkablePolygon::ground(vec![
/// #     Vec3::new(0.0, 0.0, 0.0), Vec3::new(10.0, 0.0, 0.0),
/// #     Vec3::new(10.0, 0.0, 2.0), Vec3::new(0.0, 0.0, 2.0),
/// # ]);
/// # let mut mesh = NavMesh::new(BakeParams::default());
/// # mesh.add_tiles(vec![TileData::from_walkable_polygons(&[strip]).unwrap()]).unwrap();
/// let config = CrowdConfig { ordered_log: true, ..CrowdConfig::default() };
/// let mut crowd = Crowd::new(&mesh, config).unwrap();
/// let agent = crowd.add_agent(Vec3::new(1.0, 0.0, 1.0), AgentParams::DETOUR_REFERENCE).unwrap();
/// crowd.request_move(agent, Vec3::new(9.0, 0.0, 1.0)).unwrap();
/// for _ in 0..60 {
///     crowd.step(1.0 / 30.0, &mut KinematicController).unwrap();
/// }
/// let mut log = Vec::new();
/// crowd.drain_log(&mut log);
///
/// // The same run again, its path read from the log (no search runs).
/// let mut again = Crowd::new(&mesh, config).unwrap();
/// let mut replay = Replay::start(&mut again, log).unwrap();
/// for _ in 0..60 {
///     replay.step(&mut again, 1.0 / 30.0, &mut KinematicController, &mut |_, _| {}).unwrap();
/// }
/// assert_eq!(again.position(agent).unwrap(), crowd.position(agent).unwrap());
/// ```
pub struct Replay {
    /// The logged commands still to give, in order.
    commands: VecDeque<LogEntry>,
    last_frame: u64,
}

impl Replay {
    /// Puts `crowd` in replay mode for `entries` (a log drained from a crowd that started
    /// in `crowd`'s state). Refused if the log does not start at the crowd's frontier or
    /// is out of order.
    pub fn start(crowd: &mut Crowd, entries: Vec<LogEntry>) -> Result<Replay, ReplayError> {
        if let Some(first) = entries.first() {
            if first.sequence != crowd.log_frontier() {
                return Err(ReplayError::NotAtFrontier {
                    log_starts: first.sequence,
                    frontier: crowd.log_frontier(),
                });
            }
        }
        let mut feed = ReplayFeed::default();
        let mut commands = VecDeque::new();
        let mut previous: Option<&LogEntry> = None;
        for entry in &entries {
            if let Some(previous) = previous {
                if entry.sequence != previous.sequence + 1 || entry.frame < previous.frame {
                    return Err(ReplayError::OutOfOrder {
                        sequence: entry.sequence,
                        frame: entry.frame,
                    });
                }
            }
            previous = Some(entry);
        }
        let last_frame = entries.last().map_or(crowd.frame(), |entry| entry.frame);
        for entry in entries {
            match entry.record {
                LogRecord::Result {
                    agent,
                    query,
                    goal,
                    answer,
                    decision,
                } => feed.results.push_back((
                    entry.sequence,
                    entry.frame,
                    LoggedResult {
                        agent,
                        query,
                        goal,
                        answer,
                        decision,
                    },
                )),
                LogRecord::Ended {
                    agent,
                    order,
                    outcome,
                } => feed
                    .outcomes
                    .push_back((entry.sequence, entry.frame, agent, order, outcome)),
                // Commands, and each expiry after the mesh change that caused it (given
                // with it).
                _ => commands.push_back(entry),
            }
        }
        crowd.log.replay = Some(feed);
        Ok(Replay {
            commands,
            last_frame,
        })
    }

    /// The frame of the log's last entry: a replay stepped past it has replayed everything.
    pub fn last_frame(&self) -> u64 {
        self.last_frame
    }

    /// Gives the commands logged for the crowd's current frame, then steps it. A logged mesh
    /// change is handed to `set_mesh` with its fingerprint: the host calls
    /// [`Crowd::set_mesh`] with the mesh in the state it had then (a door closed, a tile
    /// rebuilt), and the replay checks the fingerprint.
    pub fn step(
        &mut self,
        crowd: &mut Crowd,
        dt: f32,
        controller: &mut (impl Controller + Send),
        set_mesh: &mut dyn FnMut(&mut Crowd, u64),
    ) -> Result<Vec<CrowdEvent>, ReplayError> {
        self.step_in(crowd, dt, controller, None, set_mesh)
    }

    /// [`Replay::step`] with the host's world as it was at this frame (as
    /// [`Crowd::step_with`]): a log with interaction orders replays only so.
    pub fn step_with(
        &mut self,
        crowd: &mut Crowd,
        dt: f32,
        controller: &mut (impl Controller + Send),
        world: &dyn InteractionWorld,
        set_mesh: &mut dyn FnMut(&mut Crowd, u64),
    ) -> Result<Vec<CrowdEvent>, ReplayError> {
        self.step_in(crowd, dt, controller, Some(world), set_mesh)
    }

    fn step_in(
        &mut self,
        crowd: &mut Crowd,
        dt: f32,
        controller: &mut (impl Controller + Send),
        world: Option<&dyn InteractionWorld>,
        set_mesh: &mut dyn FnMut(&mut Crowd, u64),
    ) -> Result<Vec<CrowdEvent>, ReplayError> {
        while let Some(entry) = self.commands.front() {
            if entry.frame > crowd.frame() {
                break;
            }
            let entry = self.commands.pop_front().expect("looked at");
            if entry.frame < crowd.frame() {
                return Err(ReplayError::OutOfOrder {
                    sequence: entry.sequence,
                    frame: entry.frame,
                });
            }
            let command = &entry.record;
            if !command.is_command() {
                // An expiry not right after its mesh change.
                return Err(ReplayError::OutOfOrder {
                    sequence: entry.sequence,
                    frame: entry.frame,
                });
            }
            if let LogRecord::SetMesh { .. } = command {
                // The searches this change closed: the crowd's `set_mesh` takes them from
                // the feed instead of closing searches of its own (none run in replay).
                let mut expiries = Vec::new();
                while let Some(LogRecord::Expired {
                    agent,
                    query,
                    changed,
                }) = self.commands.front().map(|next| &next.record)
                {
                    expiries.push((*agent, *query, *changed));
                    self.commands.pop_front();
                }
                if let Some(feed) = crowd.log.replay.as_mut() {
                    feed.expiries = expiries;
                }
            }
            give(crowd, entry.sequence, entry.frame, command, world, set_mesh)?;
        }
        let events = crowd
            .step_in(dt, controller, world)
            .map_err(ReplayError::Step)?;
        if let Some(divergence) = crowd
            .log
            .replay
            .as_mut()
            .and_then(|feed| feed.divergence.take())
        {
            return Err(divergence);
        }
        Ok(events)
    }

    /// Ends replay mode: the crowd searches for its paths again from the next step.
    pub fn finish(self, crowd: &mut Crowd) {
        crowd.log.replay = None;
    }
}

/// Gives one logged command to the crowd; the identities it issues must be the logged ones.
fn give(
    crowd: &mut Crowd,
    sequence: u64,
    frame: u64,
    command: &LogRecord,
    world: Option<&dyn InteractionWorld>,
    set_mesh: &mut dyn FnMut(&mut Crowd, u64),
) -> Result<(), ReplayError> {
    let refused = |error| ReplayError::Refused { sequence, error };
    let differs = |logged: String, replayed: String| ReplayError::Diverged {
        sequence,
        frame,
        logged,
        replayed,
    };
    fn same<T: PartialEq + std::fmt::Debug>(
        logged: T,
        replayed: T,
        differs: impl Fn(String, String) -> ReplayError,
    ) -> Result<(), ReplayError> {
        if logged == replayed {
            Ok(())
        } else {
            Err(differs(format!("{logged:?}"), format!("{replayed:?}")))
        }
    }
    match command {
        &LogRecord::AddAgent {
            agent,
            position,
            params,
        } => same(
            agent,
            crowd.add_agent(position, params).map_err(refused)?,
            differs,
        ),
        &LogRecord::RemoveAgent { agent } => crowd.remove_agent(agent).map_err(refused),
        &LogRecord::Move {
            agent,
            order,
            target,
            deadline_frame,
        } => {
            let issued = match deadline_frame {
                Some(deadline) => crowd.request_move_by(agent, target, deadline),
                None => crowd.request_move(agent, target),
            };
            same(order, issued.map_err(refused)?, differs)
        }
        &LogRecord::Velocity {
            agent,
            order,
            velocity,
        } => same(
            order,
            crowd.request_velocity(agent, velocity).map_err(refused)?,
            differs,
        ),
        &LogRecord::Hold {
            agent,
            order,
            target,
            policy,
        } => same(
            order,
            crowd.request_hold(agent, target, policy).map_err(refused)?,
            differs,
        ),
        &LogRecord::ReserveHold {
            agent,
            hold,
            policy,
        } => {
            if crowd.request(agent).ok().flatten().is_none() {
                return Err(differs(
                    format!("a hold reserved beside {agent:?}'s move"),
                    "no move order".to_string(),
                ));
            }
            same(
                hold,
                crowd.reserve_hold(agent, policy, super::orders::commands::Logged::Yes),
                differs,
            )
        }
        LogRecord::Interact {
            agent,
            order,
            hold,
            record,
            policy,
            foot,
        } => {
            let world = world.ok_or(ReplayError::NeedsWorld { sequence })?;
            let issued = crowd
                .request_interaction(*agent, (**record).clone(), *policy, world)
                .map_err(refused)?;
            same((*order, *hold), issued, differs)?;
            // The projection chose the same pose (or, like the logged run, none).
            let chosen = crowd
                .interaction(*agent)
                .map_err(refused)?
                .map(|view| view.foot);
            same(*foot, chosen, differs)
        }
        &LogRecord::Push { agent, by } => crowd.push(agent, by).map_err(refused),
        &LogRecord::SetSupportVelocity { support, velocity } => crowd
            .set_support_velocity(support, velocity)
            .map_err(refused),
        &LogRecord::SetSupportRotation {
            support,
            centre,
            angular_velocity_rad_s,
        } => crowd
            .set_support_rotation(support, centre, angular_velocity_rad_s)
            .map_err(refused),
        &LogRecord::SetLinkWindow { link, window } => {
            crowd.set_link_window(link, window).map_err(refused)
        }
        &LogRecord::SetPlatformMotion { support, motion } => {
            crowd.set_platform_motion(support, motion).map_err(refused)
        }
        &LogRecord::SetLinkDock { link, dock } => crowd.set_link_dock(link, dock).map_err(refused),
        &LogRecord::ReleaseHold { agent, hold } => crowd.release_hold(agent, hold).map_err(refused),
        &LogRecord::Cancel { agent, record } => {
            same(record, crowd.cancel(agent).map_err(refused)?, differs)
        }
        &LogRecord::Teleport { agent, position } => {
            crowd.teleport(agent, position).map_err(refused)
        }
        &LogRecord::SetParams { agent, params } => crowd.set_params(agent, params).map_err(refused),
        LogRecord::AddFilter {
            filter,
            query_filter,
        } => same(
            *filter,
            crowd
                .add_filter((**query_filter).clone())
                .map_err(refused)?,
            differs,
        ),
        &LogRecord::SetFilter { agent, filter } => crowd.set_filter(agent, filter).map_err(refused),
        &LogRecord::AddAvoidanceProfile { profile, avoidance } => same(
            profile,
            crowd.add_avoidance_profile(avoidance).map_err(refused)?,
            differs,
        ),
        &LogRecord::SetAvoidanceProfile { agent, profile } => {
            crowd.set_avoidance_profile(agent, profile).map_err(refused)
        }
        &LogRecord::BumpEpoch { epoch } => {
            crowd.bump_epoch();
            same(epoch, crowd.epoch(), differs)
        }
        &LogRecord::SetMesh { fingerprint } => {
            set_mesh(crowd, fingerprint);
            let given = mesh_fingerprint(crowd.snapshot());
            if given == fingerprint {
                Ok(())
            } else {
                Err(ReplayError::WrongMesh {
                    sequence,
                    logged: fingerprint,
                    given,
                })
            }
        }
        // Results, expiries and outcomes are checked where the step reaches them.
        LogRecord::Result { .. } | LogRecord::Expired { .. } | LogRecord::Ended { .. } => Ok(()),
    }
}
