from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    ALLOW: _ClassVar[Outcome]
    DENY: _ClassVar[Outcome]
    REQUIRE_APPROVAL: _ClassVar[Outcome]
    DRY_RUN: _ClassVar[Outcome]
    REWRITE: _ClassVar[Outcome]

class ExecutionStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EXECUTION_STATUS_UNSPECIFIED: _ClassVar[ExecutionStatus]
    OK: _ClassVar[ExecutionStatus]
    ERROR: _ClassVar[ExecutionStatus]
    TIMEOUT: _ClassVar[ExecutionStatus]
OUTCOME_UNSPECIFIED: Outcome
ALLOW: Outcome
DENY: Outcome
REQUIRE_APPROVAL: Outcome
DRY_RUN: Outcome
REWRITE: Outcome
EXECUTION_STATUS_UNSPECIFIED: ExecutionStatus
OK: ExecutionStatus
ERROR: ExecutionStatus
TIMEOUT: ExecutionStatus

class Actor(_message.Message):
    __slots__ = ("id", "kind", "delegation_chain")
    ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DELEGATION_CHAIN_FIELD_NUMBER: _ClassVar[int]
    id: str
    kind: str
    delegation_chain: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, id: _Optional[str] = ..., kind: _Optional[str] = ..., delegation_chain: _Optional[_Iterable[str]] = ...) -> None: ...

class Resource(_message.Message):
    __slots__ = ("type", "id", "classification")
    TYPE_FIELD_NUMBER: _ClassVar[int]
    ID_FIELD_NUMBER: _ClassVar[int]
    CLASSIFICATION_FIELD_NUMBER: _ClassVar[int]
    type: str
    id: str
    classification: str
    def __init__(self, type: _Optional[str] = ..., id: _Optional[str] = ..., classification: _Optional[str] = ...) -> None: ...

class RunOptions(_message.Message):
    __slots__ = ("allow_write", "allow_bash", "max_output_chars")
    ALLOW_WRITE_FIELD_NUMBER: _ClassVar[int]
    ALLOW_BASH_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_CHARS_FIELD_NUMBER: _ClassVar[int]
    allow_write: bool
    allow_bash: bool
    max_output_chars: int
    def __init__(self, allow_write: _Optional[bool] = ..., allow_bash: _Optional[bool] = ..., max_output_chars: _Optional[int] = ...) -> None: ...

class ExecutionPlan(_message.Message):
    __slots__ = ("dry_run", "idempotency_key", "timeout_ms", "rollback_hint")
    DRY_RUN_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    ROLLBACK_HINT_FIELD_NUMBER: _ClassVar[int]
    dry_run: bool
    idempotency_key: str
    timeout_ms: int
    rollback_hint: str
    def __init__(self, dry_run: _Optional[bool] = ..., idempotency_key: _Optional[str] = ..., timeout_ms: _Optional[int] = ..., rollback_hint: _Optional[str] = ...) -> None: ...

class DecideRequest(_message.Message):
    __slots__ = ("session_id", "task_type", "actor", "tool", "action", "resource", "args_json", "context_json", "options", "plan", "args_errors", "tool_definition")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    CONTEXT_JSON_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    PLAN_FIELD_NUMBER: _ClassVar[int]
    ARGS_ERRORS_FIELD_NUMBER: _ClassVar[int]
    TOOL_DEFINITION_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    task_type: str
    actor: Actor
    tool: str
    action: str
    resource: Resource
    args_json: str
    context_json: str
    options: RunOptions
    plan: ExecutionPlan
    args_errors: _containers.RepeatedScalarFieldContainer[str]
    tool_definition: str
    def __init__(self, session_id: _Optional[str] = ..., task_type: _Optional[str] = ..., actor: _Optional[_Union[Actor, _Mapping]] = ..., tool: _Optional[str] = ..., action: _Optional[str] = ..., resource: _Optional[_Union[Resource, _Mapping]] = ..., args_json: _Optional[str] = ..., context_json: _Optional[str] = ..., options: _Optional[_Union[RunOptions, _Mapping]] = ..., plan: _Optional[_Union[ExecutionPlan, _Mapping]] = ..., args_errors: _Optional[_Iterable[str]] = ..., tool_definition: _Optional[str] = ...) -> None: ...

class DecideResponse(_message.Message):
    __slots__ = ("decision_id", "outcome", "reason", "policy_ids", "args_hash", "max_output_chars", "timeout_ms", "rewritten_args_json", "seq", "policy_version")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    POLICY_IDS_FIELD_NUMBER: _ClassVar[int]
    ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_CHARS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    REWRITTEN_ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    POLICY_VERSION_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    outcome: Outcome
    reason: str
    policy_ids: _containers.RepeatedScalarFieldContainer[str]
    args_hash: str
    max_output_chars: int
    timeout_ms: int
    rewritten_args_json: str
    seq: int
    policy_version: str
    def __init__(self, decision_id: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., reason: _Optional[str] = ..., policy_ids: _Optional[_Iterable[str]] = ..., args_hash: _Optional[str] = ..., max_output_chars: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., rewritten_args_json: _Optional[str] = ..., seq: _Optional[int] = ..., policy_version: _Optional[str] = ...) -> None: ...

class NeverAllowedRequest(_message.Message):
    __slots__ = ("actor", "tools", "options")
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    actor: Actor
    tools: _containers.RepeatedCompositeFieldContainer[ToolAction]
    options: RunOptions
    def __init__(self, actor: _Optional[_Union[Actor, _Mapping]] = ..., tools: _Optional[_Iterable[_Union[ToolAction, _Mapping]]] = ..., options: _Optional[_Union[RunOptions, _Mapping]] = ...) -> None: ...

class ToolAction(_message.Message):
    __slots__ = ("tool", "action")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    tool: str
    action: str
    def __init__(self, tool: _Optional[str] = ..., action: _Optional[str] = ...) -> None: ...

class NeverAllowedResponse(_message.Message):
    __slots__ = ("tools",)
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    tools: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, tools: _Optional[_Iterable[str]] = ...) -> None: ...

class DefineToolsRequest(_message.Message):
    __slots__ = ("actor", "session_id", "tools")
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TOOLS_FIELD_NUMBER: _ClassVar[int]
    actor: Actor
    session_id: str
    tools: _containers.RepeatedCompositeFieldContainer[ToolDefinition]
    def __init__(self, actor: _Optional[_Union[Actor, _Mapping]] = ..., session_id: _Optional[str] = ..., tools: _Optional[_Iterable[_Union[ToolDefinition, _Mapping]]] = ...) -> None: ...

class ToolDefinition(_message.Message):
    __slots__ = ("tool", "hash", "parts")
    class PartsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    TOOL_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    tool: str
    hash: str
    parts: _containers.ScalarMap[str, str]
    def __init__(self, tool: _Optional[str] = ..., hash: _Optional[str] = ..., parts: _Optional[_Mapping[str, str]] = ...) -> None: ...

class DefineToolsResponse(_message.Message):
    __slots__ = ("changed",)
    CHANGED_FIELD_NUMBER: _ClassVar[int]
    changed: _containers.RepeatedCompositeFieldContainer[ChangedTool]
    def __init__(self, changed: _Optional[_Iterable[_Union[ChangedTool, _Mapping]]] = ...) -> None: ...

class RecordRefusalRequest(_message.Message):
    __slots__ = ("session_id", "actor", "peer", "peer_name", "reason", "count")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_FIELD_NUMBER: _ClassVar[int]
    PEER_FIELD_NUMBER: _ClassVar[int]
    PEER_NAME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    actor: Actor
    peer: str
    peer_name: str
    reason: str
    count: int
    def __init__(self, session_id: _Optional[str] = ..., actor: _Optional[_Union[Actor, _Mapping]] = ..., peer: _Optional[str] = ..., peer_name: _Optional[str] = ..., reason: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class RecordRefusalResponse(_message.Message):
    __slots__ = ("seq",)
    SEQ_FIELD_NUMBER: _ClassVar[int]
    seq: int
    def __init__(self, seq: _Optional[int] = ...) -> None: ...

class ChangedTool(_message.Message):
    __slots__ = ("tool", "parts", "pinned")
    TOOL_FIELD_NUMBER: _ClassVar[int]
    PARTS_FIELD_NUMBER: _ClassVar[int]
    PINNED_FIELD_NUMBER: _ClassVar[int]
    tool: str
    parts: _containers.RepeatedScalarFieldContainer[str]
    pinned: str
    def __init__(self, tool: _Optional[str] = ..., parts: _Optional[_Iterable[str]] = ..., pinned: _Optional[str] = ...) -> None: ...

class ExecuteRequest(_message.Message):
    __slots__ = ("decision_id", "args_json", "duration_us", "status", "error", "output", "result_bytes", "wrap_output", "idempotency_key", "approved_in_harness")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    DURATION_US_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    RESULT_BYTES_FIELD_NUMBER: _ClassVar[int]
    WRAP_OUTPUT_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    APPROVED_IN_HARNESS_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    args_json: str
    duration_us: int
    status: ExecutionStatus
    error: str
    output: str
    result_bytes: int
    wrap_output: bool
    idempotency_key: str
    approved_in_harness: str
    def __init__(self, decision_id: _Optional[str] = ..., args_json: _Optional[str] = ..., duration_us: _Optional[int] = ..., status: _Optional[_Union[ExecutionStatus, str]] = ..., error: _Optional[str] = ..., output: _Optional[str] = ..., result_bytes: _Optional[int] = ..., wrap_output: _Optional[bool] = ..., idempotency_key: _Optional[str] = ..., approved_in_harness: _Optional[str] = ...) -> None: ...

class ExecuteResponse(_message.Message):
    __slots__ = ("output", "truncated", "result_bytes", "seq", "violation")
    OUTPUT_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    RESULT_BYTES_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    VIOLATION_FIELD_NUMBER: _ClassVar[int]
    output: str
    truncated: bool
    result_bytes: int
    seq: int
    violation: str
    def __init__(self, output: _Optional[str] = ..., truncated: _Optional[bool] = ..., result_bytes: _Optional[int] = ..., seq: _Optional[int] = ..., violation: _Optional[str] = ...) -> None: ...
