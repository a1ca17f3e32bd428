import type { Long } from '@grpc/proto-loader';
export interface PositionResponse {
    'seq'?: (number | string | Long);
    'cosigned'?: (number | string | Long);
}
export interface PositionResponse__Output {
    'seq': (number);
    'cosigned': (number);
}
