// Original file: proto/toolgate/v1/admin.proto
export {};
