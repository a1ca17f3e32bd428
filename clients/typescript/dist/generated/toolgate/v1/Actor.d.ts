export interface Actor {
    'id'?: (string);
    'kind'?: (string);
    'delegation_chain'?: (string)[];
}
export interface Actor__Output {
    'id': (string);
    'kind': (string);
    'delegation_chain': (string)[];
}
