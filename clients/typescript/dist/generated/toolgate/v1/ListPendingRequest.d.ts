export interface ListPendingRequest {
    'session_id'?: (string);
    'actor_id'?: (string);
    'tool'?: (string);
    'limit'?: (number);
}
export interface ListPendingRequest__Output {
    'session_id': (string);
    'actor_id': (string);
    'tool': (string);
    'limit': (number);
}
