// Original file: proto/toolgate/v1/approvals.proto
export {};
