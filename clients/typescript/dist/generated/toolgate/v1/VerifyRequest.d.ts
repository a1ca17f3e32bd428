import type { Long } from '@grpc/proto-loader';
export interface VerifyRequest {
    'from_seq'?: (number | string | Long);
    'to_seq'?: (number | string | Long);
    'node_id'?: (string);
}
export interface VerifyRequest__Output {
    'from_seq': (number);
    'to_seq': (number);
    'node_id': (string);
}
