//! What the writer remembers of the trail's recent events, so that the lookups made inside a
//! commit (an Execute's decision, a decision by its idempotency key) read no index on the
//! commit path. It remembers every event with a decision id after its floor, up to
//! [`BOUND`] of them; past that it lets the oldest go and raises the floor. A lookup it cannot
//! answer (anything at or below the floor) goes to the index file up to its watermark and
//! scans the events between the watermark and the floor (`writer.rs`), so the answer is the
//! same either way; only its cost differs.

use std::collections::{HashMap, VecDeque};

use crate::trail::{Event, Kind};

/// How many events with a decision id are remembered: about 200 bytes each.
pub(super) const BOUND: usize = 32_768;

/// The recent events with a decision id, by decision id and by idempotency key.
#[derive(Debug)]
pub(super) struct Recent {
    /// By decision id: the events' seq and kind, in seq order.
    by_decision: HashMap<String, Vec<(i64, Kind)>>,
    /// Decisions by idempotency key: their seq, in order.
    by_key: HashMap<String, Vec<i64>>,
    /// What is remembered, in seq order: (seq, decision id, idempotency key).
    order: VecDeque<(i64, String, Option<String>)>,
    /// Every event after this seq that has a decision id is remembered.
    floor: i64,
    bound: usize,
}

impl Recent {
    /// Remembers what is appended after `head`, at most `bound` events.
    pub(super) fn new(head: i64, bound: usize) -> Self {
        Self {
            by_decision: HashMap::new(),
            by_key: HashMap::new(),
            order: VecDeque::new(),
            floor: head,
            bound: bound.max(1),
        }
    }

    /// Every event after this seq that has a decision id is remembered.
    pub(super) fn floor(&self) -> i64 {
        self.floor
    }

    /// Remembers an event just appended, with its idempotency key (of a decision).
    pub(super) fn remember(&mut self, event: &Event, key: Option<String>) {
        let Some(id) = event.record.decision_id.clone() else { return };
        self.by_decision.entry(id.clone()).or_default().push((event.seq, event.record.kind));
        if let Some(key) = &key {
            self.by_key.entry(key.clone()).or_default().push(event.seq);
        }
        self.order.push_back((event.seq, id, key));
        while self.order.len() > self.bound {
            let Some((seq, id, key)) = self.order.pop_front() else { break };
            remove(&mut self.by_decision, &id, |(at, _)| *at == seq);
            if let Some(key) = key {
                remove(&mut self.by_key, &key, |at| *at == seq);
            }
            self.floor = seq;
        }
    }

    /// Forgets what was remembered after `seq`: the events of a commit that failed.
    pub(super) fn forget_after(&mut self, seq: i64) {
        while let Some((at, id, key)) = self.order.back().cloned().filter(|(at, ..)| *at > seq) {
            self.order.pop_back();
            remove(&mut self.by_decision, &id, |(s, _)| *s == at);
            if let Some(key) = key {
                remove(&mut self.by_key, &key, |s| *s == at);
            }
        }
    }

    /// The remembered events of a decision id (after the floor), in seq order.
    pub(super) fn of_decision(&self, id: &str) -> &[(i64, Kind)] {
        self.by_decision.get(id).map_or(&[], Vec::as_slice)
    }

    /// The remembered decisions with an idempotency key (after the floor), in seq order.
    pub(super) fn of_key(&self, key: &str) -> &[i64] {
        self.by_key.get(key).map_or(&[], Vec::as_slice)
    }
}

/// Removes the entry `is` picks from `key`'s list, and the list once empty.
fn remove<T>(map: &mut HashMap<String, Vec<T>>, key: &str, is: impl Fn(&T) -> bool) {
    if let Some(list) = map.get_mut(key) {
        if let Some(at) = list.iter().position(is) {
            list.remove(at);
        }
        if list.is_empty() {
            map.remove(key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trail::{Chain, Record};

    fn event(seq: i64, kind: Kind, id: &str) -> Event {
        let mut record = Record::new(kind);
        record.decision_id = Some(id.to_owned());
        let (mut event, _) = Chain::default().link(record, String::new(), String::new());
        event.seq = seq;
        event
    }

    #[test]
    fn the_oldest_go_first_and_raise_the_floor() {
        let mut recent = Recent::new(10, 2);
        recent.remember(&event(11, Kind::Decision, "a"), Some("k".into()));
        recent.remember(&event(12, Kind::Decision, "b"), None);
        assert_eq!(recent.of_key("k"), &[11]);
        recent.remember(&event(13, Kind::Execution, "a"), None);
        assert_eq!(recent.floor(), 11);
        assert_eq!(recent.of_decision("a"), &[(13, Kind::Execution)]);
        assert!(recent.of_key("k").is_empty());
        recent.forget_after(12);
        assert!(recent.of_decision("a").is_empty());
        assert_eq!(recent.of_decision("b"), &[(12, Kind::Decision)]);
    }
}
