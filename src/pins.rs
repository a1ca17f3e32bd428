//! Tool definitions pinned on the trail, against a server that changes a tool after the user
//! trusted it (a "rug pull"): the first definition of a tool a harness reports is pinned (trust
//! on first use), a different one is recorded once as `changed` and is not in force, and a call
//! that names it requires approval, whose approval pins it. Pins live in memory, updated under
//! one lock, and are rebuilt from the trail's `tool_defined` events at start.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::request::{Actor, Definition};
use crate::store::{Filter, Reader, StoreError};
use crate::trail::{Kind, Record};

/// The `status` of a `tool_defined` event that puts its definition in force.
const PINNED: &str = "pinned";
/// The `status` of one that records a definition not in force.
const CHANGED: &str = "changed";

/// The definitions in force, and every one recorded.
#[derive(Debug, Default)]
pub struct Pins {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Tool name to the definition in force.
    pinned: HashMap<String, Definition>,
    /// Every definition recorded, pinned or not, by tool and hash.
    recorded: HashMap<(String, String), Definition>,
}

/// What a listing of one tool's definition comes to.
#[derive(Debug, PartialEq, Eq)]
pub enum Listed {
    /// The definition in force.
    Same,
    /// Recorded now: the tool's first definition, pinned, or a change, not in force.
    Record(Box<Record>),
    /// A change recorded before, still not in force; the parts that differ.
    Changed(Vec<String>),
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
        let pinned = state.pinned.get(tool).cloned();
        let (status, reason) = match &pinned {
            Some(pinned) if pinned.hash == definition.hash => return Listed::Same,
            Some(pinned) if state.recorded.contains_key(&key) => {
                return Listed::Changed(definition.differences(pinned));
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
        let pinned = state.pinned.get(tool)?;
        if pinned.hash == hash {
            return None;
        }
        let listed = state.recorded.get(&(tool.to_owned(), hash.to_owned()));
        Some(listed.map_or_else(|| vec!["definition".to_owned()], |d| d.differences(pinned)))
    }

    /// The record that pins the definition `hash` of `tool` as `approver` accepted it by
    /// approving `decision_id`; `None` when it is in force already, or was never recorded.
    pub fn acceptance(
        &self,
        tool: &str,
        hash: &str,
        approver: &str,
        decision_id: &str,
    ) -> Option<Record> {
        let state = self.lock();
        if state.pinned.get(tool).is_some_and(|pinned| pinned.hash == hash) {
            return None;
        }
        let definition = state.recorded.get(&(tool.to_owned(), hash.to_owned()))?;
        let reason = format!("accepted by `{approver}`, who approved a call that named it: pinned");
        Some(Record {
            decision_id: Some(decision_id.to_owned()),
            actor_id: Some(approver.to_owned()),
            actor_kind: Some("user".to_owned()),
            ..record(tool, definition, PINNED, reason)
        })
    }

    /// Puts in force what a committed `tool_defined` event says.
    pub fn committed(&self, record: &Record) {
        let Some((tool, definition)) = definition(record) else { return };
        let mut state = self.lock();
        if record.status.as_deref() == Some(PINNED) {
            state.pinned.insert(tool.clone(), definition.clone());
        }
        state.recorded.insert((tool, definition.hash.clone()), definition);
    }

    /// Reads the trail's `tool_defined` events, in order; returns how many tools are pinned.
    pub async fn rebuild(&self, reader: &Reader) -> Result<usize, StoreError> {
        reader
            .scan(&Filter::of_kind(Kind::ToolDefined), |event| self.committed(&event.record))
            .await?;
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

    #[test]
    fn the_first_definition_is_pinned_and_a_change_recorded_once_and_held() {
        let pins = Pins::default();
        let Listed::Record(first) = pins.list("t", &definition('a', "1"), &actor(), "s") else {
            panic!("the first listing is recorded")
        };
        assert_eq!(first.status.as_deref(), Some("pinned"));
        pins.committed(&first);
        assert_eq!(pins.list("t", &definition('a', "1"), &actor(), "s"), Listed::Same);

        let Listed::Record(change) = pins.list("t", &definition('b', "2"), &actor(), "s") else {
            panic!("a change is recorded")
        };
        assert_eq!(change.status.as_deref(), Some("changed"));
        assert!(
            change.reason.as_deref().unwrap().starts_with("changed since pinned (description)")
        );
        pins.committed(&change);
        assert_eq!(
            pins.list("t", &definition('b', "2"), &actor(), "s"),
            Listed::Changed(vec!["description".into()])
        );
        assert_eq!(pins.changed("t", &"b".repeat(64)), Some(vec!["description".into()]));
        assert_eq!(pins.changed("t", &"a".repeat(64)), None);
        assert_eq!(pins.changed("other", &"a".repeat(64)), None);
    }

    #[test]
    fn an_acceptance_pins_the_change_once_committed() {
        let pins = Pins::default();
        for listed in [definition('a', "1"), definition('b', "2")] {
            let Listed::Record(record) = pins.list("t", &listed, &actor(), "") else { panic!() };
            pins.committed(&record);
        }
        let new = "b".repeat(64);
        assert!(pins.acceptance("t", &"c".repeat(64), "bob", "d1").is_none(), "never listed");

        let accepted = pins.acceptance("t", &new, "bob", "d1").unwrap();
        pins.committed(&accepted);

        assert_eq!(accepted.decision_id.as_deref(), Some("d1"));
        assert_eq!(pins.changed("t", &new), None);
        assert_eq!(pins.changed("t", &"a".repeat(64)), Some(vec!["description".into()]));
        assert!(pins.acceptance("t", &new, "bob", "d2").is_none(), "in force already");
    }
}
