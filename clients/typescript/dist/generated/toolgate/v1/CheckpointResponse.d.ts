import type { Long } from '@grpc/proto-loader';
export interface CheckpointResponse {
    'note'?: (string);
    'size'?: (number | string | Long);
    'seq'?: (number | string | Long);
    'cosigned'?: (string);
}
export interface CheckpointResponse__Output {
    'note': (string);
    'size': (number);
    'seq': (number);
    'cosigned': (string);
}
