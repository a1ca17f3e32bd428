//! Approvals: the calls a policy sent to a person, waiting for a verdict.
//!
//! A `require_approval` decision opens an approval keyed by its decision id. It ends in one
//! verdict — approved, rejected, or expired after the configured time — recorded on the trail
//! before anyone learns of it. Agents wait for it ([`Approvals::wait`]) instead of guessing.
//! Pending approvals live in memory and are rebuilt from the trail at start ([`rebuild`]);
//! settled ones are read from the trail ([`settled`]);
//! what Execute accepts afterwards is decided from the trail alone (see `gate::pairing`).
//!
//! Settling is two-step so that no lock is held while the trail commits: [`Approvals::claim`]
//! takes the approval out of reach of any other verdict, then [`Approvals::settle`] publishes
//! the committed verdict, or [`Approvals::release`] hands the approval back when it could not
//! be given.

mod trail;

pub use trail::{Settled, rebuild, settled, verdict_state};

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use crate::config::{ApprovalsConfig, TimeoutVerdict};
use crate::request::ActionRequest;
use crate::state::facts::Observed;
use crate::trail::Outcome;
use crate::trail::{Kind, Record};

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApprovalState {
    Pending,
    Approved,
    Rejected,
    Expired,
    Withdrawn,
}

/// The verdict that ended an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ruling {
    pub state: ApprovalState,
    /// Who gave it; `None` for an expiry.
    pub approver: Option<String>,
    /// The approver's comment, or why the approval expired.
    pub comment: String,
    pub decided_at: String,
    /// What it lets through: allow (exactly the approved call, once) or deny.
    pub outcome: Outcome,
    /// The verdict event's place in the trail.
    pub seq: i64,
}

/// Who gave a verdict: its kind, the approver it names (an expiry names none; a withdrawal
/// is the call's own actor's) and, with auth on, the caller that gave it.
#[derive(Debug, Clone, Copy)]
pub struct GivenBy<'a> {
    pub kind: Kind,
    pub approver: Option<&'a str>,
    pub identity: Option<&'a str>,
}

/// A call waiting for a verdict, with what an approver needs to judge it.
#[derive(Debug, Clone)]
pub struct Approval {
    pub decision_id: String,
    /// The decided request (its arguments only when `show_args` is set).
    pub request: ActionRequest,
    pub reason: String,
    pub policy_ids: Vec<String>,
    /// The arguments as JSON, when `show_args` is set and the server has not restarted since.
    pub args_json: Option<String>,
    pub requested_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// The facts of the call when it was decided (a first call's after a restart), for
    /// checking an approval against the policy.
    pub observed: Observed,
    pub verdict: Option<Ruling>,
}

impl Approval {
    pub fn state(&self) -> ApprovalState {
        self.verdict.as_ref().map_or(ApprovalState::Pending, |v| v.state)
    }

    /// The approval as requested at `ts` (RFC 3339, its event's time), expiring `ttl` later.
    pub fn requested_at(self, ts: &str, ttl: Duration) -> Self {
        let requested_at =
            DateTime::parse_from_rfc3339(ts).map_or_else(|_| Utc::now(), |t| t.with_timezone(&Utc));
        Self { requested_at, expires_at: requested_at + ttl, ..self }
    }

    /// The trail record that opens this approval: the call's who, what and where, the policy's
    /// reason and policies, and in `timeout_ms` how long it waits for a verdict.
    pub fn requested_record(&self, ttl: Duration) -> Record {
        Record {
            outcome: Some(Outcome::RequireApproval),
            reason: Some(self.reason.clone()),
            policy_ids: Some(serde_json::json!(self.policy_ids).to_string()),
            timeout_ms: Some(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX)),
            ..self.request.record(Kind::ApprovalRequested, &self.decision_id)
        }
    }

    /// The trail record of a verdict on this approval, carrying the call's who, what and where
    /// so that an auditor filtering by session sees it beside the decision. The event's actor
    /// is the approver; an expiry has none; a withdrawal's is the call's own. With auth on, its
    /// `request` names the caller that gave it (`{"identity": …}`).
    pub fn verdict_record(
        &self,
        GivenBy { kind, approver, identity }: GivenBy<'_>,
        comment: &str,
        outcome: Outcome,
    ) -> Record {
        let call = self.request.record(kind, &self.decision_id);
        let (actor_id, actor_kind) = match kind {
            Kind::ApprovalWithdrawn => (call.actor_id.clone(), call.actor_kind.clone()),
            Kind::ApprovalApproved | Kind::ApprovalRejected | Kind::ApprovalExpired => {
                (approver.map(str::to_owned), approver.map(|_| "user".to_owned()))
            }
            // Not a verdict: recorded as one given by `approver`, as before.
            Kind::Decision
            | Kind::Execution
            | Kind::Violation
            | Kind::InvalidRequest
            | Kind::PolicyLoaded
            | Kind::ApprovalRequested
            | Kind::AccessDenied
            | Kind::Checkpoint
            | Kind::Undelivered
            | Kind::ToolDefined
            | Kind::PeerRefused
            | Kind::Prune => (approver.map(str::to_owned), approver.map(|_| "user".to_owned())),
        };
        Record {
            actor_id,
            actor_kind,
            outcome: Some(outcome),
            reason: Some(comment.to_owned()),
            request: identity
                .map(|identity| serde_json::json!({ "identity": identity }).to_string()),
            ..call
        }
    }
}

/// Why a verdict could not be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimError {
    #[error("no pending approval for decision `{0}`")]
    NotPending(String),
    #[error("decision `{0}` is being settled by another verdict")]
    Busy(String),
}

#[derive(Debug)]
struct Entry {
    approval: Approval,
    /// A verdict is being committed for it.
    claimed: bool,
    verdicts: watch::Sender<Option<Ruling>>,
    /// What its request holds in memory (its arguments and context), as reserved.
    bytes: usize,
}

/// The pending approvals of a server.
#[derive(Debug)]
pub struct Approvals {
    config: ApprovalsConfig,
    pending: Mutex<HashMap<String, Entry>>,
    /// Room held for approvals whose events are being committed: by actor, and their bytes.
    reserved: Mutex<Reserved>,
}

#[derive(Debug, Default)]
struct Reserved {
    by_actor: HashMap<String, usize>,
    /// By the credential that asked: how many, and their bytes.
    by_caller: HashMap<String, (usize, usize)>,
    count: usize,
    bytes: usize,
}

/// Room for one more pending approval, held from the check until the approval opens; given
/// back if it never does (the decision could not be recorded).
#[derive(Debug)]
pub struct Ticket<'a> {
    approvals: &'a Approvals,
    actor: String,
    caller: Option<String>,
    bytes: usize,
}

impl Drop for Ticket<'_> {
    fn drop(&mut self) {
        let mut reserved = self.approvals.reserved();
        if let Some(n) = reserved.by_actor.get_mut(&self.actor) {
            *n -= 1;
            if *n == 0 {
                reserved.by_actor.remove(&self.actor);
            }
        }
        if let Some(caller) = &self.caller
            && let Some((n, bytes)) = reserved.by_caller.get_mut(caller)
        {
            *n -= 1;
            *bytes -= self.bytes;
            if *n == 0 {
                reserved.by_caller.remove(caller);
            }
        }
        reserved.count -= 1;
        reserved.bytes -= self.bytes;
    }
}

/// What a pending call's request holds in memory: its arguments (as sent and as normalized),
/// context and names.
fn held_bytes(req: &ActionRequest) -> usize {
    let json = |map: &serde_json::Map<String, serde_json::Value>| {
        serde_json::to_vec(map).map_or(0, |bytes| bytes.len())
    };
    json(&req.args)
        + req.raw_args.as_ref().map_or(0, json)
        + json(&req.context)
        + req.session_id.len()
        + req.tool.len()
        + req.resource.id.len()
        + 1024
}

/// Why a call finds no room among the pending approvals: the bound it meets.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Full {
    #[error(
        "this caller has {0} calls pending approval, the most [approvals] max_pending_per_caller allows"
    )]
    Caller(usize),
    #[error("this caller's calls pending approval hold [approvals] max_pending_bytes_per_caller")]
    CallerBytes,
    #[error("{0} calls are pending approval, the most [approvals] max_pending allows")]
    All(usize),
    #[error(
        "this actor has {0} calls pending approval, the most [approvals] max_pending_per_actor allows"
    )]
    Actor(usize),
    #[error("the calls pending approval hold [approvals] max_pending_bytes")]
    AllBytes,
}

impl Approvals {
    pub fn new(config: ApprovalsConfig) -> Self {
        Self { config, pending: Mutex::new(HashMap::new()), reserved: Mutex::default() }
    }

    /// Room for `req` among the pending approvals; why not, when the pending calls are at a
    /// bound: a flood of calls that require approval cannot grow memory, or the list approvers
    /// read, without end. The credential that asked (`req.identity`) is bounded first
    /// (`[approvals] max_pending_per_caller`, `max_pending_bytes_per_caller`), so that one
    /// credential, whatever actors it may act as, fills its own share and not another
    /// tenant's; then its actor (`max_pending_per_actor`); then all of them (`max_pending`,
    /// `max_pending_bytes`).
    pub fn reserve(&self, req: &ActionRequest) -> Result<Ticket<'_>, Full> {
        let (actor, caller, bytes) = (&req.actor.id, req.identity.as_deref(), held_bytes(req));
        let pending = self.lock();
        let mut reserved = self.reserved();
        let config = &self.config;
        if let Some(caller) = caller {
            let of_caller =
                pending.values().filter(|e| e.approval.request.identity.as_deref() == Some(caller));
            let (count, held) = of_caller.fold((0, 0), |(n, b), e| (n + 1, b + e.bytes));
            let (more, more_bytes) = reserved.by_caller.get(caller).copied().unwrap_or_default();
            if count + more >= config.max_pending_per_caller {
                return Err(Full::Caller(count + more));
            }
            if held + more_bytes + bytes > config.max_pending_bytes_per_caller {
                return Err(Full::CallerBytes);
            }
        }
        let of_actor = pending.values().filter(|e| &e.approval.request.actor.id == actor).count()
            + reserved.by_actor.get(actor).copied().unwrap_or(0);
        let held: usize = pending.values().map(|e| e.bytes).sum::<usize>() + reserved.bytes;
        let count = pending.len() + reserved.count;
        if count >= config.max_pending {
            return Err(Full::All(count));
        }
        if of_actor >= config.max_pending_per_actor {
            return Err(Full::Actor(of_actor));
        }
        if held + bytes > config.max_pending_bytes {
            return Err(Full::AllBytes);
        }
        *reserved.by_actor.entry(actor.to_owned()).or_default() += 1;
        if let Some(caller) = caller {
            let (n, held) = reserved.by_caller.entry(caller.to_owned()).or_default();
            (*n, *held) = (*n + 1, *held + bytes);
        }
        reserved.count += 1;
        reserved.bytes += bytes;
        let caller = caller.map(ToOwned::to_owned);
        Ok(Ticket { approvals: self, actor: actor.to_owned(), caller, bytes })
    }

    /// The longest arguments shown to approvers.
    pub fn max_shown_args_bytes(&self) -> usize {
        self.config.max_shown_args_bytes
    }

    fn reserved(&self) -> MutexGuard<'_, Reserved> {
        self.reserved.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long an approval waits for a verdict.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.config.ttl_seconds)
    }

    /// Whether approvers see the arguments.
    pub fn show_args(&self) -> bool {
        self.config.show_args
    }

    /// Opens an approval (its `approval_requested` event is committed) in the room `ticket`
    /// held for it.
    pub fn open(&self, approval: Approval, ticket: Ticket<'_>) {
        let verdicts = watch::Sender::new(None);
        let entry = Entry { approval, claimed: false, verdicts, bytes: ticket.bytes };
        let mut pending = self.lock();
        pending.insert(entry.approval.decision_id.clone(), entry);
        // The room is the approval's now: the ticket's is given back under the same lock.
        drop(ticket);
    }

    /// Opens an approval rebuilt from the trail at start, whatever the bounds: it is pending
    /// on the trail, so it is pending here (new calls wait for room until it is settled).
    pub fn reopen(&self, approval: Approval) {
        let verdicts = watch::Sender::new(None);
        let bytes = held_bytes(&approval.request);
        let entry = Entry { approval, claimed: false, verdicts, bytes };
        self.lock().insert(entry.approval.decision_id.clone(), entry);
    }

    /// The pending approvals that `matches` selects, oldest first.
    pub fn list(&self, matches: impl Fn(&Approval) -> bool) -> Vec<Approval> {
        let mut found: Vec<_> =
            self.lock().values().map(|e| &e.approval).filter(|a| matches(a)).cloned().collect();
        found.sort_by_key(|a| a.requested_at);
        found
    }

    /// Takes a pending approval out of reach of any other verdict while one is committed.
    pub fn claim(&self, decision_id: &str) -> Result<Approval, ClaimError> {
        let mut pending = self.lock();
        let entry =
            pending.get_mut(decision_id).ok_or(ClaimError::NotPending(decision_id.to_owned()))?;
        if entry.claimed {
            return Err(ClaimError::Busy(decision_id.to_owned()));
        }
        entry.claimed = true;
        Ok(entry.approval.clone())
    }

    /// Hands a claimed approval back: its verdict could not be given.
    pub fn release(&self, decision_id: &str) {
        if let Some(entry) = self.lock().get_mut(decision_id) {
            entry.claimed = false;
        }
    }

    /// Ends a claimed approval with its committed verdict and wakes whoever waits for it.
    pub fn settle(&self, decision_id: &str, verdict: Ruling) {
        if let Some(entry) = self.lock().remove(decision_id) {
            entry.verdicts.send_replace(Some(verdict));
        }
    }

    /// Waits up to `timeout` for the verdict on a pending approval: `None` when the decision
    /// has no pending approval (it may have been settled already: ask the trail), else the
    /// approval as it stands when the verdict came or the wait ended.
    pub async fn wait(&self, decision_id: &str, timeout: Duration) -> Option<Approval> {
        let (approval, mut verdicts) = {
            let pending = self.lock();
            let entry = pending.get(decision_id)?;
            (entry.approval.clone(), entry.verdicts.subscribe())
        };
        let verdict = tokio::time::timeout(timeout, verdicts.wait_for(Option::is_some))
            .await
            .ok()
            .and_then(|changed| changed.ok().and_then(|v| v.clone()));
        Some(Approval { verdict, ..approval })
    }

    /// The pending approvals past their time at `now`, claimed for expiry, with the verdict
    /// the configuration gives them.
    pub fn claim_expired(&self, now: DateTime<Utc>) -> Vec<(Approval, Outcome)> {
        let outcome = match self.config.on_timeout {
            TimeoutVerdict::Deny => Outcome::Deny,
            TimeoutVerdict::Allow => Outcome::Allow,
        };
        let mut pending = self.lock();
        pending
            .values_mut()
            .filter(|e| !e.claimed && e.approval.expires_at <= now)
            .map(|e| {
                e.claimed = true;
                (e.approval.clone(), outcome)
            })
            .collect()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        // Every update leaves the map consistent, so a panic elsewhere does not spoil it.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
