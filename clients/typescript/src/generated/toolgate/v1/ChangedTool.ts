// Original file: proto/toolgate/v1/gate.proto


export interface ChangedTool {
  'tool'?: (string);
  'parts'?: (string)[];
  'pinned'?: (string);
}

export interface ChangedTool__Output {
  'tool': (string);
  'parts': (string)[];
  'pinned': (string);
}
