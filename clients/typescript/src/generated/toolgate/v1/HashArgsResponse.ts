// Original file: proto/toolgate/v1/audit.proto


export interface HashArgsResponse {
  'args_hash'?: (string);
  'canonical_json'?: (string);
}

export interface HashArgsResponse__Output {
  'args_hash': (string);
  'canonical_json': (string);
}
