export declare const ApprovalState: {
    readonly APPROVAL_STATE_UNSPECIFIED: "APPROVAL_STATE_UNSPECIFIED";
    readonly PENDING: "PENDING";
    readonly APPROVED: "APPROVED";
    readonly REJECTED: "REJECTED";
    readonly EXPIRED: "EXPIRED";
    readonly WITHDRAWN: "WITHDRAWN";
};
export type ApprovalState = 'APPROVAL_STATE_UNSPECIFIED' | 0 | 'PENDING' | 1 | 'APPROVED' | 2 | 'REJECTED' | 3 | 'EXPIRED' | 4 | 'WITHDRAWN' | 5;
export type ApprovalState__Output = typeof ApprovalState[keyof typeof ApprovalState];
