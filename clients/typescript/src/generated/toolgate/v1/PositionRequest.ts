// Original file: proto/toolgate/v1/fleet.proto


export interface PositionRequest {
  'node_id'?: (string);
}

export interface PositionRequest__Output {
  'node_id': (string);
}
