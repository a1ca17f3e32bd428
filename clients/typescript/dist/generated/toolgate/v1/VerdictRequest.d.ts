export interface VerdictRequest {
    'decision_id'?: (string);
    'approver'?: (string);
    'comment'?: (string);
}
export interface VerdictRequest__Output {
    'decision_id': (string);
    'approver': (string);
    'comment': (string);
}
