// Original file: proto/toolgate/v1/gate.proto

export const Outcome = {
  OUTCOME_UNSPECIFIED: 'OUTCOME_UNSPECIFIED',
  ALLOW: 'ALLOW',
  DENY: 'DENY',
  REQUIRE_APPROVAL: 'REQUIRE_APPROVAL',
  DRY_RUN: 'DRY_RUN',
  REWRITE: 'REWRITE',
} as const;

export type Outcome =
  | 'OUTCOME_UNSPECIFIED'
  | 0
  | 'ALLOW'
  | 1
  | 'DENY'
  | 2
  | 'REQUIRE_APPROVAL'
  | 3
  | 'DRY_RUN'
  | 4
  | 'REWRITE'
  | 5

export type Outcome__Output = typeof Outcome[keyof typeof Outcome]
