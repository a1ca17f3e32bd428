import type { Long } from '@grpc/proto-loader';
export interface TlogProofRequest {
    'seq'?: (number | string | Long);
    'tree_size'?: (number | string | Long);
}
export interface TlogProofRequest__Output {
    'seq': (number);
    'tree_size': (number);
}
