import type { ExecutionStatus as _toolgate_v1_ExecutionStatus, ExecutionStatus__Output as _toolgate_v1_ExecutionStatus__Output } from '../../toolgate/v1/ExecutionStatus.js';
import type { Long } from '@grpc/proto-loader';
export interface ExecuteRequest {
    'decision_id'?: (string);
    'args_json'?: (string);
    'duration_us'?: (number | string | Long);
    'status'?: (_toolgate_v1_ExecutionStatus);
    'error'?: (string);
    'output'?: (string);
    'result_bytes'?: (number | string | Long);
    'wrap_output'?: (boolean);
    'idempotency_key'?: (string);
    'approved_in_harness'?: (string);
    '_output'?: "output";
}
export interface ExecuteRequest__Output {
    'decision_id': (string);
    'args_json': (string);
    'duration_us': (number);
    'status': (_toolgate_v1_ExecutionStatus__Output);
    'error': (string);
    'output'?: (string);
    'result_bytes': (number);
    'wrap_output': (boolean);
    'idempotency_key': (string);
    'approved_in_harness': (string);
    '_output'?: "output";
}
