// Original file: proto/toolgate/v1/gate.proto

export const ExecutionStatus = {
  EXECUTION_STATUS_UNSPECIFIED: 'EXECUTION_STATUS_UNSPECIFIED',
  OK: 'OK',
  ERROR: 'ERROR',
  TIMEOUT: 'TIMEOUT',
} as const;

export type ExecutionStatus =
  | 'EXECUTION_STATUS_UNSPECIFIED'
  | 0
  | 'OK'
  | 1
  | 'ERROR'
  | 2
  | 'TIMEOUT'
  | 3

export type ExecutionStatus__Output = typeof ExecutionStatus[keyof typeof ExecutionStatus]
