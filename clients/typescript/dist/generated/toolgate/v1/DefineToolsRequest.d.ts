import type { Actor as _toolgate_v1_Actor, Actor__Output as _toolgate_v1_Actor__Output } from '../../toolgate/v1/Actor.js';
import type { ToolDefinition as _toolgate_v1_ToolDefinition, ToolDefinition__Output as _toolgate_v1_ToolDefinition__Output } from '../../toolgate/v1/ToolDefinition.js';
export interface DefineToolsRequest {
    'actor'?: (_toolgate_v1_Actor | null);
    'session_id'?: (string);
    'tools'?: (_toolgate_v1_ToolDefinition)[];
}
export interface DefineToolsRequest__Output {
    'actor': (_toolgate_v1_Actor__Output | null);
    'session_id': (string);
    'tools': (_toolgate_v1_ToolDefinition__Output)[];
}
