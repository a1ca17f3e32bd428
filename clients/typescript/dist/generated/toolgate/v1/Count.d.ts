import type { Long } from '@grpc/proto-loader';
export interface Count {
    'key'?: (string);
    'count'?: (number | string | Long);
}
export interface Count__Output {
    'key': (string);
    'count': (number);
}
