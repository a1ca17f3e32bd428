export interface HashArgsResponse {
    'args_hash'?: (string);
    'canonical_json'?: (string);
}
export interface HashArgsResponse__Output {
    'args_hash': (string);
    'canonical_json': (string);
}
