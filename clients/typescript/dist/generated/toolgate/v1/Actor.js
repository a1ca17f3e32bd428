// Original file: proto/toolgate/v1/gate.proto
export {};
