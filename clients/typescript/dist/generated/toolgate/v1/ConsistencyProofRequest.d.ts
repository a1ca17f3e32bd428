import type { Long } from '@grpc/proto-loader';
export interface ConsistencyProofRequest {
    'old_size'?: (number | string | Long);
    'new_size'?: (number | string | Long);
}
export interface ConsistencyProofRequest__Output {
    'old_size': (number);
    'new_size': (number);
}
