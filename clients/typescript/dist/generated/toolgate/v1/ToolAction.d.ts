export interface ToolAction {
    'tool'?: (string);
    'action'?: (string);
}
export interface ToolAction__Output {
    'tool': (string);
    'action': (string);
}
