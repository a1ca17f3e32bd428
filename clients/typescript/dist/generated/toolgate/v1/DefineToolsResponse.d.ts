import type { ChangedTool as _toolgate_v1_ChangedTool, ChangedTool__Output as _toolgate_v1_ChangedTool__Output } from '../../toolgate/v1/ChangedTool.js';
export interface DefineToolsResponse {
    'changed'?: (_toolgate_v1_ChangedTool)[];
}
export interface DefineToolsResponse__Output {
    'changed': (_toolgate_v1_ChangedTool__Output)[];
}
