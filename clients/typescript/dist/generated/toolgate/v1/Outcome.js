// Original file: proto/toolgate/v1/gate.proto
export const Outcome = {
    OUTCOME_UNSPECIFIED: 'OUTCOME_UNSPECIFIED',
    ALLOW: 'ALLOW',
    DENY: 'DENY',
    REQUIRE_APPROVAL: 'REQUIRE_APPROVAL',
    DRY_RUN: 'DRY_RUN',
    REWRITE: 'REWRITE',
};
