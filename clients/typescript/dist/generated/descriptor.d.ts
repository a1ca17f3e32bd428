export declare const descriptor: {
    readonly nested: {
        readonly toolgate: {
            readonly nested: {
                readonly v1: {
                    readonly nested: {
                        readonly Admin: {
                            readonly methods: {
                                readonly ReloadPolicy: {
                                    readonly requestType: "ReloadPolicyRequest";
                                    readonly responseType: "ReloadPolicyResponse";
                                };
                            };
                        };
                        readonly ReloadPolicyRequest: {
                            readonly fields: {};
                        };
                        readonly ReloadPolicyResponse: {
                            readonly fields: {
                                readonly policy_version: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly source: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly policies: {
                                    readonly type: "uint32";
                                    readonly id: 3;
                                };
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly Approvals: {
                            readonly methods: {
                                readonly ListPending: {
                                    readonly requestType: "ListPendingRequest";
                                    readonly responseType: "ListPendingResponse";
                                };
                                readonly Approve: {
                                    readonly requestType: "VerdictRequest";
                                    readonly responseType: "Approval";
                                };
                                readonly Reject: {
                                    readonly requestType: "VerdictRequest";
                                    readonly responseType: "Approval";
                                };
                                readonly Await: {
                                    readonly requestType: "AwaitRequest";
                                    readonly responseType: "Approval";
                                };
                                readonly Withdraw: {
                                    readonly requestType: "WithdrawRequest";
                                    readonly responseType: "Approval";
                                };
                            };
                        };
                        readonly ApprovalState: {
                            readonly values: {
                                readonly APPROVAL_STATE_UNSPECIFIED: 0;
                                readonly PENDING: 1;
                                readonly APPROVED: 2;
                                readonly REJECTED: 3;
                                readonly EXPIRED: 4;
                                readonly WITHDRAWN: 5;
                            };
                        };
                        readonly ListPendingRequest: {
                            readonly fields: {
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly actor_id: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly limit: {
                                    readonly type: "uint32";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly ListPendingResponse: {
                            readonly fields: {
                                readonly approvals: {
                                    readonly rule: "repeated";
                                    readonly type: "Approval";
                                    readonly id: 1;
                                };
                                readonly total: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly VerdictRequest: {
                            readonly fields: {
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly approver: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly comment: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly WithdrawRequest: {
                            readonly fields: {
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly reason: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly AwaitRequest: {
                            readonly fields: {
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly timeout_ms: {
                                    readonly type: "uint32";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly Approval: {
                            readonly fields: {
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly state: {
                                    readonly type: "ApprovalState";
                                    readonly id: 2;
                                };
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly actor_id: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                                readonly action: {
                                    readonly type: "string";
                                    readonly id: 6;
                                };
                                readonly resource_type: {
                                    readonly type: "string";
                                    readonly id: 7;
                                };
                                readonly resource_id: {
                                    readonly type: "string";
                                    readonly id: 8;
                                };
                                readonly args_hash: {
                                    readonly type: "string";
                                    readonly id: 9;
                                };
                                readonly reason: {
                                    readonly type: "string";
                                    readonly id: 10;
                                };
                                readonly policy_ids: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 11;
                                };
                                readonly args_json: {
                                    readonly type: "string";
                                    readonly id: 12;
                                };
                                readonly requested_at: {
                                    readonly type: "string";
                                    readonly id: 13;
                                };
                                readonly expires_at: {
                                    readonly type: "string";
                                    readonly id: 14;
                                };
                                readonly approver: {
                                    readonly type: "string";
                                    readonly id: 15;
                                };
                                readonly comment: {
                                    readonly type: "string";
                                    readonly id: 16;
                                };
                                readonly decided_at: {
                                    readonly type: "string";
                                    readonly id: 17;
                                };
                                readonly verdict_outcome: {
                                    readonly type: "Outcome";
                                    readonly id: 18;
                                };
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 19;
                                };
                                readonly idempotency_key: {
                                    readonly type: "string";
                                    readonly id: 20;
                                };
                            };
                        };
                        readonly Gate: {
                            readonly methods: {
                                readonly Decide: {
                                    readonly requestType: "DecideRequest";
                                    readonly responseType: "DecideResponse";
                                };
                                readonly Execute: {
                                    readonly requestType: "ExecuteRequest";
                                    readonly responseType: "ExecuteResponse";
                                };
                                readonly NeverAllowed: {
                                    readonly requestType: "NeverAllowedRequest";
                                    readonly responseType: "NeverAllowedResponse";
                                };
                                readonly DefineTools: {
                                    readonly requestType: "DefineToolsRequest";
                                    readonly responseType: "DefineToolsResponse";
                                };
                                readonly RecordRefusal: {
                                    readonly requestType: "RecordRefusalRequest";
                                    readonly responseType: "RecordRefusalResponse";
                                };
                            };
                        };
                        readonly Actor: {
                            readonly fields: {
                                readonly id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly kind: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly delegation_chain: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly Resource: {
                            readonly fields: {
                                readonly type: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly id: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly classification: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly RunOptions: {
                            readonly fields: {
                                readonly allow_write: {
                                    readonly type: "bool";
                                    readonly id: 1;
                                };
                                readonly allow_bash: {
                                    readonly type: "bool";
                                    readonly id: 2;
                                };
                                readonly max_output_chars: {
                                    readonly type: "uint32";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly ExecutionPlan: {
                            readonly fields: {
                                readonly dry_run: {
                                    readonly type: "bool";
                                    readonly id: 1;
                                };
                                readonly idempotency_key: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly timeout_ms: {
                                    readonly type: "uint32";
                                    readonly id: 3;
                                };
                                readonly rollback_hint: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly DecideRequest: {
                            readonly fields: {
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly task_type: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly actor: {
                                    readonly type: "Actor";
                                    readonly id: 3;
                                };
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly action: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                                readonly resource: {
                                    readonly type: "Resource";
                                    readonly id: 6;
                                };
                                readonly args_json: {
                                    readonly type: "string";
                                    readonly id: 7;
                                };
                                readonly context_json: {
                                    readonly type: "string";
                                    readonly id: 8;
                                };
                                readonly options: {
                                    readonly type: "RunOptions";
                                    readonly id: 9;
                                };
                                readonly plan: {
                                    readonly type: "ExecutionPlan";
                                    readonly id: 10;
                                };
                                readonly args_errors: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 11;
                                };
                                readonly tool_definition: {
                                    readonly type: "string";
                                    readonly id: 12;
                                };
                            };
                        };
                        readonly Outcome: {
                            readonly values: {
                                readonly OUTCOME_UNSPECIFIED: 0;
                                readonly ALLOW: 1;
                                readonly DENY: 2;
                                readonly REQUIRE_APPROVAL: 3;
                                readonly DRY_RUN: 4;
                                readonly REWRITE: 5;
                            };
                        };
                        readonly DecideResponse: {
                            readonly fields: {
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly outcome: {
                                    readonly type: "Outcome";
                                    readonly id: 2;
                                };
                                readonly reason: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly policy_ids: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly args_hash: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                                readonly max_output_chars: {
                                    readonly type: "uint32";
                                    readonly id: 6;
                                };
                                readonly timeout_ms: {
                                    readonly type: "uint32";
                                    readonly id: 7;
                                };
                                readonly rewritten_args_json: {
                                    readonly type: "string";
                                    readonly id: 8;
                                };
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 9;
                                };
                                readonly policy_version: {
                                    readonly type: "string";
                                    readonly id: 10;
                                };
                            };
                        };
                        readonly NeverAllowedRequest: {
                            readonly fields: {
                                readonly actor: {
                                    readonly type: "Actor";
                                    readonly id: 1;
                                };
                                readonly tools: {
                                    readonly rule: "repeated";
                                    readonly type: "ToolAction";
                                    readonly id: 2;
                                };
                                readonly options: {
                                    readonly type: "RunOptions";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly ToolAction: {
                            readonly fields: {
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly action: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly NeverAllowedResponse: {
                            readonly fields: {
                                readonly tools: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                            };
                        };
                        readonly DefineToolsRequest: {
                            readonly fields: {
                                readonly actor: {
                                    readonly type: "Actor";
                                    readonly id: 1;
                                };
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly tools: {
                                    readonly rule: "repeated";
                                    readonly type: "ToolDefinition";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly ToolDefinition: {
                            readonly fields: {
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly hash: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly parts: {
                                    readonly keyType: "string";
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly DefineToolsResponse: {
                            readonly fields: {
                                readonly changed: {
                                    readonly rule: "repeated";
                                    readonly type: "ChangedTool";
                                    readonly id: 1;
                                };
                            };
                        };
                        readonly RecordRefusalRequest: {
                            readonly fields: {
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly actor: {
                                    readonly type: "Actor";
                                    readonly id: 2;
                                };
                                readonly peer: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly peer_name: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly reason: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                                readonly count: {
                                    readonly type: "uint64";
                                    readonly id: 6;
                                };
                            };
                        };
                        readonly RecordRefusalResponse: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                            };
                        };
                        readonly ChangedTool: {
                            readonly fields: {
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly parts: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly pinned: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly ExecutionStatus: {
                            readonly values: {
                                readonly EXECUTION_STATUS_UNSPECIFIED: 0;
                                readonly OK: 1;
                                readonly ERROR: 2;
                                readonly TIMEOUT: 3;
                            };
                        };
                        readonly ExecuteRequest: {
                            readonly oneofs: {
                                readonly _output: {
                                    readonly oneof: readonly ["output"];
                                };
                            };
                            readonly fields: {
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly args_json: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly duration_us: {
                                    readonly type: "uint64";
                                    readonly id: 3;
                                };
                                readonly status: {
                                    readonly type: "ExecutionStatus";
                                    readonly id: 4;
                                };
                                readonly error: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                                readonly output: {
                                    readonly type: "string";
                                    readonly id: 6;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly result_bytes: {
                                    readonly type: "uint64";
                                    readonly id: 7;
                                };
                                readonly wrap_output: {
                                    readonly type: "bool";
                                    readonly id: 8;
                                };
                                readonly idempotency_key: {
                                    readonly type: "string";
                                    readonly id: 9;
                                };
                                readonly approved_in_harness: {
                                    readonly type: "string";
                                    readonly id: 10;
                                };
                            };
                        };
                        readonly ExecuteResponse: {
                            readonly fields: {
                                readonly output: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly truncated: {
                                    readonly type: "bool";
                                    readonly id: 2;
                                };
                                readonly result_bytes: {
                                    readonly type: "uint64";
                                    readonly id: 3;
                                };
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 4;
                                };
                                readonly violation: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly Audit: {
                            readonly methods: {
                                readonly Query: {
                                    readonly requestType: "QueryRequest";
                                    readonly responseType: "QueryResponse";
                                };
                                readonly ExportCsv: {
                                    readonly requestType: "ExportRequest";
                                    readonly responseType: "CsvChunk";
                                    readonly responseStream: true;
                                };
                                readonly Verify: {
                                    readonly requestType: "VerifyRequest";
                                    readonly responseType: "VerifyResponse";
                                };
                                readonly Head: {
                                    readonly requestType: "HeadRequest";
                                    readonly responseType: "HeadResponse";
                                };
                                readonly Stats: {
                                    readonly requestType: "StatsRequest";
                                    readonly responseType: "StatsResponse";
                                };
                                readonly HashArgs: {
                                    readonly requestType: "HashArgsRequest";
                                    readonly responseType: "HashArgsResponse";
                                };
                                readonly Checkpoint: {
                                    readonly requestType: "CheckpointRequest";
                                    readonly responseType: "CheckpointResponse";
                                };
                                readonly InclusionProof: {
                                    readonly requestType: "InclusionProofRequest";
                                    readonly responseType: "InclusionProofResponse";
                                };
                                readonly TlogProof: {
                                    readonly requestType: "TlogProofRequest";
                                    readonly responseType: "TlogProofResponse";
                                };
                                readonly ConsistencyProof: {
                                    readonly requestType: "ConsistencyProofRequest";
                                    readonly responseType: "ConsistencyProofResponse";
                                };
                                readonly Subscribe: {
                                    readonly requestType: "SubscribeRequest";
                                    readonly responseType: "Event";
                                    readonly responseStream: true;
                                };
                            };
                        };
                        readonly SubscribeRequest: {
                            readonly fields: {
                                readonly from_seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly filter: {
                                    readonly type: "Filter";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly Filter: {
                            readonly fields: {
                                readonly since: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly until: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly actor_id: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                                readonly action: {
                                    readonly type: "string";
                                    readonly id: 6;
                                };
                                readonly outcome: {
                                    readonly type: "string";
                                    readonly id: 7;
                                };
                                readonly kind: {
                                    readonly type: "string";
                                    readonly id: 8;
                                };
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 9;
                                };
                                readonly shadow_disagrees: {
                                    readonly type: "bool";
                                    readonly id: 10;
                                };
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 11;
                                };
                            };
                        };
                        readonly QueryRequest: {
                            readonly fields: {
                                readonly filter: {
                                    readonly type: "Filter";
                                    readonly id: 1;
                                };
                                readonly page_size: {
                                    readonly type: "uint32";
                                    readonly id: 2;
                                };
                                readonly page_token: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly newest_first: {
                                    readonly type: "bool";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly Event: {
                            readonly oneofs: {
                                readonly _decision_id: {
                                    readonly oneof: readonly ["decision_id"];
                                };
                                readonly _session_id: {
                                    readonly oneof: readonly ["session_id"];
                                };
                                readonly _task_type: {
                                    readonly oneof: readonly ["task_type"];
                                };
                                readonly _actor_id: {
                                    readonly oneof: readonly ["actor_id"];
                                };
                                readonly _actor_kind: {
                                    readonly oneof: readonly ["actor_kind"];
                                };
                                readonly _tool: {
                                    readonly oneof: readonly ["tool"];
                                };
                                readonly _action: {
                                    readonly oneof: readonly ["action"];
                                };
                                readonly _resource_type: {
                                    readonly oneof: readonly ["resource_type"];
                                };
                                readonly _resource_id: {
                                    readonly oneof: readonly ["resource_id"];
                                };
                                readonly _args_hash: {
                                    readonly oneof: readonly ["args_hash"];
                                };
                                readonly _outcome: {
                                    readonly oneof: readonly ["outcome"];
                                };
                                readonly _reason: {
                                    readonly oneof: readonly ["reason"];
                                };
                                readonly _policy_ids: {
                                    readonly oneof: readonly ["policy_ids"];
                                };
                                readonly _policy_version: {
                                    readonly oneof: readonly ["policy_version"];
                                };
                                readonly _max_output_chars: {
                                    readonly oneof: readonly ["max_output_chars"];
                                };
                                readonly _timeout_ms: {
                                    readonly oneof: readonly ["timeout_ms"];
                                };
                                readonly _duration_us: {
                                    readonly oneof: readonly ["duration_us"];
                                };
                                readonly _result_bytes: {
                                    readonly oneof: readonly ["result_bytes"];
                                };
                                readonly _truncated: {
                                    readonly oneof: readonly ["truncated"];
                                };
                                readonly _status: {
                                    readonly oneof: readonly ["status"];
                                };
                                readonly _error: {
                                    readonly oneof: readonly ["error"];
                                };
                                readonly _request: {
                                    readonly oneof: readonly ["request"];
                                };
                                readonly _rewritten_args_hash: {
                                    readonly oneof: readonly ["rewritten_args_hash"];
                                };
                                readonly _shadow_outcome: {
                                    readonly oneof: readonly ["shadow_outcome"];
                                };
                                readonly _shadow_reason: {
                                    readonly oneof: readonly ["shadow_reason"];
                                };
                                readonly _note: {
                                    readonly oneof: readonly ["note"];
                                };
                            };
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly event_id: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly ts: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                                readonly kind: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly decision_id: {
                                    readonly type: "string";
                                    readonly id: 5;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly session_id: {
                                    readonly type: "string";
                                    readonly id: 6;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly task_type: {
                                    readonly type: "string";
                                    readonly id: 7;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly actor_id: {
                                    readonly type: "string";
                                    readonly id: 8;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly actor_kind: {
                                    readonly type: "string";
                                    readonly id: 9;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly tool: {
                                    readonly type: "string";
                                    readonly id: 10;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly action: {
                                    readonly type: "string";
                                    readonly id: 11;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly resource_type: {
                                    readonly type: "string";
                                    readonly id: 12;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly resource_id: {
                                    readonly type: "string";
                                    readonly id: 13;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly args_hash: {
                                    readonly type: "string";
                                    readonly id: 14;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly outcome: {
                                    readonly type: "string";
                                    readonly id: 15;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly reason: {
                                    readonly type: "string";
                                    readonly id: 16;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly policy_ids: {
                                    readonly type: "string";
                                    readonly id: 17;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly policy_version: {
                                    readonly type: "string";
                                    readonly id: 18;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly max_output_chars: {
                                    readonly type: "int64";
                                    readonly id: 19;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly timeout_ms: {
                                    readonly type: "int64";
                                    readonly id: 20;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly duration_us: {
                                    readonly type: "int64";
                                    readonly id: 21;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly result_bytes: {
                                    readonly type: "int64";
                                    readonly id: 22;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly truncated: {
                                    readonly type: "int64";
                                    readonly id: 23;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly status: {
                                    readonly type: "string";
                                    readonly id: 24;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly error: {
                                    readonly type: "string";
                                    readonly id: 25;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly request: {
                                    readonly type: "string";
                                    readonly id: 26;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly prev_hash: {
                                    readonly type: "string";
                                    readonly id: 27;
                                };
                                readonly hash: {
                                    readonly type: "string";
                                    readonly id: 28;
                                };
                                readonly rewritten_args_hash: {
                                    readonly type: "string";
                                    readonly id: 29;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly shadow_outcome: {
                                    readonly type: "string";
                                    readonly id: 30;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly shadow_reason: {
                                    readonly type: "string";
                                    readonly id: 31;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly note: {
                                    readonly type: "string";
                                    readonly id: 32;
                                    readonly options: {
                                        readonly proto3_optional: true;
                                    };
                                };
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 33;
                                };
                            };
                        };
                        readonly QueryResponse: {
                            readonly fields: {
                                readonly events: {
                                    readonly rule: "repeated";
                                    readonly type: "Event";
                                    readonly id: 1;
                                };
                                readonly next_page_token: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly ExportRequest: {
                            readonly fields: {
                                readonly filter: {
                                    readonly type: "Filter";
                                    readonly id: 1;
                                };
                                readonly bom: {
                                    readonly type: "bool";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly CsvChunk: {
                            readonly fields: {
                                readonly data: {
                                    readonly type: "bytes";
                                    readonly id: 1;
                                };
                                readonly summary: {
                                    readonly type: "ExportSummary";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly ExportSummary: {
                            readonly fields: {
                                readonly rows: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly first_seq: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly last_seq: {
                                    readonly type: "uint64";
                                    readonly id: 3;
                                };
                                readonly csv_sha256: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly VerifyRequest: {
                            readonly fields: {
                                readonly from_seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly to_seq: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly Problem: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly kind: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly message: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly VerifyResponse: {
                            readonly fields: {
                                readonly intact: {
                                    readonly type: "bool";
                                    readonly id: 1;
                                };
                                readonly checked: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly problems: {
                                    readonly rule: "repeated";
                                    readonly type: "Problem";
                                    readonly id: 3;
                                };
                                readonly last_seq: {
                                    readonly type: "uint64";
                                    readonly id: 4;
                                };
                                readonly last_hash: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly HeadRequest: {
                            readonly fields: {
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                            };
                        };
                        readonly HeadResponse: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly hash: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly ts: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly StatsRequest: {
                            readonly fields: {
                                readonly since: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly until: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 3;
                                };
                            };
                        };
                        readonly Count: {
                            readonly fields: {
                                readonly key: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly count: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly StatsResponse: {
                            readonly fields: {
                                readonly total: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly by_outcome: {
                                    readonly rule: "repeated";
                                    readonly type: "Count";
                                    readonly id: 2;
                                };
                                readonly by_tool: {
                                    readonly rule: "repeated";
                                    readonly type: "Count";
                                    readonly id: 3;
                                };
                                readonly by_actor: {
                                    readonly rule: "repeated";
                                    readonly type: "Count";
                                    readonly id: 4;
                                };
                                readonly by_kind: {
                                    readonly rule: "repeated";
                                    readonly type: "Count";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly HashArgsRequest: {
                            readonly fields: {
                                readonly args_json: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                            };
                        };
                        readonly HashArgsResponse: {
                            readonly fields: {
                                readonly args_hash: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly canonical_json: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly CheckpointRequest: {
                            readonly fields: {
                                readonly size: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly CheckpointResponse: {
                            readonly fields: {
                                readonly note: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly size: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 3;
                                };
                                readonly cosigned: {
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly InclusionProofRequest: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly tree_size: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly InclusionProofResponse: {
                            readonly fields: {
                                readonly tree_size: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly leaf_index: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly leaf_hash: {
                                    readonly type: "bytes";
                                    readonly id: 3;
                                };
                                readonly hashes: {
                                    readonly rule: "repeated";
                                    readonly type: "bytes";
                                    readonly id: 4;
                                };
                                readonly root: {
                                    readonly type: "bytes";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly TlogProofRequest: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly tree_size: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly TlogProofResponse: {
                            readonly fields: {
                                readonly proof: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly tree_size: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly ConsistencyProofRequest: {
                            readonly fields: {
                                readonly old_size: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly new_size: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly ConsistencyProofResponse: {
                            readonly fields: {
                                readonly old_size: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                                readonly new_size: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly hashes: {
                                    readonly rule: "repeated";
                                    readonly type: "bytes";
                                    readonly id: 3;
                                };
                                readonly old_root: {
                                    readonly type: "bytes";
                                    readonly id: 4;
                                };
                                readonly new_root: {
                                    readonly type: "bytes";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly FleetIngest: {
                            readonly methods: {
                                readonly Position: {
                                    readonly requestType: "PositionRequest";
                                    readonly responseType: "PositionResponse";
                                };
                                readonly Ship: {
                                    readonly requestType: "ShipRequest";
                                    readonly requestStream: true;
                                    readonly responseType: "ShipResponse";
                                    readonly responseStream: true;
                                };
                                readonly Cosign: {
                                    readonly requestType: "CosignRequest";
                                    readonly responseType: "CosignResponse";
                                };
                            };
                        };
                        readonly PositionRequest: {
                            readonly fields: {
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                            };
                        };
                        readonly PositionResponse: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "int64";
                                    readonly id: 1;
                                };
                                readonly cosigned: {
                                    readonly type: "int64";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly ShipRequest: {
                            readonly fields: {
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly events: {
                                    readonly rule: "repeated";
                                    readonly type: "Event";
                                    readonly id: 2;
                                };
                                readonly cosignatures: {
                                    readonly rule: "repeated";
                                    readonly type: "Cosignature";
                                    readonly id: 3;
                                };
                                readonly witnessed: {
                                    readonly type: "Witnessed";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly Witnessed: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "int64";
                                    readonly id: 1;
                                };
                                readonly note: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly cosignatures: {
                                    readonly rule: "repeated";
                                    readonly type: "Cosignature";
                                    readonly id: 3;
                                };
                                readonly proof: {
                                    readonly rule: "repeated";
                                    readonly type: "bytes";
                                    readonly id: 4;
                                };
                            };
                        };
                        readonly ShipResponse: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "int64";
                                    readonly id: 1;
                                };
                                readonly stored: {
                                    readonly type: "uint64";
                                    readonly id: 2;
                                };
                                readonly awaiting_witnesses: {
                                    readonly type: "bool";
                                    readonly id: 3;
                                };
                                readonly witnesses: {
                                    readonly rule: "repeated";
                                    readonly type: "string";
                                    readonly id: 4;
                                };
                                readonly witnesses_required: {
                                    readonly type: "uint32";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly Cosignature: {
                            readonly fields: {
                                readonly seq: {
                                    readonly type: "int64";
                                    readonly id: 1;
                                };
                                readonly witness: {
                                    readonly type: "string";
                                    readonly id: 2;
                                };
                                readonly size: {
                                    readonly type: "uint64";
                                    readonly id: 3;
                                };
                                readonly time: {
                                    readonly type: "uint64";
                                    readonly id: 4;
                                };
                                readonly line: {
                                    readonly type: "string";
                                    readonly id: 5;
                                };
                            };
                        };
                        readonly CosignRequest: {
                            readonly fields: {
                                readonly node_id: {
                                    readonly type: "string";
                                    readonly id: 1;
                                };
                                readonly cosignatures: {
                                    readonly rule: "repeated";
                                    readonly type: "Cosignature";
                                    readonly id: 2;
                                };
                            };
                        };
                        readonly CosignResponse: {
                            readonly fields: {
                                readonly stored: {
                                    readonly type: "uint64";
                                    readonly id: 1;
                                };
                            };
                        };
                    };
                };
            };
        };
    };
};
