export interface WithdrawRequest {
    'decision_id'?: (string);
    'reason'?: (string);
}
export interface WithdrawRequest__Output {
    'decision_id': (string);
    'reason': (string);
}
