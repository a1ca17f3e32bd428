// Original file: proto/toolgate/v1/approvals.proto


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
