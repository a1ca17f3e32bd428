export interface HeadRequest {
    'node_id'?: (string);
}
export interface HeadRequest__Output {
    'node_id': (string);
}
