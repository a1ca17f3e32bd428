import type { Long } from '@grpc/proto-loader';
export interface ExecuteResponse {
    'output'?: (string);
    'truncated'?: (boolean);
    'result_bytes'?: (number | string | Long);
    'seq'?: (number | string | Long);
    'violation'?: (string);
}
export interface ExecuteResponse__Output {
    'output': (string);
    'truncated': (boolean);
    'result_bytes': (number);
    'seq': (number);
    'violation': (string);
}
