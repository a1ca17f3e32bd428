export interface ChangedTool {
    'tool'?: (string);
    'parts'?: (string)[];
    'pinned'?: (string);
}
export interface ChangedTool__Output {
    'tool': (string);
    'parts': (string)[];
    'pinned': (string);
}
