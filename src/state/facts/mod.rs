//! Stateful facts: what toolgate has seen in a session and from an actor, computed for every
//! decision and handed to the policy in `context.facts`, so that limits and loop detection stay
//! declarative. They live in memory, are rebuilt from the trail at start, and are updated under
//! one lock so that two concurrent calls cannot both be "the fifth".
//!
//! A session's counts are its actor's: they are kept by (actor, session), so that another
//! agent naming the same session id can neither raise nor reset them. Memory is bounded in
//! bytes, not only in entries: sessions, tools and actors are kept by 64-bit keyed digests of
//! their names (keys random per process, so that no caller can make two names collide), every
//! entry has a fixed size, and each map has a cap.
//!
//! The flow facts are the data classes each (actor, session) has read: set from Execute in
//! the writer's transaction (only a call that ran has read anything), recorded on the
//! execution event's `request` cell as `{"reads":[…]}`, and kept a month past the session's
//! last call (longer than its counts: a session's taint must outlive its loop counts), so
//! that a policy can hold an external send after a session read `secret`.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Arc, Mutex, PoisonError};

use chrono::{DateTime, Utc};

use crate::request::ActionRequest;
use crate::store::{Reader, StoreError};
use crate::trail::Filter;
use crate::trail::{Group, Kind, Outcome};

/// The window of the per-actor rate, in microseconds: one minute.
const RATE_WINDOW_US: i64 = 60_000_000;
/// Sessions idle this long are forgotten (in microseconds): one day.
const SESSION_IDLE_US: i64 = 24 * 3600 * 1_000_000;
/// Forgetting idle sessions is checked every this many calls.
const PRUNE_EVERY: u64 = 10_000;
/// Most distinct calls remembered across sessions (about 60 bytes each, the maps' overhead
/// counted); past it the least recently active sessions are forgotten, down to three quarters
/// of it.
const MAX_TRACKED_CALLS: usize = 500_000;
/// Most actors whose rate is kept (about 300 bytes each); past it those seen least recently
/// are forgotten, down to three quarters of it.
const MAX_ACTORS: usize = 100_000;
/// A session's data classes are kept this long after its last call (in microseconds): 30 days.
const TAINT_IDLE_US: i64 = 30 * 24 * 3600 * 1_000_000;
/// Most sessions whose data classes are kept (about 100 bytes each, and 24 a class); past it
/// those idle longest are forgotten, down to three quarters of it, and remembered as forgotten.
const MAX_TAINTED: usize = 100_000;
/// Most sessions remembered as forgotten at the cap (about 40 bytes each): such a session is
/// taken to have read every class any session has read.
const MAX_FORGOTTEN: usize = 1_000_000;

/// The trail kinds the facts are rebuilt from.
const KINDS: [Kind; 2] = [Kind::Decision, Kind::Execution];

/// A data class a session has read, and the seq of the first execution that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassRead {
    pub class: Arc<str>,
    /// 0 in a `policy test` case, which names classes only.
    pub seq: i64,
}

/// The facts of one call, this call included in every count. `policy test` cases may set them
/// (a `facts` table); unset ones are those of a first call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Observed {
    /// Calls in this session.
    pub session_calls: u64,
    /// Calls of this tool in this session.
    pub session_tool_calls: u64,
    /// Calls in this session with this tool and these arguments (by hash).
    pub identical_calls: u64,
    /// How many calls in a row, ending with this one, were this same call.
    pub consecutive_identical: u64,
    /// Denials in this session before this call.
    pub session_denials: u64,
    /// Calls by this actor in the last minute.
    pub actor_calls_last_minute: u64,
    /// The configured cap on calls for this session's task type.
    pub session_cap: u64,
    /// The data classes this actor's executed calls in this session have read, in the order
    /// first read (`context.session.read_classes`).
    #[serde(deserialize_with = "class_names")]
    pub read_classes: Vec<ClassRead>,
    /// When the call was made, in microseconds since the Unix epoch (`context.time`).
    #[serde(skip)]
    pub at_us: i64,
}

impl Default for Observed {
    /// The facts of the first call of a session, with no cap.
    fn default() -> Self {
        Self {
            session_calls: 1,
            session_tool_calls: 1,
            identical_calls: 1,
            consecutive_identical: 1,
            session_denials: 0,
            actor_calls_last_minute: 1,
            session_cap: u64::MAX,
            read_classes: Vec::new(),
            at_us: chrono::Utc::now().timestamp_micros(),
        }
    }
}

/// A `policy test` case's `read_classes`: names, with no execution behind them.
fn class_names<'de, D: serde::Deserializer<'de>>(names: D) -> Result<Vec<ClassRead>, D::Error> {
    let names: Vec<String> = serde::Deserialize::deserialize(names)?;
    Ok(names.into_iter().map(|class| ClassRead { class: class.into(), seq: 0 }).collect())
}

/// What an execution's `request` cell records: the data classes the call read (canonical JSON,
/// `{"reads":[…]}`, sorted; no cell when it read none).
#[derive(Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Reads {
    pub reads: Vec<String>,
}

impl Reads {
    /// The cell for an execution that read `classes`, if any.
    pub fn cell(classes: Vec<String>) -> Option<String> {
        (!classes.is_empty()).then(|| serde_json::to_string(&Self { reads: classes }))?.ok()
    }

    /// The classes an execution event records (none for any other event).
    pub fn of(record: &crate::trail::Record) -> Vec<String> {
        let cell = record.request.as_deref().filter(|_| record.kind == Kind::Execution);
        cell.and_then(|cell| serde_json::from_str::<Self>(cell).ok()).unwrap_or_default().reads
    }
}

#[derive(Debug, Default)]
struct Session {
    calls: u64,
    denials: u64,
    /// Calls by tool, by the tool's keyed digest.
    per_tool: HashMap<u64, u64>,
    /// Identical calls by a 64-bit digest of (tool, argument hash): 16 bytes an entry rather
    /// than two strings, since a long session makes many distinct calls.
    per_call: HashMap<u64, u64>,
    last: Option<u64>,
    consecutive: u64,
    last_seen_us: i64,
}

/// An actor's calls in the last minute, by second: a fixed size however fast it calls.
#[derive(Debug)]
struct Rate {
    buckets: [u32; 60],
    /// The second (since the epoch) the newest bucket counts.
    second: i64,
}

impl Default for Rate {
    fn default() -> Self {
        Self { buckets: [0; 60], second: i64::MIN / 2 }
    }
}

impl Rate {
    /// Counts a call at `at_us`; the calls in the minute up to it.
    fn count(&mut self, at_us: i64) -> u64 {
        let second = at_us.div_euclid(1_000_000);
        // A clock stepped back past the window starts it again, rather than piling calls into
        // its oldest second until the clock catches up.
        if second < self.second - 59 {
            self.buckets = [0; 60];
            self.second = second;
        }
        if second > self.second {
            let gone = (second - self.second).min(60);
            for step in 1..=gone {
                self.buckets[(self.second + step).rem_euclid(60) as usize] = 0;
            }
            self.second = second;
        }
        // A call told late, within the window, counts in its own second.
        let at = second.min(self.second).max(self.second - 59);
        let bucket = &mut self.buckets[at.rem_euclid(60) as usize];
        *bucket = bucket.saturating_add(1);
        self.buckets.iter().map(|&n| u64::from(n)).sum()
    }
}

/// The data classes a session has read.
#[derive(Debug, Default)]
struct Taint {
    reads: Vec<ClassRead>,
    last_seen_us: i64,
}

#[derive(Debug, Default)]
struct State {
    /// By the keyed digest of (actor, session).
    sessions: HashMap<u64, Session>,
    /// The sessions that have read a data class, by the same digest.
    taints: HashMap<u64, Taint>,
    /// The sessions whose classes the cap made this process forget, each with the number of
    /// its forgetting, and in the order forgotten: flooding the cap with fresh sessions must
    /// not clean a tainted one. A forgotten session that calls again gets its entry back.
    forgotten: HashMap<u64, u64>,
    forgotten_order: VecDeque<(u64, u64)>,
    forgettings: u64,
    /// Every data class read, each name once (they come from the registry and the fixed
    /// classifications, so they are few).
    classes: Vec<Arc<str>>,
    /// By the keyed digest of the actor.
    actors: HashMap<u64, Rate>,
    observed: u64,
}

impl State {
    /// The classes of a session without an entry: none, or every class read when the cap
    /// forgot its own (no execution named: seq 0).
    fn forgotten_classes(&self, key: u64) -> Vec<ClassRead> {
        if !self.forgotten.contains_key(&key) {
            return Vec::new();
        }
        self.classes.iter().map(|class| ClassRead { class: class.clone(), seq: 0 }).collect()
    }

    /// A session's classes to update at `at_us`: its entry, given back (with every class) to a
    /// session the cap forgot; `None` for a session that has read nothing.
    fn taint_mut(&mut self, key: u64, at_us: i64) -> Option<&mut Taint> {
        if !self.taints.contains_key(&key) && self.forgotten.contains_key(&key) {
            let reads = self.forgotten_classes(key);
            self.forgotten.remove(&key);
            self.taints.insert(key, Taint { reads, last_seen_us: at_us });
        }
        let taint = self.taints.get_mut(&key)?;
        taint.last_seen_us = taint.last_seen_us.max(at_us);
        Some(taint)
    }

    /// The one copy of a class's name.
    fn intern(&mut self, class: &str) -> Arc<str> {
        if let Some(known) = self.classes.iter().find(|known| ***known == *class) {
            return known.clone();
        }
        let name: Arc<str> = class.into();
        self.classes.push(name.clone());
        name
    }

    /// Forgets idle sessions and actors, and the least recently active sessions while more
    /// than [`MAX_TRACKED_CALLS`] distinct calls are remembered: memory stays bounded however
    /// many sessions come and go (a forgotten session's counts start again).
    fn prune(&mut self, now_us: i64) {
        self.sessions.retain(|_, s| now_us - s.last_seen_us < SESSION_IDLE_US);
        self.taints.retain(|_, t| now_us - t.last_seen_us < TAINT_IDLE_US);
        if self.taints.len() > MAX_TAINTED {
            let mut by_age: Vec<(i64, u64)> =
                self.taints.iter().map(|(id, t)| (t.last_seen_us, *id)).collect();
            by_age.sort_unstable();
            for (_, id) in by_age.into_iter().take(self.taints.len() - MAX_TAINTED / 4 * 3) {
                self.taints.remove(&id);
                self.forgettings += 1;
                self.forgotten.insert(id, self.forgettings);
                self.forgotten_order.push_back((id, self.forgettings));
            }
            while self.forgotten_order.len() > MAX_FORGOTTEN {
                // Only the latest forgetting of a session lets it go.
                if let Some((oldest, when)) = self.forgotten_order.pop_front()
                    && self.forgotten.get(&oldest) == Some(&when)
                {
                    self.forgotten.remove(&oldest);
                }
            }
        }
        let now = now_us.div_euclid(1_000_000);
        self.actors.retain(|_, rate| now - rate.second < RATE_WINDOW_US / 1_000_000);
        if self.actors.len() > MAX_ACTORS {
            let mut by_age: Vec<(i64, u64)> =
                self.actors.iter().map(|(id, rate)| (rate.second, *id)).collect();
            by_age.sort_unstable();
            for (_, id) in by_age.into_iter().take(self.actors.len() - MAX_ACTORS / 4 * 3) {
                self.actors.remove(&id);
            }
        }
        let mut tracked: usize = self.sessions.values().map(|s| s.per_call.len()).sum();
        if tracked <= MAX_TRACKED_CALLS {
            return;
        }
        let mut by_age: Vec<(i64, u64)> =
            self.sessions.iter().map(|(id, s)| (s.last_seen_us, *id)).collect();
        by_age.sort_unstable();
        for (_, id) in by_age {
            if tracked <= MAX_TRACKED_CALLS / 4 * 3 {
                break;
            }
            if let Some(session) = self.sessions.remove(&id) {
                tracked -= session.per_call.len();
            }
        }
    }
}

/// The facts of every live session and actor.
#[derive(Debug)]
pub struct Facts {
    state: Mutex<State>,
    caps: HashMap<String, u64>,
    /// The keys of the names' digests, random per process.
    keys: RandomState,
}

/// One call, as the facts count it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub session: &'a str,
    pub task_type: &'a str,
    pub actor: &'a str,
    pub tool: &'a str,
    pub args_hash: &'a str,
    /// When it was made, in microseconds since the Unix epoch.
    pub at_us: i64,
}

impl<'a> Call<'a> {
    /// The call a normalized request makes at `at_us`.
    pub fn of(req: &'a ActionRequest, at_us: i64) -> Self {
        Self {
            session: &req.session_id,
            task_type: &req.task_type,
            actor: &req.actor.id,
            tool: &req.tool,
            args_hash: &req.args_hash,
            at_us,
        }
    }
}

impl Facts {
    /// Empty facts; `caps` maps task types to session caps (`default` for the others).
    pub fn new(caps: HashMap<String, u64>) -> Self {
        Self { state: Mutex::new(State::default()), caps, keys: RandomState::new() }
    }

    /// The keyed digest of an actor's session.
    fn session_key(&self, actor: &str, session: &str) -> u64 {
        self.keys.hash_one((actor, session))
    }

    fn cap(&self, task_type: &str) -> u64 {
        self.caps.get(task_type).or_else(|| self.caps.get("default")).copied().unwrap_or(u64::MAX)
    }

    /// Counts a call and returns its facts.
    pub fn observe(&self, call: Call<'_>) -> Observed {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.observed += 1;
        if state.observed.is_multiple_of(PRUNE_EVERY)
            || state.actors.len() > MAX_ACTORS + PRUNE_EVERY as usize
        {
            state.prune(call.at_us);
        }
        let actor_calls_last_minute =
            state.actors.entry(self.keys.hash_one(call.actor)).or_default().count(call.at_us);

        let key = self.session_key(call.actor, call.session);
        let read_classes =
            state.taint_mut(key, call.at_us).map_or_else(Vec::new, |taint| taint.reads.clone());
        let session = state.sessions.entry(key).or_default();
        session.calls += 1;
        session.last_seen_us = call.at_us;
        let tool_calls = session.per_tool.entry(self.keys.hash_one(call.tool)).or_default();
        *tool_calls += 1;
        let session_tool_calls = *tool_calls;
        let key = digest(call.tool, call.args_hash);
        let identical = session.per_call.entry(key).or_default();
        *identical += 1;
        let identical_calls = *identical;
        session.consecutive =
            if session.last.as_ref() == Some(&key) { session.consecutive + 1 } else { 1 };
        session.last = Some(key);
        Observed {
            session_calls: session.calls,
            session_tool_calls,
            identical_calls,
            consecutive_identical: session.consecutive,
            session_denials: session.denials,
            actor_calls_last_minute,
            session_cap: self.cap(call.task_type),
            read_classes,
            at_us: call.at_us,
        }
    }

    /// Records that an actor's session read `classes`, in the execution at `seq` (in the
    /// writer's transaction, before its commit): the first execution to read a class is the
    /// one named for it.
    pub fn read(&self, actor: &str, session: &str, classes: &[String], seq: i64, at_us: i64) {
        if classes.is_empty() {
            return;
        }
        let key = self.session_key(actor, session);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if !state.taints.contains_key(&key) && state.taints.len() >= MAX_TAINTED + 1024 {
            state.prune(at_us);
        }
        let names: Vec<Arc<str>> = classes.iter().map(|class| state.intern(class)).collect();
        if state.taint_mut(key, at_us).is_none() {
            state.taints.insert(key, Taint { reads: Vec::new(), last_seen_us: at_us });
        }
        let Some(taint) = state.taints.get_mut(&key) else { return };
        for class in names {
            if !taint.reads.iter().any(|read| read.class == class) {
                taint.reads.push(ClassRead { class, seq });
            }
        }
    }

    /// The data classes an actor's session has read so far.
    pub fn read_classes(&self, actor: &str, session: &str) -> Vec<ClassRead> {
        let key = self.session_key(actor, session);
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        match state.taints.get(&key) {
            Some(taint) => taint.reads.clone(),
            None => state.forgotten_classes(key),
        }
    }

    /// Counts a denial in an actor's session (after the policy answered).
    pub fn denied(&self, actor: &str, session: &str) {
        let key = self.session_key(actor, session);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(session) = state.sessions.get_mut(&key) {
            session.denials += 1;
        }
    }

    /// Starts a session's counts where a prune left them (its calls and denials before the
    /// first decision the file keeps, as the `prune` event carried them).
    fn seed(&self, carried: crate::store::Session) {
        let crate::store::Session { actor, session, calls, denials, last_us } = carried;
        let key = self.session_key(&actor, &session);
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = state.sessions.entry(key).or_default();
        entry.calls += calls;
        entry.denials += denials;
        entry.last_seen_us = entry.last_seen_us.max(last_us);
    }

    /// Starts a session's data classes where a prune left them.
    fn seed_reads(&self, carried: crate::store::SessionReads) {
        for read in carried.classes {
            let (actor, session) = (&carried.actor, &carried.session);
            self.read(actor, session, &[read.class], read.first_seq, read.live_us);
        }
    }

    /// Starts the facts where the last prune left them: the counts and classes it carried past
    /// its cut (docs/operations.md, "Retention"); the cut, after which the trail counts.
    pub async fn carried(&self, reader: &Reader) -> Result<i64, StoreError> {
        // The last prune's counts cover the decisions up to its cut: those still in the file
        // (a prune whose deletions a stop or a hold left unfinished) are not counted again.
        let (mut carried, mut cut) = (crate::store::Pruning::default(), 0);
        reader
            .scan(&Filter::of_kind(Kind::Prune), |event| {
                if let Some(pruning) = crate::store::Pruning::of(&event) {
                    cut = pruning.through;
                    carried = pruning;
                }
            })
            .await?;
        carried.sessions.into_iter().for_each(|session| self.seed(session));
        carried.reads.into_iter().for_each(|reads| self.seed_reads(reads));
        Ok(cut)
    }

    /// Rebuilds the facts from the decisions and executions on the trail after what the last
    /// prune carried; how many events were read.
    pub async fn rebuild(&self, reader: &Reader) -> Result<u64, StoreError> {
        let cut = self.carried(reader).await?;
        let (mut after, mut seen) = (cut, 0);
        loop {
            let events = reader.of_kinds(&KINDS, after, crate::store::PAGE).await?;
            let full = events.len() == crate::store::PAGE as usize;
            after = events.last().map_or(after, |e| e.seq);
            seen += events.len() as u64;
            events.iter().for_each(|event| self.replay(event));
            if !full {
                return Ok(seen);
            }
        }
    }

    /// Counts a decision, or the classes an execution read, from the trail as the gate did.
    fn replay(&self, event: &crate::trail::Event) {
        let r = &event.record;
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        let at_us = DateTime::parse_from_rfc3339(&event.ts)
            .map_or(0, |t| t.with_timezone(&Utc).timestamp_micros());
        let (actor, session) = (text(&r.actor_id), text(&r.session_id));
        match r.kind.group() {
            Group::Decision => {
                let (task_type, tool, args_hash) =
                    (text(&r.task_type), text(&r.tool), text(&r.args_hash));
                self.observe(Call {
                    session: &session,
                    task_type: &task_type,
                    actor: &actor,
                    tool: &tool,
                    args_hash: &args_hash,
                    at_us,
                });
                if r.outcome == Some(Outcome::Deny) {
                    self.denied(&actor, &session);
                }
            }
            Group::Execution => self.read(&actor, &session, &Reads::of(r), event.seq, at_us),
            // Nothing else changes the facts.
            Group::Violation | Group::Refusal | Group::Approval | Group::Keeping => {}
        }
    }
}

/// A 64-bit digest of a call's tool and argument hash (SipHash with fixed keys: the same in
/// every process, so a rebuild counts as the server did).
fn digest(tool: &str, args_hash: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    (tool, args_hash).hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests;
