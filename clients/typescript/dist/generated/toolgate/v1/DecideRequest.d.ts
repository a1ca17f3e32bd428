import type { Actor as _toolgate_v1_Actor, Actor__Output as _toolgate_v1_Actor__Output } from '../../toolgate/v1/Actor.js';
import type { Resource as _toolgate_v1_Resource, Resource__Output as _toolgate_v1_Resource__Output } from '../../toolgate/v1/Resource.js';
import type { RunOptions as _toolgate_v1_RunOptions, RunOptions__Output as _toolgate_v1_RunOptions__Output } from '../../toolgate/v1/RunOptions.js';
import type { ExecutionPlan as _toolgate_v1_ExecutionPlan, ExecutionPlan__Output as _toolgate_v1_ExecutionPlan__Output } from '../../toolgate/v1/ExecutionPlan.js';
export interface DecideRequest {
    'session_id'?: (string);
    'task_type'?: (string);
    'actor'?: (_toolgate_v1_Actor | null);
    'tool'?: (string);
    'action'?: (string);
    'resource'?: (_toolgate_v1_Resource | null);
    'args_json'?: (string);
    'context_json'?: (string);
    'options'?: (_toolgate_v1_RunOptions | null);
    'plan'?: (_toolgate_v1_ExecutionPlan | null);
    'args_errors'?: (string)[];
    'tool_definition'?: (string);
}
export interface DecideRequest__Output {
    'session_id': (string);
    'task_type': (string);
    'actor': (_toolgate_v1_Actor__Output | null);
    'tool': (string);
    'action': (string);
    'resource': (_toolgate_v1_Resource__Output | null);
    'args_json': (string);
    'context_json': (string);
    'options': (_toolgate_v1_RunOptions__Output | null);
    'plan': (_toolgate_v1_ExecutionPlan__Output | null);
    'args_errors': (string)[];
    'tool_definition': (string);
}
