// Original file: proto/toolgate/v1/gate.proto
export const ExecutionStatus = {
    EXECUTION_STATUS_UNSPECIFIED: 'EXECUTION_STATUS_UNSPECIFIED',
    OK: 'OK',
    ERROR: 'ERROR',
    TIMEOUT: 'TIMEOUT',
};
