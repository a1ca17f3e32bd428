import type { Problem as _toolgate_v1_Problem, Problem__Output as _toolgate_v1_Problem__Output } from '../../toolgate/v1/Problem.js';
import type { Long } from '@grpc/proto-loader';
export interface VerifyResponse {
    'intact'?: (boolean);
    'checked'?: (number | string | Long);
    'problems'?: (_toolgate_v1_Problem)[];
    'last_seq'?: (number | string | Long);
    'last_hash'?: (string);
}
export interface VerifyResponse__Output {
    'intact': (boolean);
    'checked': (number);
    'problems': (_toolgate_v1_Problem__Output)[];
    'last_seq': (number);
    'last_hash': (string);
}
