export declare const ExecutionStatus: {
    readonly EXECUTION_STATUS_UNSPECIFIED: "EXECUTION_STATUS_UNSPECIFIED";
    readonly OK: "OK";
    readonly ERROR: "ERROR";
    readonly TIMEOUT: "TIMEOUT";
};
export type ExecutionStatus = 'EXECUTION_STATUS_UNSPECIFIED' | 0 | 'OK' | 1 | 'ERROR' | 2 | 'TIMEOUT' | 3;
export type ExecutionStatus__Output = typeof ExecutionStatus[keyof typeof ExecutionStatus];
