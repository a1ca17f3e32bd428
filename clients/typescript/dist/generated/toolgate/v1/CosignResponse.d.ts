import type { Long } from '@grpc/proto-loader';
export interface CosignResponse {
    'stored'?: (number | string | Long);
}
export interface CosignResponse__Output {
    'stored': (number);
}
