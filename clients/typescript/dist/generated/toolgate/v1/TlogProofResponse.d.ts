import type { Long } from '@grpc/proto-loader';
export interface TlogProofResponse {
    'proof'?: (string);
    'tree_size'?: (number | string | Long);
}
export interface TlogProofResponse__Output {
    'proof': (string);
    'tree_size': (number);
}
