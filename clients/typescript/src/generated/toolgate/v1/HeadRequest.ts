// Original file: proto/toolgate/v1/audit.proto


export interface HeadRequest {
  'node_id'?: (string);
}

export interface HeadRequest__Output {
  'node_id': (string);
}
