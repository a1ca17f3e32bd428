import type { Long } from '@grpc/proto-loader';
export interface CheckpointRequest {
    'size'?: (number | string | Long);
    'node_id'?: (string);
}
export interface CheckpointRequest__Output {
    'size': (number);
    'node_id': (string);
}
