import type { Outcome as _toolgate_v1_Outcome, Outcome__Output as _toolgate_v1_Outcome__Output } from '../../toolgate/v1/Outcome.js';
import type { Long } from '@grpc/proto-loader';
export interface DecideResponse {
    'decision_id'?: (string);
    'outcome'?: (_toolgate_v1_Outcome);
    'reason'?: (string);
    'policy_ids'?: (string)[];
    'args_hash'?: (string);
    'max_output_chars'?: (number);
    'timeout_ms'?: (number);
    'rewritten_args_json'?: (string);
    'seq'?: (number | string | Long);
    'policy_version'?: (string);
}
export interface DecideResponse__Output {
    'decision_id': (string);
    'outcome': (_toolgate_v1_Outcome__Output);
    'reason': (string);
    'policy_ids': (string)[];
    'args_hash': (string);
    'max_output_chars': (number);
    'timeout_ms': (number);
    'rewritten_args_json': (string);
    'seq': (number);
    'policy_version': (string);
}
