//! Station keeping (spec 001, 站位保持): the correction law that brings a body back to its
//! stand pose and keeps it there on a moving support, the stand fact with its generations,
//! and Recovering with a deadline no wake-up or restore extends.
//!
//! Stage: crowd runtime, a law over one held agent. Inputs, each tick: the target's world
//! position and velocity (a fixed target's is zero; a target on a platform moves with it),
//! the actual step-end foot position and world velocity, the support's velocity, the
//! agent's largest relative speed, and whether the interaction checks pass. Outputs: the
//! preferred velocity relative to the support for the next step (which then goes through
//! the same acceleration limit and boundary as walking: [`integrate_velocity`]), and the
//! fact's changes.
//!
//! The law: with `dVec` the horizontal part of `q - x` and `d` its length, the preferred
//! horizontal world velocity is `projectHorizontal(wTarget) + normalize(dVec) * c`, where
//! `c = min(Kp d, correctionCap, sqrt(2 a max(d - positionDeadband, 0)))` (zero when `d` is
//! zero): carry the target's motion, and correct toward it no faster than the braking
//! budget `a` can stop within the deadband. The relative preferred velocity is that minus
//! the support's; one faster than the agent can walk relative to its support means the
//! hold cannot correct (`CapabilityInsufficient`): cancelling the carry is not restoring
//! the position.
//!
//! The fact: established (a new generation) when the position error is within the enter
//! threshold, the full 3-D velocity relative to the target within the speed threshold, and
//! the interaction checks pass; invalidated at once when the error passes the exit
//! threshold or a check fails, entering Recovering with the deadline tick + N set on first
//! entry; failed when the deadline passes without a new fact.
//!
//! Released (a mode exit, `Crowd::release_hold`): the fact ends at once and is never
//! established again, while the law still keeps the body on the pose until the hold is
//! cancelled.
//!
//! Invariants: generations only grow; a fact is valid only between its establishment and
//! the next invalidation or release; a failed hold stays failed.
//!
//! The crowd runs it for agents given [`Crowd::request_hold`](crate::crowd::Crowd::request_hold)
//! or whose [`Crowd::request_move_then_hold`](crate::crowd::Crowd::request_move_then_hold)
//! arrived (`step.rs`, `keep_holds`), and for interactions near their pose
//! (`interaction.rs`, whose checks at the actual foot are the observation's `checks_pass`
//! and whose moving target gives its velocity), on static ground or on a surface-velocity
//! support (a belt, `Crowd::set_support_velocity`: the support's velocity is subtracted,
//! the body's world velocity is its relative one plus the belt's). Rotating and
//! translating platforms carry the hold too (`crowd_platforms`). Spec 001's h3 and h4 are tested on the law with
//! the spec's continuous step curve (`tests/spec_001_hold.rs`) and in the crowd
//! (`tests/crowd_hold.rs`, h3 on a belt).
//!
//! [`integrate_velocity`]: crate::crowd::integrate_velocity

use glam::{Vec2, Vec3};

use crate::crowd::codec::RestoreError;
use crate::crowd::codec::{Reader, Saved, Writer, saved_struct};

/// How a hold corrects and judges its stand (spec 001's 保持策略).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldPolicy {
    /// Correction gain, 1/s: the correction speed per metre of error.
    pub kp_per_s: f32,
    /// Fastest correction, m/s.
    pub correction_cap_mps: f32,
    /// Braking budget of the correction, m/s²: it is never faster than a stop within the
    /// deadband allows.
    pub brake_budget_mps2: f32,
    /// Error left uncorrected, metres.
    pub position_deadband_m: f32,
    /// Error within which a fact may be established, metres.
    pub enter_m: f32,
    /// Error past which the fact is invalidated, metres (above `enter_m`: the gap keeps a
    /// body at the edge from flickering).
    pub exit_m: f32,
    /// Speed relative to the target within which a fact may be established, m/s.
    pub speed_enter_mps: f32,
    /// Ticks Recovering may last before the hold fails.
    pub recovery_ticks: u64,
}

impl HoldPolicy {
    /// Spec 001's example policy (its h3 and h4): Kp 2 /s, correction cap 0.2 m/s, braking
    /// budget 0.6 m/s², deadband 5 mm; enter 1 cm, exit 2 cm, at rest within 1 cm/s; 30
    /// ticks to recover.
    pub const SPEC_EXAMPLE: HoldPolicy = HoldPolicy {
        kp_per_s: 2.0,
        correction_cap_mps: 0.2,
        brake_budget_mps2: 0.6,
        position_deadband_m: 0.005,
        enter_m: 0.01,
        exit_m: 0.02,
        speed_enter_mps: 0.01,
        recovery_ticks: 30,
    };

    /// The first field out of range, with its value: every value finite and not negative,
    /// the gain and the cap above zero, `exit_m` above `enter_m`.
    pub fn invalid_field(&self) -> Option<(&'static str, f32)> {
        let fields = [
            ("kp_per_s", self.kp_per_s, true),
            ("correction_cap_mps", self.correction_cap_mps, true),
            ("brake_budget_mps2", self.brake_budget_mps2, false),
            ("position_deadband_m", self.position_deadband_m, false),
            ("enter_m", self.enter_m, false),
            ("exit_m", self.exit_m, true),
            ("speed_enter_mps", self.speed_enter_mps, false),
        ];
        for (field, value, positive) in fields {
            let bad = !value.is_finite() || value < 0.0 || (positive && value == 0.0);
            if bad {
                return Some((field, value));
            }
        }
        if !(self.exit_m > self.enter_m) {
            return Some(("exit_m (not above enter_m)", self.exit_m));
        }
        None
    }

    /// The correction speed for an error of `distance_m`.
    pub fn correction_speed(&self, distance_m: f32) -> f32 {
        let braking =
            (2.0 * self.brake_budget_mps2 * (distance_m - self.position_deadband_m).max(0.0))
                .sqrt();
        (self.kp_per_s * distance_m)
            .min(self.correction_cap_mps)
            .min(braking)
    }

    /// The preferred horizontal world velocity `(x, z)` of a body at `foot` holding
    /// `target`, which moves at `target_velocity`.
    pub fn preferred_world_velocity(
        &self,
        target: Vec3,
        target_velocity: Vec3,
        foot: Vec3,
    ) -> Vec2 {
        let error = Vec2::new(target.x - foot.x, target.z - foot.z);
        let carry = Vec2::new(target_velocity.x, target_velocity.z);
        carry + error.normalize_or_zero() * self.correction_speed(error.length())
    }
}

/// What the crowd shows of an agent's hold ([`Crowd::hold`](crate::crowd::Crowd::hold)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldView {
    /// The hold order's identity.
    pub order: crate::crowd::agents::RequestId,
    /// The stand point, in the world.
    pub target: Vec3,
    /// Where the hold is.
    pub phase: HoldPhase,
    /// The valid fact's generation, if one holds.
    pub fact: Option<u32>,
}

/// Where a hold is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HoldPhase {
    /// Arrived, the first fact not yet established.
    Settling,
    /// The fact holds.
    Standing,
    /// The fact was invalidated; the hold corrects until it is established again or the
    /// deadline (a tick) passes.
    Recovering {
        /// The tick past which the hold fails.
        deadline_tick: u64,
    },
    /// The hold failed; its fact stays invalid.
    Failed(HoldFailure),
    /// Released for a mode exit ([`Crowd::release_hold`](crate::crowd::Crowd::release_hold)):
    /// no fact any more, none established again; the body is still kept on the pose
    /// (while the host's interaction is cleaned up) until the hold is cancelled.
    Released,
}

/// Why a hold failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HoldFailure {
    /// Correcting needs a speed relative to the support above the agent's limit.
    CapabilityInsufficient,
    /// Recovering passed its deadline.
    DeadlinePassed,
}

/// What a tick's observation changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FactChange {
    /// Nothing.
    None,
    /// A fact was established, of this generation.
    Established(u32),
    /// The fact was invalidated; the hold recovers until the deadline.
    Invalidated {
        /// The tick past which the hold fails.
        deadline_tick: u64,
    },
    /// The hold failed.
    Failed(HoldFailure),
    /// The fact ended for a mode exit (the hold released, or cancelled while its fact
    /// held): no new interaction side effect may rely on it.
    Released,
}

/// The step-end state a hold observes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldObservation {
    /// The tick.
    pub tick: u64,
    /// The stand pose's point in the world now.
    pub target: Vec3,
    /// Its world velocity.
    pub target_velocity: Vec3,
    /// The actual foot position.
    pub foot: Vec3,
    /// The actual world velocity (3-D: sliding down is not standing).
    pub velocity: Vec3,
    /// Whether the interaction checks pass at the actual pose.
    pub checks_pass: bool,
}

/// One agent's hold: its policy, phase and fact generation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldKeeper {
    policy: HoldPolicy,
    phase: HoldPhase,
    /// The last fact's generation (0: none yet).
    generation: u32,
}

impl HoldKeeper {
    /// A hold that has just taken its mover (settling, no fact yet). A policy out of range
    /// is refused by field.
    pub fn new(policy: HoldPolicy) -> Result<HoldKeeper, (&'static str, f32)> {
        match policy.invalid_field() {
            Some(bad) => Err(bad),
            None => Ok(HoldKeeper {
                policy,
                phase: HoldPhase::Settling,
                generation: 0,
            }),
        }
    }

    /// The policy.
    pub fn policy(&self) -> &HoldPolicy {
        &self.policy
    }

    /// The phase.
    pub fn phase(&self) -> HoldPhase {
        self.phase
    }

    /// The valid fact's generation, if one holds.
    pub fn fact(&self) -> Option<u32> {
        (self.phase == HoldPhase::Standing).then_some(self.generation)
    }

    /// Judges the fact on a step's actual end state.
    pub fn observe(&mut self, seen: &HoldObservation) -> FactChange {
        let error = Vec2::new(seen.target.x - seen.foot.x, seen.target.z - seen.foot.z).length();
        let relative_speed = (seen.velocity - seen.target_velocity).length();
        let policy = self.policy;
        match self.phase {
            HoldPhase::Failed(_) | HoldPhase::Released => FactChange::None,
            HoldPhase::Standing => {
                if error > policy.exit_m || !seen.checks_pass {
                    let deadline_tick = seen.tick + policy.recovery_ticks;
                    self.phase = HoldPhase::Recovering { deadline_tick };
                    FactChange::Invalidated { deadline_tick }
                } else {
                    FactChange::None
                }
            }
            HoldPhase::Settling | HoldPhase::Recovering { .. } => {
                if error <= policy.enter_m
                    && relative_speed <= policy.speed_enter_mps
                    && seen.checks_pass
                {
                    self.generation += 1;
                    self.phase = HoldPhase::Standing;
                    return FactChange::Established(self.generation);
                }
                match self.phase {
                    HoldPhase::Recovering { deadline_tick } if seen.tick >= deadline_tick => {
                        self.fail(HoldFailure::DeadlinePassed)
                    }
                    _ => FactChange::None,
                }
            }
        }
    }

    /// The preferred horizontal velocity `(x, z)` relative to the support for the next
    /// step, for a body at `foot` on a support moving at `support_velocity` that walks at
    /// most `max_relative_speed`; `None` when the hold has failed, or fails here because
    /// the correction needs more than the agent can walk.
    pub fn preferred_relative_velocity(
        &mut self,
        target: Vec3,
        target_velocity: Vec3,
        foot: Vec3,
        support_velocity: Vec3,
        max_relative_speed: f32,
    ) -> Option<Vec2> {
        if let HoldPhase::Failed(_) = self.phase {
            return None;
        }
        let world = self
            .policy
            .preferred_world_velocity(target, target_velocity, foot);
        let relative = world - Vec2::new(support_velocity.x, support_velocity.z);
        if relative.length() > max_relative_speed {
            self.fail(HoldFailure::CapabilityInsufficient);
            return None;
        }
        Some(relative)
    }

    /// Releases the hold for a mode exit: its fact (if one holds) ends now, and none is
    /// established again. Returns whether a fact ended. A failed hold stays failed.
    pub fn release(&mut self) -> bool {
        let had_fact = self.phase == HoldPhase::Standing;
        if !matches!(self.phase, HoldPhase::Failed(_)) {
            self.phase = HoldPhase::Released;
        }
        had_fact
    }

    fn fail(&mut self, why: HoldFailure) -> FactChange {
        self.phase = HoldPhase::Failed(why);
        FactChange::Failed(why)
    }
}

saved_struct!(HoldPolicy {
    kp_per_s,
    correction_cap_mps,
    brake_budget_mps2,
    position_deadband_m,
    enter_m,
    exit_m,
    speed_enter_mps,
    recovery_ticks,
});

impl Saved for HoldFailure {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        out.u8(match self {
            HoldFailure::CapabilityInsufficient => 0,
            HoldFailure::DeadlinePassed => 1,
        });
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        match input.u8()? {
            0 => Ok(HoldFailure::CapabilityInsufficient),
            1 => Ok(HoldFailure::DeadlinePassed),
            other => Err(input.malformed(format!("hold failure tag {other}"))),
        }
    }
}

impl Saved for HoldPhase {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        match *self {
            HoldPhase::Settling => out.u8(0),
            HoldPhase::Standing => out.u8(1),
            HoldPhase::Recovering { deadline_tick } => {
                out.u8(2);
                deadline_tick.write(out);
            }
            HoldPhase::Failed(why) => {
                out.u8(3);
                why.write(out);
            }
            HoldPhase::Released => out.u8(4),
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(match input.u8()? {
            4 => HoldPhase::Released,
            0 => HoldPhase::Settling,
            1 => HoldPhase::Standing,
            2 => HoldPhase::Recovering {
                deadline_tick: Saved::read(input)?,
            },
            3 => HoldPhase::Failed(Saved::read(input)?),
            other => return Err(input.malformed(format!("hold phase tag {other}"))),
        })
    }
}

impl Saved for FactChange {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        match *self {
            FactChange::None => out.u8(0),
            FactChange::Established(generation) => {
                out.u8(1);
                generation.write(out);
            }
            FactChange::Invalidated { deadline_tick } => {
                out.u8(2);
                deadline_tick.write(out);
            }
            FactChange::Failed(why) => {
                out.u8(3);
                why.write(out);
            }
            FactChange::Released => out.u8(4),
        }
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        Ok(match input.u8()? {
            4 => FactChange::Released,
            0 => FactChange::None,
            1 => FactChange::Established(Saved::read(input)?),
            2 => FactChange::Invalidated {
                deadline_tick: Saved::read(input)?,
            },
            3 => FactChange::Failed(Saved::read(input)?),
            other => return Err(input.malformed(format!("fact change tag {other}"))),
        })
    }
}

/// A keeper is saved whole; a policy out of range (a save no build writes) is refused.
impl Saved for HoldKeeper {
    const MIN_BYTES: usize = 1;
    fn write(&self, out: &mut Writer) {
        self.policy.write(out);
        self.phase.write(out);
        self.generation.write(out);
    }
    fn read(input: &mut Reader) -> Result<Self, RestoreError> {
        let policy = HoldPolicy::read(input)?;
        if let Some((field, value)) = policy.invalid_field() {
            return Err(input.malformed(format!("a hold policy's {field} of {value}")));
        }
        Ok(HoldKeeper {
            policy,
            phase: Saved::read(input)?,
            generation: Saved::read(input)?,
        })
    }
}
