export interface HashArgsRequest {
    'args_json'?: (string);
}
export interface HashArgsRequest__Output {
    'args_json': (string);
}
