export interface ToolDefinition {
    'tool'?: (string);
    'hash'?: (string);
    'parts'?: ({
        [key: string]: string;
    });
}
export interface ToolDefinition__Output {
    'tool': (string);
    'hash': (string);
    'parts': ({
        [key: string]: string;
    });
}
