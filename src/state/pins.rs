//! Tool definitions pinned on the trail, against a server that changes a tool after the user
//! trusted it (a "rug pull"): the first definition of a tool a harness reports is pinned (trust
//! on first use), a different one is recorded once as `changed` and is not in force, and a call
//! that names it requires approval, whose approval pins it. Pins live in memory, updated under
//! one lock, and are rebuilt from the trail's `tool_defined` events at start.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::request::{Actor, Definition};
use crate::store::{Reader, StoreError};
use crate::trail::Filter;
use crate::trail::{Event, Kind, Record};

/// The `status` of a `tool_defined` event that puts its definition in force.
const PINNED: &str = "pinned";
/// The `status` of one that records a definition not in force.
const CHANGED: &str = "changed";
/// The most changed definitions recorded per tool: a server that changes a tool at every
/// listing is held all the same, without growing the trail and this memory each time.
const MAX_CHANGES: usize = 100;

/// The definitions in force, and every one recorded.
#[derive(Debug, Default)]
pub struct Pins {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Tool name to the definition in force, and the seq of the event that pinned it: the
    /// latest pin on the trail is the one in force, whatever order commits are told in.
    pinned: HashMap<String, (i64, Definition)>,
    /// Every definition recorded, pinned or not, by tool and hash.
    recorded: HashMap<(String, String), Definition>,
    /// How many definitions of each tool are recorded.
    per_tool: HashMap<String, usize>,
}

/// What a listing of one tool's definition comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Listed {
    /// The definition in force.
    Same,
    /// Recorded now: the tool's first definition, pinned, or a change, not in force.
    Record(Box<Record>),
    /// A change recorded before, still not in force.
    Changed,
}

impl Pins {
    /// What one listed definition of `tool`, shown to `actor`, comes to. A record to make is
    /// in force only once committed and handed to [`Pins::committed`] (two listings at once
    /// may both record a new definition).
    pub fn list(
        &self,
        tool: &str,
        definition: &Definition,
        actor: &Actor,
        session: &str,
    ) -> Listed {
        let state = self.lock();
        let key = (tool.to_owned(), definition.hash.clone());
        let pinned = state.pinned.get(tool).map(|(_, pinned)| pinned.clone());
        let (status, reason) = match &pinned {
            Some(pinned) if pinned.hash == definition.hash => return Listed::Same,
            Some(_) if state.recorded.contains_key(&key) => return Listed::Changed,
            Some(_) if state.per_tool.get(tool).is_some_and(|&n| n >= MAX_CHANGES) => {
                tracing::warn!(
                    tool,
                    "a tool changed more than {MAX_CHANGES} times: the change is not recorded"
                );
                return Listed::Changed;
            }
            Some(pinned) => (
                CHANGED,
                format!(
                    "changed since pinned ({}): not in force until an approver accepts it",
                    definition.differences(pinned).join(", ")
                ),
            ),
            None => (PINNED, "first listed: pinned".to_owned()),
        };
        Listed::Record(Box::new(Record {
            session_id: (!session.is_empty()).then(|| session.to_owned()),
            actor_id: Some(actor.id.clone()),
            actor_kind: Some(actor.kind.as_str().to_owned()),
            ..record(tool, definition, status, reason)
        }))
    }

    /// The parts in which the definition `hash` of `tool` differs from the one in force;
    /// `None` when it is the one in force, or the tool has none pinned.
    pub fn changed(&self, tool: &str, hash: &str) -> Option<Vec<String>> {
        let state = self.lock();
        let (_, pinned) = state.pinned.get(tool)?;
        if pinned.hash == hash {
            return None;
        }
        let listed = state.recorded.get(&(tool.to_owned(), hash.to_owned()));
        Some(listed.map_or_else(|| vec!["definition".to_owned()], |d| d.differences(pinned)))
    }

    /// The hash of `tool`'s definition in force, if it has one.
    pub fn pinned(&self, tool: &str) -> Option<String> {
        self.lock().pinned.get(tool).map(|(_, pinned)| pinned.hash.clone())
    }

    /// Whether `tool` has a definition in force.
    pub fn is_pinned(&self, tool: &str) -> bool {
        self.lock().pinned.contains_key(tool)
    }

    /// The record that pins the definition `hash` of `tool` as `approver` accepted it by
    /// approving `decision_id`; `None` when it is in force already. A definition never
    /// recorded (its listing could not be) is pinned with no parts to compare.
    pub fn acceptance(
        &self,
        tool: &str,
        hash: &str,
        approver: &str,
        decision_id: &str,
    ) -> Option<Record> {
        let state = self.lock();
        if state.pinned.get(tool).is_some_and(|(_, pinned)| pinned.hash == hash) {
            return None;
        }
        let unknown = || Definition { hash: hash.to_owned(), parts: Default::default() };
        let definition = state.recorded.get(&(tool.to_owned(), hash.to_owned())).cloned();
        let reason = format!("accepted by `{approver}`, who approved a call that named it: pinned");
        Some(Record {
            decision_id: Some(decision_id.to_owned()),
            actor_id: Some(approver.to_owned()),
            actor_kind: Some("user".to_owned()),
            ..record(tool, &definition.unwrap_or_else(unknown), PINNED, reason)
        })
    }

    /// Puts in force what a committed `tool_defined` event says.
    pub fn committed(&self, event: &Event) {
        let Some((tool, definition)) = definition(&event.record) else { return };
        let mut state = self.lock();
        let later = state.pinned.get(&tool).is_none_or(|(seq, _)| *seq < event.seq);
        if event.record.status.as_deref() == Some(PINNED) && later {
            state.pinned.insert(tool.clone(), (event.seq, definition.clone()));
        }
        let key = (tool, definition.hash.clone());
        if !state.recorded.contains_key(&key) {
            *state.per_tool.entry(key.0.clone()).or_default() += 1;
        }
        state.recorded.insert(key, definition);
    }

    /// Reads the trail's `tool_defined` events, in order; returns how many tools are pinned.
    pub async fn rebuild(&self, reader: &Reader) -> Result<usize, StoreError> {
        reader.scan(&Filter::of_kind(Kind::ToolDefined), |event| self.committed(&event)).await?;
        Ok(self.lock().pinned.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // A panic under the lock leaves maps that are still whole: keep using them.
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A `tool_defined` record: the definition's hash as `args_hash`, its parts' as `request`.
fn record(tool: &str, definition: &Definition, status: &str, reason: String) -> Record {
    Record {
        tool: Some(tool.to_owned()),
        args_hash: Some(definition.hash.clone()),
        // INVARIANT: a map of strings serializes.
        request: serde_json::to_string(&definition.parts).ok(),
        status: Some(status.to_owned()),
        reason: Some(reason),
        ..Record::new(Kind::ToolDefined)
    }
}

/// The tool and definition a `tool_defined` record holds.
fn definition(record: &Record) -> Option<(String, Definition)> {
    let parts = serde_json::from_str(record.request.as_deref()?).ok()?;
    Some((record.tool.clone()?, Definition { hash: record.args_hash.clone()?, parts }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::ActorKind;

    fn definition(hash: char, description: &str) -> Definition {
        let parts = [("description".to_owned(), description.repeat(64))].into();
        Definition { hash: hash.to_string().repeat(64), parts }
    }

    fn actor() -> Actor {
        Actor { id: "agent".into(), kind: ActorKind::Agent, delegation_chain: Vec::new() }
    }

    /// `record` as the trail's event number `seq`.
    fn at(seq: i64, record: &Record) -> Event {
        let (event, _) =
            crate::trail::Chain::default().link(record.clone(), "e".into(), "t".into());
        Event { seq, ..event }
    }

    #[test]
    fn the_first_definition_is_pinned_and_a_change_recorded_once_and_held() {
        let pins = Pins::default();
        let Listed::Record(first) = pins.list("t", &definition('a', "1"), &actor(), "s") else {
            panic!("the first listing is recorded")
        };
        assert_eq!(first.status.as_deref(), Some("pinned"));
        pins.committed(&at(1, &first));
        assert_eq!(pins.list("t", &definition('a', "1"), &actor(), "s"), Listed::Same);

        let Listed::Record(change) = pins.list("t", &definition('b', "2"), &actor(), "s") else {
            panic!("a change is recorded")
        };
        assert_eq!(change.status.as_deref(), Some("changed"));
        assert!(
            change.reason.as_deref().unwrap().starts_with("changed since pinned (description)")
        );
        pins.committed(&at(2, &change));
        assert_eq!(pins.list("t", &definition('b', "2"), &actor(), "s"), Listed::Changed);
        assert_eq!(pins.changed("t", &"b".repeat(64)), Some(vec!["description".into()]));
        assert_eq!(pins.changed("t", &"a".repeat(64)), None);
        assert_eq!(pins.changed("other", &"a".repeat(64)), None);
    }

    #[test]
    fn an_acceptance_pins_the_change_once_committed() {
        let pins = Pins::default();
        for (seq, listed) in [(1, definition('a', "1")), (2, definition('b', "2"))] {
            let Listed::Record(record) = pins.list("t", &listed, &actor(), "") else { panic!() };
            pins.committed(&at(seq, &record));
        }
        let new = "b".repeat(64);

        let accepted = pins.acceptance("t", &new, "bob", "d1").unwrap();
        pins.committed(&at(3, &accepted));

        assert_eq!(accepted.decision_id.as_deref(), Some("d1"));
        assert_eq!(pins.changed("t", &new), None);
        assert_eq!(pins.changed("t", &"a".repeat(64)), Some(vec!["description".into()]));
        assert!(pins.acceptance("t", &new, "bob", "d2").is_none(), "in force already");
        // An older pin told late does not displace the newer one.
        let old = pins.acceptance("t", &"a".repeat(64), "carol", "d0").unwrap();
        pins.committed(&at(2, &old));
        assert_eq!(pins.changed("t", &new), None);
        // A definition never recorded is pinned without parts when accepted.
        let unknown = pins.acceptance("t", &"c".repeat(64), "bob", "d3").unwrap();
        assert_eq!(unknown.request.as_deref(), Some("{}"));
    }
}
