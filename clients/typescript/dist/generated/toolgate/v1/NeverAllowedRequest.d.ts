import type { Actor as _toolgate_v1_Actor, Actor__Output as _toolgate_v1_Actor__Output } from '../../toolgate/v1/Actor.js';
import type { ToolAction as _toolgate_v1_ToolAction, ToolAction__Output as _toolgate_v1_ToolAction__Output } from '../../toolgate/v1/ToolAction.js';
import type { RunOptions as _toolgate_v1_RunOptions, RunOptions__Output as _toolgate_v1_RunOptions__Output } from '../../toolgate/v1/RunOptions.js';
export interface NeverAllowedRequest {
    'actor'?: (_toolgate_v1_Actor | null);
    'tools'?: (_toolgate_v1_ToolAction)[];
    'options'?: (_toolgate_v1_RunOptions | null);
}
export interface NeverAllowedRequest__Output {
    'actor': (_toolgate_v1_Actor__Output | null);
    'tools': (_toolgate_v1_ToolAction__Output)[];
    'options': (_toolgate_v1_RunOptions__Output | null);
}
