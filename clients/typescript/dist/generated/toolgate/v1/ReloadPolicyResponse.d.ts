import type { Long } from '@grpc/proto-loader';
export interface ReloadPolicyResponse {
    'policy_version'?: (string);
    'source'?: (string);
    'policies'?: (number);
    'seq'?: (number | string | Long);
}
export interface ReloadPolicyResponse__Output {
    'policy_version': (string);
    'source': (string);
    'policies': (number);
    'seq': (number);
}
