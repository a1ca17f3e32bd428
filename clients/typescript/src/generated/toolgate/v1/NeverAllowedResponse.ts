// Original file: proto/toolgate/v1/gate.proto


export interface NeverAllowedResponse {
  'tools'?: (string)[];
}

export interface NeverAllowedResponse__Output {
  'tools': (string)[];
}
