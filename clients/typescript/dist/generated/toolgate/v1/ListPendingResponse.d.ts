import type { Approval as _toolgate_v1_Approval, Approval__Output as _toolgate_v1_Approval__Output } from '../../toolgate/v1/Approval.js';
import type { Long } from '@grpc/proto-loader';
export interface ListPendingResponse {
    'approvals'?: (_toolgate_v1_Approval)[];
    'total'?: (number | string | Long);
}
export interface ListPendingResponse__Output {
    'approvals': (_toolgate_v1_Approval__Output)[];
    'total': (number);
}
