//! The gateway's own ids towards the server. A client's request never goes up under the
//! client's id: the gateway issues one of its own (`"toolgate-<n>"`, a string), and the one
//! response that carries it comes back to the client under the client's id, exactly as the
//! client wrote it. A response under any other id answers nothing the client asked through the
//! gateway: an id the gateway never issued, one already answered (a second answer), the same
//! digits as a number (`2` for `"toolgate-2"`), a forged answer to a request of the client's
//! own. The relays drop it and record it.
//!
//! Shared by both transports; the relay keeps one `Ids` behind its lock.

use std::collections::{HashMap, VecDeque};

use serde_json::Value;

/// The most requests in flight to the server through one relay: past it a client request is
/// refused, so that a server that never answers cannot make the gateway remember without end.
pub const MAX_IN_FLIGHT: usize = 4096;

/// What the gateway's ids start with.
const PREFIX: &str = "toolgate-";

/// Why a request could not be given an id.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("the id is in use by a request in flight")]
    InUse,
    #[error("too many requests are in flight to the MCP server")]
    Full,
}

/// The requests in flight under the gateway's ids, each with what it is for (`P`).
#[derive(Debug)]
pub struct Ids<P> {
    next: u64,
    /// By the gateway's id: the client's key and id, and what the request is for.
    open: HashMap<String, Open<P>>,
    /// The gateway's id of each open request, by the client's key.
    by_client: HashMap<String, String>,
    /// Requests the client no longer waits for (timed out, cancelled), oldest first: their late
    /// answer is taken quietly, and the oldest are forgotten when the map is full.
    abandoned: VecDeque<String>,
}

#[derive(Debug)]
struct Open<P> {
    client_key: String,
    client_id: Value,
    purpose: P,
    /// Whether the request went up: one still being decided, or held for a verdict, has no
    /// answer to take (a server that guesses its id is refused).
    sent: bool,
}

impl<P> Default for Ids<P> {
    fn default() -> Self {
        Self {
            next: 0,
            open: HashMap::new(),
            by_client: HashMap::new(),
            abandoned: VecDeque::new(),
        }
    }
}

/// What a server's response answers.
#[derive(Debug)]
pub enum Answered<P> {
    /// An open request: the client's id, and what it was for.
    Request(Value, P),
    /// A request the client stopped waiting for: nothing to relay, nothing wrong.
    Abandoned,
    /// Nothing in flight: a forged, repeated or retyped answer.
    Nothing,
}

impl<P> Ids<P> {
    /// Issues an id for the client's request `client_id`, known to the client as `client_key`
    /// (its id, within its session), to send now: refused while a request of that key is in
    /// flight, or when too many are.
    pub fn issue(
        &mut self,
        client_key: String,
        client_id: &Value,
        purpose: P,
    ) -> Result<Value, IdError> {
        let ours = self.reserve(client_key, client_id, purpose)?;
        self.sent(&ours);
        Ok(ours)
    }

    /// Issues an id as `issue` does, for a request that goes up only later (`sent`), if at all.
    pub fn reserve(
        &mut self,
        client_key: String,
        client_id: &Value,
        purpose: P,
    ) -> Result<Value, IdError> {
        if self.by_client.contains_key(&client_key) {
            return Err(IdError::InUse);
        }
        if self.open.len() >= MAX_IN_FLIGHT {
            let Some(oldest) = self.abandoned.pop_front() else { return Err(IdError::Full) };
            self.open.remove(&oldest);
        }
        self.next += 1;
        let ours = format!("{PREFIX}{}", self.next);
        self.by_client.insert(client_key.clone(), ours.clone());
        let open = Open { client_key, client_id: client_id.clone(), purpose, sent: false };
        self.open.insert(ours.clone(), open);
        Ok(Value::String(ours))
    }

    /// The request reserved as `ours` goes up now: from now on it may be answered.
    pub fn sent(&mut self, ours: &Value) {
        if let Some(open) = ours.as_str().and_then(|ours| self.open.get_mut(ours)) {
            open.sent = true;
        }
    }

    /// What the server's response under `id` answers. Only a string the gateway issued and not
    /// yet answered answers anything; it answers once.
    pub fn answer(&mut self, id: &Value) -> Answered<P> {
        let Value::String(ours) = id else { return Answered::Nothing };
        if !self.open.get(ours).is_some_and(|open| open.sent) {
            return Answered::Nothing;
        }
        let Some(open) = self.open.remove(ours) else { return Answered::Nothing };
        if let Some(at) = self.abandoned.iter().position(|a| a == ours) {
            self.abandoned.remove(at);
            return Answered::Abandoned;
        }
        self.by_client.remove(&open.client_key);
        Answered::Request(open.client_id, open.purpose)
    }

    /// Whether `id` names a request the client stopped waiting for.
    pub fn is_abandoned(&self, id: &Value) -> bool {
        id.as_str().is_some_and(|ours| self.abandoned.iter().any(|a| a == ours))
    }

    /// The gateway's id of the client's open request `client_key`.
    pub fn ours(&self, client_key: &str) -> Option<Value> {
        let ours = self.by_client.get(client_key)?;
        Some(Value::String(ours.clone()))
    }

    /// What the client's open request `client_key` is for.
    pub fn purpose(&self, client_key: &str) -> Option<&P> {
        let ours = self.by_client.get(client_key)?;
        self.open.get(ours).map(|open| &open.purpose)
    }

    /// The client no longer waits for the request the gateway sent as `ours`: its key is free
    /// again, and the server's late answer, if one comes, is taken quietly.
    pub fn abandon(&mut self, ours: &Value) {
        let Value::String(ours) = ours else { return };
        let Some(open) = self.open.get(ours) else { return };
        self.by_client.remove(&open.client_key);
        self.abandoned.push_back(ours.clone());
    }

    /// Forgets the request sent as `ours` (it was never sent, or is answered another way).
    pub fn forget(&mut self, ours: &Value) {
        let Value::String(ours) = ours else { return };
        if let Some(open) = self.open.remove(ours) {
            self.by_client.remove(&open.client_key);
        }
        self.abandoned.retain(|a| a != ours);
    }

    /// Every open request's purpose, taken out (the server is gone).
    pub fn drain(&mut self) -> Vec<P> {
        self.by_client.clear();
        self.abandoned.clear();
        self.open.drain().map(|(_, open)| open.purpose).collect()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_response_answers_only_under_the_id_the_gateway_issued_and_only_once() {
        let mut ids = Ids::default();
        let ours = ids.issue("2".into(), &json!(2), "list").unwrap();
        assert_eq!(ours, json!("toolgate-1"));

        assert!(matches!(ids.answer(&json!(2)), Answered::Nothing), "the client's own id");
        assert!(matches!(ids.answer(&json!(1)), Answered::Nothing), "the digits as a number");
        assert!(matches!(ids.answer(&json!("toolgate-01")), Answered::Nothing));
        let Answered::Request(client, purpose) = ids.answer(&ours) else { panic!("answered") };
        assert_eq!((client, purpose), (json!(2), "list"));
        assert!(matches!(ids.answer(&ours), Answered::Nothing), "a second answer");
    }

    #[test]
    fn a_request_not_yet_sent_has_no_answer_to_take() {
        let mut ids = Ids::default();
        let ours = ids.reserve("3".into(), &json!(3), ()).unwrap();
        assert!(matches!(ids.answer(&ours), Answered::Nothing), "a guess at a held call's id");
        ids.sent(&ours);
        assert!(matches!(ids.answer(&ours), Answered::Request(..)));
    }

    #[test]
    fn a_key_in_flight_is_refused_and_freed_by_its_answer_or_its_abandonment() {
        let mut ids = Ids::default();
        let first = ids.issue("7".into(), &json!(7), ()).unwrap();
        assert_eq!(ids.issue("7".into(), &json!(7), ()), Err(IdError::InUse));
        assert_eq!(ids.ours("7"), Some(first.clone()));

        ids.abandon(&first);
        let second = ids.issue("7".into(), &json!(7), ()).unwrap();
        assert!(matches!(ids.answer(&first), Answered::Abandoned), "a late answer, taken quietly");
        assert!(matches!(ids.answer(&second), Answered::Request(..)));
    }

    #[test]
    fn in_flight_requests_are_bounded_and_abandoned_ones_make_room() {
        let mut ids = Ids::default();
        let mut issued = Vec::new();
        for n in 0..MAX_IN_FLIGHT {
            issued.push(ids.issue(n.to_string(), &json!(n), ()).unwrap());
        }
        assert_eq!(ids.issue("x".into(), &json!("x"), ()), Err(IdError::Full));
        ids.abandon(&issued[0]);
        assert!(ids.issue("x".into(), &json!("x"), ()).is_ok());
        assert!(matches!(ids.answer(&issued[0]), Answered::Nothing), "forgotten to make room");
        assert_eq!(ids.drain().len(), MAX_IN_FLIGHT);
    }
}
