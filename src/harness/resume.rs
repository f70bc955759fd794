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

use super::run::Plans;
use crate::crowd::{AgentId, Crowd, CrowdError, Fnv, RestoreError};

const MAGIC: [u8; 8] = *b"WMRUN\0\0\0";
const VERSION: u32 = 1;

/// The game's side of a run.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RunState {
    /// The plan each agent follows, by index.
    pub plan_of: ByAgent,
    /// Per plan, the target it walks to now.
    pub next_target: Vec<usize>,
    /// Agents that have not yet arrived once (the values unused).
    pub not_yet_arrived: ByAgent,
}

/// A number per agent, kept by the agent's index with the generation it was stored
/// under: 8 bytes an agent, where a hash map from ids takes about 22 (a crowd numbers its
/// agents densely from 0, reusing the indices of removed ones).
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ByAgent {
    /// Per agent index: the generation stored (0: none) and the number.
    entries: Vec<(u32, u32)>,
    count: usize,
}

impl ByAgent {
    /// An empty table with room for agents numbered below `agents`.
    pub fn with_capacity(agents: usize) -> ByAgent {
        ByAgent {
            entries: Vec::with_capacity(agents),
            count: 0,
        }
    }

    /// Keeps `value` for `agent` (replacing what it had). Its index must be below
    /// [`Crowd::AGENTS_MAX`], as every index a crowd issues is.
    pub fn insert(&mut self, agent: AgentId, value: u32) {
        let index = agent.index() as usize;
        debug_assert!(index < Crowd::AGENTS_MAX, "{agent} is not a crowd's");
        if index >= self.entries.len() {
            self.entries.resize(index + 1, (0, 0));
        }
        let entry = &mut self.entries[index];
        self.count += usize::from(entry.0 == 0); // generations start at 1
        *entry = (agent.generation(), value);
    }

    /// What `agent` has, if anything.
    pub fn get(&self, agent: AgentId) -> Option<u32> {
        self.entries
            .get(agent.index() as usize)
            .filter(|entry| entry.0 == agent.generation())
            .map(|entry| entry.1)
    }

    /// Forgets `agent`; whether it had anything.
    pub fn remove(&mut self, agent: AgentId) -> bool {
        match self.entries.get_mut(agent.index() as usize) {
            Some(entry) if entry.0 == agent.generation() => {
                *entry = (0, 0);
                self.count -= 1;
                true
            }
            _ => false,
        }
    }

    /// Whether no agent has anything.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Every agent with something, and what, in ascending id order.
    pub fn iter(&self) -> impl Iterator<Item = (AgentId, u32)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(index, &(generation, value))| {
                let bits = (u64::from(generation) << 32) | index as u64;
                AgentId::from_bits(bits).map(|agent| (agent, value))
            })
    }
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
pub(crate) fn plans_fingerprint(plans: &Plans) -> u64 {
    let mut hash = Fnv::default();
    for (start, targets) in plans.iter() {
        hash.mix(targets.len() as u64);
        for point in std::iter::once(&start).chain(targets) {
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
    pub fn to_bytes(&self, crowd: &Crowd, plans: &Plans, options: &super::RunOptions) -> Vec<u8> {
        let mut body = Vec::new();
        let mut put = |value: u64, bytes: usize| {
            body.extend_from_slice(&value.to_le_bytes()[..bytes]);
        };
        put(plans_fingerprint(plans), 8);
        put(settings_fingerprint(crowd, options), 8);
        // Ascending by index: an index holds one generation at a time, so this is id order.
        put(self.plan_of.count as u64, 4);
        for (agent, plan) in self.plan_of.iter() {
            put(agent.to_bits(), 8);
            put(u64::from(plan), 4);
        }
        put(self.next_target.len() as u64, 4);
        for &next in &self.next_target {
            put(next as u64, 4);
        }
        put(self.not_yet_arrived.count as u64, 4);
        for (agent, _) in self.not_yet_arrived.iter() {
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
        plans: &Plans,
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
        // An index no crowd issues is refused here, before a table is sized by it.
        let agent = |bits: u64| {
            AgentId::from_bits(bits)
                .filter(|agent| (agent.index() as usize) < Crowd::AGENTS_MAX)
                .ok_or_else(|| ResumeError::Inconsistent {
                    what: format!("agent bits {bits:#x}"),
                })
        };
        let plan_index = |index: u64| {
            u32::try_from(index)
                .ok()
                .filter(|&index| (index as usize) < plans.len())
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
            state.not_yet_arrived.insert(agent(take(8)?)?, 0);
        }
        Ok((state, settings, &body[at..]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(index: u32, generation: u32) -> AgentId {
        AgentId::from_bits((u64::from(generation) << 32) | u64::from(index)).unwrap()
    }

    #[test]
    fn a_table_by_agent_keeps_one_generation_an_index() {
        let mut table = ByAgent::with_capacity(4);
        table.insert(id(3, 1), 30);
        table.insert(id(0, 2), 7);
        assert_eq!(table.get(id(3, 1)), Some(30));
        assert_eq!(
            table.get(id(3, 2)),
            None,
            "another generation of the same index"
        );
        assert_eq!(table.get(id(9, 1)), None, "an index past the table");
        // A new generation replaces the old one in place: still two entries.
        table.insert(id(3, 5), 31);
        assert_eq!(table.get(id(3, 1)), None);
        assert_eq!(table.count, 2);
        assert_eq!(
            table.iter().collect::<Vec<_>>(),
            vec![(id(0, 2), 7), (id(3, 5), 31)],
            "ascending by index"
        );
        assert!(!table.remove(id(3, 1)), "a stale id removes nothing");
        assert!(table.remove(id(3, 5)));
        assert!(table.remove(id(0, 2)));
        assert!(table.is_empty());
        assert!(!table.remove(id(0, 2)));
    }

    #[test]
    fn flat_plans_hand_back_each_plan_as_pushed() {
        let point = |x: f32| glam::Vec3::new(x, 0.0, 0.0);
        let plans = Plans::from(vec![
            super::super::AgentPlan {
                start: point(1.0),
                targets: vec![point(2.0), point(3.0)],
            },
            super::super::AgentPlan {
                start: point(4.0),
                targets: vec![point(5.0)],
            },
        ]);
        assert_eq!(plans.len(), 2);
        assert_eq!(plans.start(1), Some(point(4.0)));
        assert_eq!(plans.targets(0), &[point(2.0), point(3.0)]);
        assert_eq!(plans.targets(1), &[point(5.0)]);
        assert_eq!(plans.start(2), None);
        assert!(plans.targets(2).is_empty());
        let walked: Vec<(glam::Vec3, usize)> = plans
            .iter()
            .map(|(start, targets)| (start, targets.len()))
            .collect();
        assert_eq!(walked, vec![(point(1.0), 2), (point(4.0), 1)]);
    }
}
