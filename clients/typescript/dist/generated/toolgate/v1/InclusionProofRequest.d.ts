import type { Long } from '@grpc/proto-loader';
export interface InclusionProofRequest {
    'seq'?: (number | string | Long);
    'tree_size'?: (number | string | Long);
}
export interface InclusionProofRequest__Output {
    'seq': (number);
    'tree_size': (number);
}
