// Original file: proto/toolgate/v1/audit.proto
export {};
