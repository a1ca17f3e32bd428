export declare const Outcome: {
    readonly OUTCOME_UNSPECIFIED: "OUTCOME_UNSPECIFIED";
    readonly ALLOW: "ALLOW";
    readonly DENY: "DENY";
    readonly REQUIRE_APPROVAL: "REQUIRE_APPROVAL";
    readonly DRY_RUN: "DRY_RUN";
    readonly REWRITE: "REWRITE";
};
export type Outcome = 'OUTCOME_UNSPECIFIED' | 0 | 'ALLOW' | 1 | 'DENY' | 2 | 'REQUIRE_APPROVAL' | 3 | 'DRY_RUN' | 4 | 'REWRITE' | 5;
export type Outcome__Output = typeof Outcome[keyof typeof Outcome];
