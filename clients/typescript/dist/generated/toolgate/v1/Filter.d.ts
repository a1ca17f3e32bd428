export interface Filter {
    'since'?: (string);
    'until'?: (string);
    'session_id'?: (string);
    'actor_id'?: (string);
    'tool'?: (string);
    'action'?: (string);
    'outcome'?: (string);
    'kind'?: (string);
    'decision_id'?: (string);
    'shadow_disagrees'?: (boolean);
    'node_id'?: (string);
}
export interface Filter__Output {
    'since': (string);
    'until': (string);
    'session_id': (string);
    'actor_id': (string);
    'tool': (string);
    'action': (string);
    'outcome': (string);
    'kind': (string);
    'decision_id': (string);
    'shadow_disagrees': (boolean);
    'node_id': (string);
}
