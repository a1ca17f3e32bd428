import type { Long } from '@grpc/proto-loader';
export interface HeadResponse {
    'seq'?: (number | string | Long);
    'hash'?: (string);
    'ts'?: (string);
}
export interface HeadResponse__Output {
    'seq': (number);
    'hash': (string);
    'ts': (string);
}
