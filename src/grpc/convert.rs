//! Events between the trail's form and the wire's.

use crate::proto;
use crate::trail::{Event, Record};

/// An event as `toolgate.v1.Event`.
pub fn event_to_proto(e: Event) -> proto::Event {
    let r = e.record;
    proto::Event {
        seq: e.seq.unsigned_abs(),
        event_id: e.event_id,
        ts: e.ts,
        kind: r.kind,
        decision_id: r.decision_id,
        session_id: r.session_id,
        task_type: r.task_type,
        actor_id: r.actor_id,
        actor_kind: r.actor_kind,
        tool: r.tool,
        action: r.action,
        resource_type: r.resource_type,
        resource_id: r.resource_id,
        args_hash: r.args_hash,
        rewritten_args_hash: r.rewritten_args_hash,
        outcome: r.outcome,
        reason: r.reason,
        policy_ids: r.policy_ids,
        policy_version: r.policy_version,
        shadow_outcome: r.shadow_outcome,
        shadow_reason: r.shadow_reason,
        max_output_chars: r.max_output_chars,
        timeout_ms: r.timeout_ms,
        duration_us: r.duration_us,
        result_bytes: r.result_bytes,
        truncated: r.truncated,
        status: r.status,
        error: r.error,
        request: r.request,
        prev_hash: e.prev_hash,
        hash: e.hash,
    }
}

/// A `toolgate.v1.Event` as the trail holds it.
pub fn event_from_proto(e: proto::Event) -> Event {
    Event {
        // Sequence numbers fit an i64: the trail stores them as one.
        seq: i64::try_from(e.seq).unwrap_or(i64::MAX),
        event_id: e.event_id,
        ts: e.ts,
        record: Record {
            kind: e.kind,
            decision_id: e.decision_id,
            session_id: e.session_id,
            task_type: e.task_type,
            actor_id: e.actor_id,
            actor_kind: e.actor_kind,
            tool: e.tool,
            action: e.action,
            resource_type: e.resource_type,
            resource_id: e.resource_id,
            args_hash: e.args_hash,
            rewritten_args_hash: e.rewritten_args_hash,
            outcome: e.outcome,
            reason: e.reason,
            policy_ids: e.policy_ids,
            policy_version: e.policy_version,
            shadow_outcome: e.shadow_outcome,
            shadow_reason: e.shadow_reason,
            max_output_chars: e.max_output_chars,
            timeout_ms: e.timeout_ms,
            duration_us: e.duration_us,
            result_bytes: e.result_bytes,
            truncated: e.truncated,
            status: e.status,
            error: e.error,
            request: e.request,
        },
        prev_hash: e.prev_hash,
        hash: e.hash,
    }
}
