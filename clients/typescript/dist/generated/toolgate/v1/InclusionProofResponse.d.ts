import type { Long } from '@grpc/proto-loader';
export interface InclusionProofResponse {
    'tree_size'?: (number | string | Long);
    'leaf_index'?: (number | string | Long);
    'leaf_hash'?: (Buffer | Uint8Array | string);
    'hashes'?: (Buffer | Uint8Array | string)[];
    'root'?: (Buffer | Uint8Array | string);
}
export interface InclusionProofResponse__Output {
    'tree_size': (number);
    'leaf_index': (number);
    'leaf_hash': (Buffer);
    'hashes': (Buffer)[];
    'root': (Buffer);
}
