//! A held call surfaced to a client of MCP's 2026-07-28 revision its way: instead of a silent
//! wait, the gateway answers with an `input_required` result (SEP-2322's multi round-trip
//! requests) whose `inputRequests` ask the person, through the client's elicitation, whether to
//! keep waiting for the approver, and whose `requestState` the client echoes when it retries
//! the call. Each retry waits a while for the verdict; the approved call then runs and its result
//! is the answer.
//!
//! The request state is the gateway's word, not the client's: the decision it names, the call
//! it is for (server, tool, arguments, session and actor, hashed) and when the wait ends, under an
//! HMAC with a key only this gateway process holds. A client can neither forge one, nor move one to
//! another call, nor run an approved call twice: the decisions whose call ran are remembered.

use std::collections::{HashSet, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as BASE64;
use hmac::{Hmac, KeyInit, Mac};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::Caller;

/// The protocol revision whose clients are answered this way.
const REVISION: &str = "2026-07-28";

/// The key of the one input request the gateway makes.
const ASK: &str = "toolgate/approval";

/// The most decisions whose call ran that are remembered (the oldest are forgotten first; a
/// state outlives its decision's wait by nothing, so this bounds only a flood).
const MAX_RAN: usize = 100_000;

/// What a request state says.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The decision waiting for its verdict.
    #[serde(rename = "d")]
    pub decision_id: String,
    /// The call it is for: [`binding`].
    #[serde(rename = "b")]
    binding: String,
    /// When the gateway stops waiting: seconds since the Unix epoch.
    #[serde(rename = "x")]
    pub until: u64,
    /// The decision's limits and reason, for the call when it runs.
    #[serde(rename = "t")]
    pub timeout_ms: u32,
    #[serde(rename = "m")]
    pub max_chars: u32,
    #[serde(rename = "r")]
    pub reason: String,
}

/// Why a request state is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    /// Not one this gateway process issued, or changed.
    #[error("its request state is not one this gateway issued")]
    Forged,
    /// Issued for another call.
    #[error("its request state was issued for another call")]
    Moved,
    /// Its call ran already, or was given up.
    #[error("the call it names ran already, or was given up")]
    Ran,
}

/// The gateway's key for request states, the decisions whose call ran (or was given up), and
/// those a retry is waiting on.
#[derive(Debug)]
pub struct States {
    key: [u8; 32],
    ran: Mutex<(HashSet<String>, VecDeque<String>)>,
    waiting: Mutex<HashSet<String>>,
}

/// A retry's claim to wait on its decision; released when dropped.
pub struct Waiting<'a> {
    states: &'a States,
    decision_id: String,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        let mut waiting = self.states.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting.remove(&self.decision_id);
    }
}

impl States {
    /// A fresh key: states from another process (or before a restart) are not accepted.
    pub fn new() -> Self {
        let mut key = [0; 32];
        if getrandom::fill(&mut key).is_err() {
            // An all-zero key refuses every state ([`States::read`]): fail closed.
            key = [0; 32];
            tracing::error!(
                "no randomness for the MCP gateway's request states: held calls of 2026-07-28 \
                 clients will be refused"
            );
        }
        Self { key, ran: Mutex::default(), waiting: Mutex::default() }
    }

    #[allow(clippy::expect_used)] // see the INVARIANT inside
    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        // INVARIANT: HMAC takes a key of any length.
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("any key length");
        mac.update(payload);
        mac
    }

    /// The request state of `held`.
    pub fn issue(&self, state: &State) -> String {
        let payload = serde_json::to_vec(state).unwrap_or_default();
        let tag = self.mac(&payload).finalize().into_bytes();
        format!("{}.{}", BASE64.encode(&payload), BASE64.encode(tag))
    }

    /// What the request state `state` says, if this gateway issued it for this `call`.
    pub fn read(&self, state: &str, call: &str) -> Result<State, StateError> {
        if self.key == [0; 32] {
            return Err(StateError::Forged);
        }
        let (payload, tag) = state.split_once('.').ok_or(StateError::Forged)?;
        let (payload, tag) = (BASE64.decode(payload), BASE64.decode(tag));
        let (Ok(payload), Ok(tag)) = (payload, tag) else { return Err(StateError::Forged) };
        self.mac(&payload).verify_slice(&tag).map_err(|_| StateError::Forged)?;
        let held: State = serde_json::from_slice(&payload).map_err(|_| StateError::Forged)?;
        if held.binding != call {
            return Err(StateError::Moved);
        }
        if self.lock().0.contains(&held.decision_id) {
            return Err(StateError::Ran);
        }
        Ok(held)
    }

    /// The claim to wait on `decision_id`, unless another retry holds it: one state makes at
    /// most one wait at a time, however many retries carry it at once.
    pub fn wait(&self, decision_id: &str) -> Option<Waiting<'_>> {
        let mut waiting = self.waiting.lock().unwrap_or_else(PoisonError::into_inner);
        waiting
            .insert(decision_id.to_owned())
            .then(|| Waiting { states: self, decision_id: decision_id.to_owned() })
    }

    /// Remembers that `decision_id`'s call runs, or that it was given up (withdrawn, expired): no
    /// state of it runs anything after. `false` when it was so already (two retries at once).
    pub fn run(&self, decision_id: &str) -> bool {
        let mut ran = self.lock();
        let (set, order) = &mut *ran;
        if !set.insert(decision_id.to_owned()) {
            return false;
        }
        order.push_back(decision_id.to_owned());
        while order.len() > MAX_RAN {
            if let Some(old) = order.pop_front() {
                set.remove(&old);
            }
        }
        true
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (HashSet<String>, VecDeque<String>)> {
        self.ran.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for States {
    fn default() -> Self {
        Self::new()
    }
}

impl State {
    /// A held decision, for the call `binding`, waited for until `until`.
    pub fn new(decision: &crate::proto::DecideResponse, binding: String, until: u64) -> Self {
        Self {
            decision_id: decision.decision_id.clone(),
            binding,
            until,
            timeout_ms: decision.timeout_ms,
            max_chars: decision.max_output_chars,
            reason: decision.reason.clone(),
        }
    }
}

/// The call a state is bound to: the server, the tool, the arguments (RFC 8785), the session
/// and the actor, hashed.
pub fn binding(server: &str, caller: &Caller, params: &Value) -> String {
    let arguments = params.get("arguments").cloned().unwrap_or(Value::Null);
    let arguments = serde_jcs::to_string(&arguments).unwrap_or_else(|_| arguments.to_string());
    let name = params.get("name").and_then(Value::as_str).unwrap_or_default();
    let bound = json!([server, name, arguments, caller.session, caller.actor]);
    hex::encode(Sha256::digest(bound.to_string().as_bytes()))
}

/// Whether `params` (a request's) come from a client of the 2026-07-28 revision.
pub fn modern(params: &Value) -> bool {
    meta(params, "io.modelcontextprotocol/protocolVersion").and_then(Value::as_str)
        == Some(REVISION)
}

/// Whether that client can elicit (its capabilities travel in each request's `_meta`).
pub fn elicits(params: &Value) -> bool {
    meta(params, "io.modelcontextprotocol/clientCapabilities")
        .and_then(|c| c.get("elicitation"))
        .is_some()
}

fn meta<'a>(params: &'a Value, key: &str) -> Option<&'a Value> {
    params.get("_meta")?.get(key)
}

/// The person's answer to the gateway's question, when the retry carries one: `false` when
/// they declined or cancelled (stop waiting), `true` when they accepted.
pub fn keeps_waiting(params: &Value) -> Option<bool> {
    let answer = params.get("inputResponses")?.get(ASK)?;
    let action = answer.get("action").and_then(Value::as_str)?;
    Some(action == "accept")
}

/// The `input_required` result: the state, and on the first round the question for the person.
pub fn input_required(state: String, ask: Option<String>) -> Value {
    let mut result = json!({ "resultType": "input_required", "requestState": state });
    if let Some(message) = ask {
        result["inputRequests"] = json!({
            ASK: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": message,
                    "requestedSchema": { "type": "object", "properties": {} },
                },
            },
        });
    }
    result
}

/// `result` as the 2026-07-28 revision wants every result: saying its type (`complete` unless
/// it says another).
pub fn complete(result: &mut Value) {
    if let Some(result) = result.as_object_mut() {
        result.entry("resultType").or_insert_with(|| json!("complete"));
    }
}

/// Seconds since the Unix epoch.
pub fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held() -> State {
        State {
            decision_id: "d1".into(),
            binding: "call".into(),
            until: 10,
            timeout_ms: 5,
            max_chars: 6,
            reason: "why".into(),
        }
    }

    #[test]
    fn a_state_reads_back_for_its_call_only_and_runs_once() {
        let states = States::new();
        let state = states.issue(&held());
        assert_eq!(states.read(&state, "call"), Ok(held()));
        assert_eq!(states.read(&state, "other call"), Err(StateError::Moved));
        assert!(states.run("d1"));
        assert!(!states.run("d1"), "a second run of one approval");
        assert_eq!(states.read(&state, "call"), Err(StateError::Ran));
    }

    #[test]
    fn one_retry_waits_on_a_decision_at_a_time() {
        let states = States::new();
        let first = states.wait("d1");
        assert!(first.is_some() && states.wait("d1").is_none() && states.wait("d2").is_some());
        drop(first);
        assert!(states.wait("d1").is_some(), "released when the wait ends");
    }

    #[test]
    fn a_forged_or_foreign_state_is_refused() {
        let states = States::new();
        let state = states.issue(&held());
        let (payload, tag) = state.split_once('.').unwrap();
        let mut changed: State = serde_json::from_slice(&BASE64.decode(payload).unwrap()).unwrap();
        changed.until = u64::MAX;
        let forged = format!("{}.{tag}", BASE64.encode(serde_json::to_vec(&changed).unwrap()));
        for bad in [forged.as_str(), "", ".", "x.y", payload] {
            assert_eq!(states.read(bad, "call"), Err(StateError::Forged), "{bad:?}");
        }
        assert_eq!(States::new().read(&state, "call"), Err(StateError::Forged), "another process");
    }

    #[test]
    fn the_binding_is_the_call() {
        let caller = Caller { session: "s".into(), actor: "a".into() };
        let params = json!({"name": "t", "arguments": {"b": 1, "a": 2}});
        let same = json!({"name": "t", "arguments": {"a": 2, "b": 1}, "requestState": "x"});
        assert_eq!(binding("srv", &caller, &params), binding("srv", &caller, &same));
        let other = json!({"name": "t", "arguments": {"a": 3, "b": 1}});
        assert_ne!(binding("srv", &caller, &params), binding("srv", &caller, &other));
        let bob = Caller { actor: "b".into(), ..caller.clone() };
        assert_ne!(binding("srv", &caller, &params), binding("srv", &bob, &params));
    }
}
