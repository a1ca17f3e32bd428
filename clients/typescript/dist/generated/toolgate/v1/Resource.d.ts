export interface Resource {
    'type'?: (string);
    'id'?: (string);
    'classification'?: (string);
}
export interface Resource__Output {
    'type': (string);
    'id': (string);
    'classification': (string);
}
