export interface PositionRequest {
    'node_id'?: (string);
}
export interface PositionRequest__Output {
    'node_id': (string);
}
