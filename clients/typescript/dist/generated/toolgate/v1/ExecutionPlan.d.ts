export interface ExecutionPlan {
    'dry_run'?: (boolean);
    'idempotency_key'?: (string);
    'timeout_ms'?: (number);
    'rollback_hint'?: (string);
}
export interface ExecutionPlan__Output {
    'dry_run': (boolean);
    'idempotency_key': (string);
    'timeout_ms': (number);
    'rollback_hint': (string);
}
