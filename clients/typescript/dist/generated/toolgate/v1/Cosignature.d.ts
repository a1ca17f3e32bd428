import type { Long } from '@grpc/proto-loader';
export interface Cosignature {
    'seq'?: (number | string | Long);
    'witness'?: (string);
    'size'?: (number | string | Long);
    'time'?: (number | string | Long);
    'line'?: (string);
}
export interface Cosignature__Output {
    'seq': (number);
    'witness': (string);
    'size': (number);
    'time': (number);
    'line': (string);
}
