import type { Long } from '@grpc/proto-loader';
export interface RecordRefusalResponse {
    'seq'?: (number | string | Long);
}
export interface RecordRefusalResponse__Output {
    'seq': (number);
}
