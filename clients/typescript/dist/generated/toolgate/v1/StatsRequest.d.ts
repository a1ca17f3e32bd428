export interface StatsRequest {
    'since'?: (string);
    'until'?: (string);
    'node_id'?: (string);
}
export interface StatsRequest__Output {
    'since': (string);
    'until': (string);
    'node_id': (string);
}
