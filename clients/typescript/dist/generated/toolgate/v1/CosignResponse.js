// Original file: proto/toolgate/v1/fleet.proto
export {};
