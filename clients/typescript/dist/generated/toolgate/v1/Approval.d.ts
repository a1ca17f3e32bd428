import type { ApprovalState as _toolgate_v1_ApprovalState, ApprovalState__Output as _toolgate_v1_ApprovalState__Output } from '../../toolgate/v1/ApprovalState.js';
import type { Outcome as _toolgate_v1_Outcome, Outcome__Output as _toolgate_v1_Outcome__Output } from '../../toolgate/v1/Outcome.js';
import type { Long } from '@grpc/proto-loader';
export interface Approval {
    'decision_id'?: (string);
    'state'?: (_toolgate_v1_ApprovalState);
    'session_id'?: (string);
    'actor_id'?: (string);
    'tool'?: (string);
    'action'?: (string);
    'resource_type'?: (string);
    'resource_id'?: (string);
    'args_hash'?: (string);
    'reason'?: (string);
    'policy_ids'?: (string)[];
    'args_json'?: (string);
    'requested_at'?: (string);
    'expires_at'?: (string);
    'approver'?: (string);
    'comment'?: (string);
    'decided_at'?: (string);
    'verdict_outcome'?: (_toolgate_v1_Outcome);
    'seq'?: (number | string | Long);
    'idempotency_key'?: (string);
}
export interface Approval__Output {
    'decision_id': (string);
    'state': (_toolgate_v1_ApprovalState__Output);
    'session_id': (string);
    'actor_id': (string);
    'tool': (string);
    'action': (string);
    'resource_type': (string);
    'resource_id': (string);
    'args_hash': (string);
    'reason': (string);
    'policy_ids': (string)[];
    'args_json': (string);
    'requested_at': (string);
    'expires_at': (string);
    'approver': (string);
    'comment': (string);
    'decided_at': (string);
    'verdict_outcome': (_toolgate_v1_Outcome__Output);
    'seq': (number);
    'idempotency_key': (string);
}
