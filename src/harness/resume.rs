//! A run saved part-way and resumed: the game's side of a run (which plan each agent
//! follows, how far along it is) beside the crowd's own saved bytes.
//!
//! Stage: harness. [`RunState`] is what `run_crowd` keeps between frames besides the
//! crowd; [`RunState::to_bytes`] writes it with the crowd's [`Crowd::save`] in one file,
//! [`RunState::from_bytes`] reads it back, refusing a file saved for other plans or crowd
//! settings (the run would continue, but not as the one it claims to continue).
//!
//! Format: the magic `WMRUN\0\0\0`, a `u32` version, a `u32` CRC-32 of the rest, the
//! plans' and the settings' fingerprints (`u64` each), the plan of each agent (count, then
//! agent id bits and plan index), each plan's next target (count, then `u32`s), the agents
//! still to arrive once (count, then id bits), then the crowd's bytes to the end.
//! Little-endian.

use std::collections::{HashMap, HashSet};

use super::run::AgentPlan;
use crate::crowd::{AgentId, Crowd, CrowdError, Fnv, RestoreError};

const MAGIC: [u8; 8] = *b"WMRUN\0\0\0";
const VERSION: u32 = 1;

/// The game's side of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunState {
    /// The plan each agent follows, by index.
    pub plan_of: HashMap<AgentId, usize>,
    /// Per plan, the target it walks to now.
    pub next_target: Vec<usize>,
    /// Agents that have not yet arrived once.
    pub not_yet_arrived: HashSet<AgentId>,
}

/// Why a saved run was not resumed.
#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    /// Not a saved run, or one of another version.
    #[error("not a saved run of this version (it starts with {found:02x?})")]
    NotARun {
        /// The first bytes found (up to twelve).
        found: Vec<u8>,
    },
    /// The run's own part is cut short or was changed after the save.
    #[error(
        "the saved run is truncated or corrupted (its checksum is {stored:#010x}, its bytes give {computed:#010x})"
    )]
    Corrupted {
        /// The checksum in the file.
        stored: u32,
        /// The checksum of the bytes found.
        computed: u32,
    },
    /// Saved for other agents, starts or targets (another level, seed, count or CSV).
    #[error(
        "the saved run is of other plans (fingerprint {saved:016x}; these give {now:016x}): resume with the level and flags it was saved with"
    )]
    OtherPlans {
        /// The saved plans' fingerprint.
        saved: u64,
        /// This run's.
        now: u64,
    },
    /// Saved under other crowd settings.
    #[error(
        "the saved run was made under other crowd settings (its configuration, step length or level as baked: fingerprint {saved:016x}; these give {now:016x}): resume with the flags it was saved with"
    )]
    OtherSettings {
        /// The saved settings' fingerprint.
        saved: u64,
        /// This run's.
        now: u64,
    },
    /// An agent named in the run's part that the crowd does not have, or a plan index past
    /// the plans.
    #[error("the saved run names {what}, which its crowd or plans do not have")]
    Inconsistent {
        /// What was named.
        what: String,
    },
    /// The crowd's bytes were refused.
    #[error(transparent)]
    Restore(#[from] RestoreError),
    /// The run itself failed.
    #[error(transparent)]
    Crowd(#[from] CrowdError),
}

/// A fingerprint of every start and target (FNV-1a over their bits).
pub(crate) fn plans_fingerprint(plans: &[AgentPlan]) -> u64 {
    let mut hash = Fnv::default();
    for plan in plans {
        hash.mix(plan.targets.len() as u64);
        for point in std::iter::once(&plan.start).chain(&plan.targets) {
            for axis in point.to_array() {
                hash.mix(u64::from(axis.to_bits()));
            }
        }
    }
    hash.0
}

/// A [`RunOptions::settings_tag`](super::RunOptions::settings_tag) for settings described
/// by `text` (say, a CLI's level flags as typed): its bytes' FNV-1a hash.
pub fn settings_tag(text: &str) -> u64 {
    let mut hash = Fnv::default();
    for byte in text.bytes() {
        hash.mix(u64::from(byte));
    }
    hash.0
}

/// A fingerprint of the run's settings: the crowd's configuration as printed (every field,
/// floats to the bit), the step length, whether agents are sent on and by which rule, and
/// the caller's [`RunOptions::settings_tag`](super::RunOptions::settings_tag).
pub(crate) fn settings_fingerprint(crowd: &Crowd, options: &super::RunOptions) -> u64 {
    let mut hash = Fnv::default();
    for byte in format!("{:?}", crowd.config()).bytes() {
        hash.mix(u64::from(byte));
    }
    hash.mix(u64::from(options.dt_s.to_bits()));
    hash.mix(u64::from(options.retarget) | u64::from(options.comparison_rule) << 1);
    hash.mix(options.settings_tag);
    hash.0
}

impl RunState {
    /// The run's part and the crowd's bytes, in one file.
    pub fn to_bytes(
        &self,
        crowd: &Crowd,
        plans: &[AgentPlan],
        options: &super::RunOptions,
    ) -> Vec<u8> {
        let mut body = Vec::new();
        let mut put = |value: u64, bytes: usize| {
            body.extend_from_slice(&value.to_le_bytes()[..bytes]);
        };
        put(plans_fingerprint(plans), 8);
        put(settings_fingerprint(crowd, options), 8);
        let mut plan_of: Vec<(AgentId, usize)> =
            self.plan_of.iter().map(|(&a, &p)| (a, p)).collect();
        plan_of.sort_unstable();
        put(plan_of.len() as u64, 4);
        for (agent, plan) in plan_of {
            put(agent.to_bits(), 8);
            put(plan as u64, 4);
        }
        put(self.next_target.len() as u64, 4);
        for &next in &self.next_target {
            put(next as u64, 4);
        }
        let mut waiting: Vec<AgentId> = self.not_yet_arrived.iter().copied().collect();
        waiting.sort_unstable();
        put(waiting.len() as u64, 4);
        for agent in waiting {
            put(agent.to_bits(), 8);
        }
        body.extend_from_slice(&crowd.save());
        let mut bytes = Vec::with_capacity(16 + body.len());
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&body).to_le_bytes());
        bytes.extend_from_slice(&body);
        bytes
    }

    /// The run's part of `bytes` (checked against `plans`) and the crowd's bytes.
    pub fn from_bytes<'a>(
        bytes: &'a [u8],
        plans: &[AgentPlan],
    ) -> Result<(RunState, u64, &'a [u8]), ResumeError> {
        if bytes.len() < 16 || bytes[..8] != MAGIC || bytes[8..12] != VERSION.to_le_bytes() {
            return Err(ResumeError::NotARun {
                found: bytes[..bytes.len().min(12)].to_vec(),
            });
        }
        let stored = u32::from_le_bytes(bytes[12..16].try_into().expect("4 bytes"));
        let body = &bytes[16..];
        let computed = crc32fast::hash(body);
        if stored != computed {
            return Err(ResumeError::Corrupted { stored, computed });
        }
        let mut at = 0;
        // The checksum matched, so a short body is a faulty writer's: refuse it the same way.
        let mut take = |len: usize| -> Result<u64, ResumeError> {
            let field = body
                .get(at..at + len)
                .ok_or(ResumeError::Corrupted { stored, computed })?;
            at += len;
            let mut word = [0u8; 8];
            word[..len].copy_from_slice(field);
            Ok(u64::from_le_bytes(word))
        };
        let saved_plans = take(8)?;
        let now = plans_fingerprint(plans);
        if saved_plans != now {
            return Err(ResumeError::OtherPlans {
                saved: saved_plans,
                now,
            });
        }
        let settings = take(8)?;
        let agent = |bits: u64| {
            AgentId::from_bits(bits).ok_or_else(|| ResumeError::Inconsistent {
                what: format!("agent bits {bits:#x}"),
            })
        };
        let plan_index = |index: u64| {
            usize::try_from(index)
                .ok()
                .filter(|&index| index < plans.len())
                .ok_or_else(|| ResumeError::Inconsistent {
                    what: format!("plan {index} of {}", plans.len()),
                })
        };
        let mut state = RunState::default();
        for _ in 0..take(4)? {
            let id = agent(take(8)?)?;
            let plan = plan_index(take(4)?)?;
            state.plan_of.insert(id, plan);
        }
        for _ in 0..take(4)? {
            state.next_target.push(take(4)? as usize);
        }
        if state.next_target.len() != plans.len() {
            return Err(ResumeError::Inconsistent {
                what: format!("{} plans' targets", state.next_target.len()),
            });
        }
        for _ in 0..take(4)? {
            state.not_yet_arrived.insert(agent(take(8)?)?);
        }
        Ok((state, settings, &body[at..]))
    }
}
