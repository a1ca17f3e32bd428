export interface NeverAllowedResponse {
    'tools'?: (string)[];
}
export interface NeverAllowedResponse__Output {
    'tools': (string)[];
}
