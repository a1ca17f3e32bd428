// Original file: proto/toolgate/v1/approvals.proto
export const ApprovalState = {
    APPROVAL_STATE_UNSPECIFIED: 'APPROVAL_STATE_UNSPECIFIED',
    PENDING: 'PENDING',
    APPROVED: 'APPROVED',
    REJECTED: 'REJECTED',
    EXPIRED: 'EXPIRED',
    WITHDRAWN: 'WITHDRAWN',
};
