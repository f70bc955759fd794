//! Spec 001's station keeping on a conveyor belt (h3, h4): the correction law, the capability
//! report, the stand fact's invalidation, Recovering's deadline and the new generation,
//! integrated step by step as the spec does: a tick is 0.1 s, the belt runs at +1 m/s along
//! x, the target is fixed at X = 0, and each step's velocity relative to the belt goes
//! through the crowd's own acceleration limit (`integrate_velocity`, 0.6 m/s² here) with
//! the world displacement of a constant acceleration over the step.

use glam::{Vec2, Vec3};
use waymark::crowd::internals::{HoldKeeper, HoldObservation, integrate_velocity};
use waymark::crowd::{FactChange, FilterId, HoldFailure, HoldPhase, HoldPolicy, StepRequest};
use waymark::mesh::{PolyRef, TileGeneration, TileSlot};

const DT: f32 = 0.1;
const BELT: Vec3 = Vec3::new(1.0, 0.0, 0.0);
const TARGET: Vec3 = Vec3::ZERO;
const ACCELERATION: f32 = 0.6;

/// Spec 001's policy: Kp 2, cap 0.2, a 0.6, deadband 0.005; enter 0.01, exit 0.02, speed
/// 0.01; Recovering for 30 ticks.
const POLICY: HoldPolicy = HoldPolicy::SPEC_EXAMPLE;

/// A body on the belt: its world position along x and its velocity relative to the belt.
#[derive(Clone, Copy, Debug)]
struct Body {
    x: f32,
    relative: Vec2,
}

impl Body {
    fn world_velocity(&self) -> Vec3 {
        Vec3::new(self.relative.x, 0.0, self.relative.y) + BELT
    }

    fn foot(&self) -> Vec3 {
        Vec3::new(self.x, 0.0, 0.0)
    }

    /// One step toward `desired` (relative to the belt) under the relative speed limit;
    /// returns the world displacement.
    fn step(&mut self, desired: Vec2, relative_speed_limit: f32) -> f32 {
        let request = StepRequest {
            dt: DT,
            foot: self.foot(),
            polygon: PolyRef::new(TileGeneration(1), TileSlot(0), 0).unwrap(),
            velocity: self.relative,
            desired,
            speed_limit: relative_speed_limit,
            acceleration_limit: ACCELERATION,
            gradient: Vec2::ZERO,
            support: 1,
            support_velocity: Vec3::X,
            support_angular_velocity_rad_s: 0.0,
            filter: FilterId::DEFAULT,
        };
        let before = self.world_velocity().x;
        self.relative = integrate_velocity(&request);
        let displacement = (before + self.world_velocity().x) / 2.0 * DT;
        self.x += displacement;
        displacement
    }

    fn seen(&self, tick: u64) -> HoldObservation {
        HoldObservation {
            tick,
            target: TARGET,
            target_velocity: Vec3::ZERO,
            foot: self.foot(),
            velocity: self.world_velocity(),
            checks_pass: true,
        }
    }
}

/// Pushed to X = 0.03 and back at zero world velocity (relative -1 on the belt).
fn pushed() -> Body {
    Body {
        x: 0.03,
        relative: Vec2::new(-1.0, 0.0),
    }
}

#[test]
fn h3_the_correction_is_minus_0_06_world_and_the_first_step_ends_at_0_027() {
    let mut body = pushed();
    // Carrying alone would keep it at 0.03: the correction adds -0.06 (Kp d = 0.06 is the
    // smallest of 0.06, the cap 0.2 and sqrt(2 a (d - deadband)) = 0.173).
    let world = POLICY.preferred_world_velocity(TARGET, Vec3::ZERO, body.foot());
    assert!((world.x - -0.06).abs() < 1e-6, "{world}");
    assert_eq!(world.y, 0.0);
    let mut keeper = HoldKeeper::new(POLICY).unwrap();
    let relative = keeper
        .preferred_relative_velocity(TARGET, Vec3::ZERO, body.foot(), BELT, 1.2)
        .unwrap();
    assert!((relative.x - -1.06).abs() < 1e-6, "{relative}");
    // The acceleration circle allows -1 to -1.06 in 0.1 s at 0.6 m/s²: a continuous
    // acceleration from world 0 to -0.06 moves the body -0.003 m, to X = 0.027, which the
    // next step reads (nothing writes X = 0 back).
    let displacement = body.step(relative, 1.2);
    assert!((displacement - -0.003).abs() < 1e-6, "{displacement}");
    assert!((body.x - 0.027).abs() < 1e-6, "{}", body.x);
    assert!((body.world_velocity().x - -0.06).abs() < 1e-6);
}

#[test]
fn h3_with_a_relative_cap_of_1_the_hold_reports_insufficient_capability() {
    let body = pushed();
    let mut keeper = HoldKeeper::new(POLICY).unwrap();
    // Walking at 1 relative to the belt cancels the carry; it cannot also correct.
    assert_eq!(
        keeper.preferred_relative_velocity(TARGET, Vec3::ZERO, body.foot(), BELT, 1.0),
        None
    );
    assert_eq!(
        keeper.phase(),
        HoldPhase::Failed(HoldFailure::CapabilityInsufficient)
    );
    assert_eq!(keeper.fact(), None);
    // A body already at the target on the same belt needs exactly the carry: capable.
    let mut at_target = HoldKeeper::new(POLICY).unwrap();
    let relative = at_target
        .preferred_relative_velocity(TARGET, Vec3::ZERO, TARGET, BELT, 1.0)
        .unwrap();
    assert_eq!(relative, Vec2::new(-1.0, 0.0));
}

#[test]
fn h4_the_push_invalidates_the_fact_at_once_and_step_9_reaches_0_003886_at_rest_a_new_generation() {
    let mut keeper = HoldKeeper::new(POLICY).unwrap();
    let mut body = Body {
        x: 0.0,
        relative: Vec2::new(-1.0, 0.0),
    };
    // Standing at the target at zero world velocity: the first fact.
    assert_eq!(keeper.observe(&body.seen(100)), FactChange::Established(1));
    assert_eq!(keeper.fact(), Some(1));

    // The 0.03 m push is past the exit threshold 0.02: invalidated in the same tick,
    // Recovering until tick + 30.
    body = pushed();
    assert_eq!(
        keeper.observe(&body.seen(101)),
        FactChange::Invalidated { deadline_tick: 131 }
    );
    assert_eq!(keeper.fact(), None);

    let mut established_at = None;
    for step in 1..=12u64 {
        let relative = keeper
            .preferred_relative_velocity(TARGET, Vec3::ZERO, body.foot(), BELT, 1.2)
            .unwrap();
        body.step(relative, 1.2);
        let change = keeper.observe(&body.seen(101 + step));
        if step == 9 {
            assert!((body.x - 0.003886).abs() < 1e-6, "step 9 at {}", body.x);
            assert!(body.world_velocity().length() < 1e-6);
            assert_eq!(change, FactChange::Established(2));
        }
        if let FactChange::Established(_) = change {
            established_at.get_or_insert(step);
        }
        if step < 9 {
            // Within the enter threshold from step 5 on (0.0098 m), but still moving.
            assert_eq!(change, FactChange::None, "step {step} at {}", body.x);
        }
    }
    assert_eq!(established_at, Some(9));
    assert_eq!(keeper.phase(), HoldPhase::Standing);
    // Inside the deadband the correction rests: the body stays at 0.003886.
    assert!((body.x - 0.003886).abs() < 1e-6);
}

#[test]
fn h4_the_recovering_deadline_is_set_once_and_a_hold_held_off_fails_when_it_passes() {
    let mut keeper = HoldKeeper::new(POLICY).unwrap();
    let standing = Body {
        x: 0.0,
        relative: Vec2::new(-1.0, 0.0),
    };
    keeper.observe(&standing.seen(0));
    assert_eq!(
        keeper.observe(&pushed().seen(10)),
        FactChange::Invalidated { deadline_tick: 40 }
    );
    // Held at 0.03 (something keeps pushing): later ticks never move the deadline.
    for tick in 11..40 {
        assert_eq!(keeper.observe(&pushed().seen(tick)), FactChange::None);
        assert_eq!(keeper.phase(), HoldPhase::Recovering { deadline_tick: 40 });
    }
    assert_eq!(
        keeper.observe(&pushed().seen(40)),
        FactChange::Failed(HoldFailure::DeadlinePassed)
    );
    // Failed stays failed: back at the target, no new fact.
    assert_eq!(keeper.observe(&standing.seen(41)), FactChange::None);
    assert_eq!(keeper.fact(), None);
}

#[test]
fn a_failed_interaction_check_invalidates_and_a_bad_policy_is_refused_by_field() {
    let mut keeper = HoldKeeper::new(POLICY).unwrap();
    let standing = Body {
        x: 0.0,
        relative: Vec2::new(-1.0, 0.0),
    };
    assert_eq!(
        keeper.observe(&standing.seen(0)),
        FactChange::Established(1)
    );
    let blocked = HoldObservation {
        checks_pass: false,
        ..standing.seen(1)
    };
    assert_eq!(
        keeper.observe(&blocked),
        FactChange::Invalidated { deadline_tick: 31 }
    );
    // Not re-established while the check fails, though in place and at rest.
    let still_blocked = HoldObservation {
        checks_pass: false,
        ..standing.seen(2)
    };
    assert_eq!(keeper.observe(&still_blocked), FactChange::None);
    assert_eq!(
        keeper.observe(&standing.seen(3)),
        FactChange::Established(2)
    );

    let cases = [
        (
            HoldPolicy {
                kp_per_s: 0.0,
                ..POLICY
            },
            "kp_per_s",
        ),
        (
            HoldPolicy {
                brake_budget_mps2: f32::NAN,
                ..POLICY
            },
            "brake_budget_mps2",
        ),
        (
            HoldPolicy {
                exit_m: 0.01,
                ..POLICY
            },
            "exit_m (not above enter_m)",
        ),
    ];
    for (policy, field) in cases {
        assert_eq!(
            HoldKeeper::new(policy).err().map(|(name, _)| name),
            Some(field)
        );
    }
}
