// Original file: proto/toolgate/v1/approvals.proto

export const ApprovalState = {
  APPROVAL_STATE_UNSPECIFIED: 'APPROVAL_STATE_UNSPECIFIED',
  PENDING: 'PENDING',
  APPROVED: 'APPROVED',
  REJECTED: 'REJECTED',
  EXPIRED: 'EXPIRED',
  WITHDRAWN: 'WITHDRAWN',
} as const;

export type ApprovalState =
  | 'APPROVAL_STATE_UNSPECIFIED'
  | 0
  | 'PENDING'
  | 1
  | 'APPROVED'
  | 2
  | 'REJECTED'
  | 3
  | 'EXPIRED'
  | 4
  | 'WITHDRAWN'
  | 5

export type ApprovalState__Output = typeof ApprovalState[keyof typeof ApprovalState]
