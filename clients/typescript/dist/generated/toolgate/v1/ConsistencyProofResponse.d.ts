import type { Long } from '@grpc/proto-loader';
export interface ConsistencyProofResponse {
    'old_size'?: (number | string | Long);
    'new_size'?: (number | string | Long);
    'hashes'?: (Buffer | Uint8Array | string)[];
    'old_root'?: (Buffer | Uint8Array | string);
    'new_root'?: (Buffer | Uint8Array | string);
}
export interface ConsistencyProofResponse__Output {
    'old_size': (number);
    'new_size': (number);
    'hashes': (Buffer)[];
    'old_root': (Buffer);
    'new_root': (Buffer);
}
