import type { Count as _toolgate_v1_Count, Count__Output as _toolgate_v1_Count__Output } from '../../toolgate/v1/Count.js';
import type { Long } from '@grpc/proto-loader';
export interface StatsResponse {
    'total'?: (number | string | Long);
    'by_outcome'?: (_toolgate_v1_Count)[];
    'by_tool'?: (_toolgate_v1_Count)[];
    'by_actor'?: (_toolgate_v1_Count)[];
    'by_kind'?: (_toolgate_v1_Count)[];
}
export interface StatsResponse__Output {
    'total': (number);
    'by_outcome': (_toolgate_v1_Count__Output)[];
    'by_tool': (_toolgate_v1_Count__Output)[];
    'by_actor': (_toolgate_v1_Count__Output)[];
    'by_kind': (_toolgate_v1_Count__Output)[];
}
