import type { Long } from '@grpc/proto-loader';
export interface Problem {
    'seq'?: (number | string | Long);
    'kind'?: (string);
    'message'?: (string);
}
export interface Problem__Output {
    'seq': (number);
    'kind': (string);
    'message': (string);
}
