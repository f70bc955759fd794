//! The ordered log as the crowd writes and drains it: each accepted command, each result at
//! the commit point and each outcome, in order ([`Crowd::drain_log`](crate::crowd::Crowd::drain_log)).
//!
//! Stage: crowd runtime. The records' types and the outbox live in the log room.

use crate::crowd::agents::AgentId;
use crate::crowd::agents::RequestId;
use crate::crowd::events::{CrowdEvent, Outcome};
use crate::crowd::log::{Decision, LogEntry, LogRecord, LoggedResult};
use crate::crowd::runtime::Crowd;
use crate::query::Validity;

impl Crowd {
    /// Appends `record` to the outbox if the crowd keeps the log.
    pub(crate) fn log(&mut self, record: impl FnOnce() -> LogRecord) {
        if self.config.ordered_log {
            self.log.outbox.push(LogEntry {
                sequence: self.log.frontier,
                frame: self.frame,
                record: record(),
            });
            self.log.frontier += 1;
        }
    }

    /// Moves the log's entries written since the last call to the end of `into`, in order
    /// (the outbox: a host persists them to replay the run or audit it). Empty unless
    /// [`CrowdConfig::ordered_log`](crate::crowd::CrowdConfig::ordered_log) is on.
    pub fn drain_log(&mut self, into: &mut Vec<LogEntry>) {
        into.append(&mut self.log.outbox);
    }

    /// The sequence number the next log entry will have; saved with the crowd, so a log
    /// kept from a save on starts here.
    pub fn log_frontier(&self) -> u64 {
        self.log.frontier
    }

    /// Whether the crowd steps in replay mode (see [`Replay`](crate::crowd::Replay)).
    pub fn replaying(&self) -> bool {
        self.log.replay.is_some()
    }

    /// Replay mode: this step's logged results, rebuilt for the commit point, each with the
    /// decision the log holds (checked by [`Crowd::check_decision`](crate::crowd::Crowd::check_decision)).
    pub(crate) fn logged_results(&mut self) -> Vec<(u64, LoggedResult)> {
        let frame = self.frame;
        let Some(feed) = self.log.replay.as_mut() else {
            return Vec::new();
        };
        let mut results = Vec::new();
        while let Some((sequence, _, result)) =
            feed.results.front().filter(|(_, at, _)| *at == frame)
        {
            results.push((*sequence, result.clone()));
            feed.results.pop_front();
        }
        results
    }

    /// Replay mode: the searches a mesh change given now closed, as the log says.
    pub(crate) fn logged_expiries(&mut self) -> Vec<(AgentId, RequestId, Validity)> {
        self.log
            .replay
            .as_mut()
            .map(|feed| std::mem::take(&mut feed.expiries))
            .unwrap_or_default()
    }

    /// Replay mode: the decision taken must be the logged one.
    pub(crate) fn check_decision(&mut self, sequence: u64, logged: Decision, taken: Decision) {
        let frame = self.frame;
        if logged != taken {
            if let Some(feed) = self.log.replay.as_mut() {
                feed.diverge(sequence, frame, format!("{logged:?}"), format!("{taken:?}"));
            }
        }
    }

    /// At the end of a step, before its events are returned: each outcome is logged, and
    /// in replay mode checked against the log.
    pub(crate) fn log_outcomes(&mut self, events: &[CrowdEvent]) {
        for event in events {
            if let &CrowdEvent::OrderEnded {
                agent,
                order,
                outcome,
            } = event
            {
                self.log(|| LogRecord::Ended {
                    agent,
                    order,
                    outcome,
                });
                self.check_outcome(agent, order, outcome);
            }
        }
        // Outcomes the log holds for this step and the replay did not reach.
        let frame = self.frame;
        if let Some(feed) = self.log.replay.as_mut() {
            if let Some(&(sequence, at, agent, order, outcome)) = feed.outcomes.front() {
                if at <= frame {
                    feed.diverge(
                        sequence,
                        at,
                        format!("{agent:?} {order:?} ended {outcome:?}"),
                        "no such outcome".to_string(),
                    );
                }
            }
            if let Some((sequence, at, result)) = feed.results.front() {
                if *at <= frame {
                    let (sequence, at) = (*sequence, *at);
                    let logged = format!("{:?} answered {:?}", result.agent, result.query);
                    feed.diverge(sequence, at, logged, "no such result".to_string());
                }
            }
        }
    }

    fn check_outcome(&mut self, agent: AgentId, order: RequestId, outcome: Outcome) {
        let frame = self.frame;
        let Some(feed) = self.log.replay.as_mut() else {
            return;
        };
        let replayed = format!("{agent:?} {order:?} ended {outcome:?}");
        match feed.outcomes.pop_front() {
            Some((sequence, at, logged_agent, logged_order, logged_outcome)) => {
                if (at, logged_agent, logged_order, logged_outcome)
                    != (frame, agent, order, outcome)
                {
                    let logged = format!(
                        "{logged_agent:?} {logged_order:?} ended {logged_outcome:?} at frame {at}"
                    );
                    feed.diverge(sequence, frame, logged, replayed);
                }
            }
            None => feed.diverge(u64::MAX, frame, "the log's end".to_string(), replayed),
        }
    }
}
