export interface AwaitRequest {
    'decision_id'?: (string);
    'timeout_ms'?: (number);
}
export interface AwaitRequest__Output {
    'decision_id': (string);
    'timeout_ms': (number);
}
