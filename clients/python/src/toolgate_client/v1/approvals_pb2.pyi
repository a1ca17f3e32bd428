from toolgate_client.v1 import gate_pb2 as _gate_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ApprovalState(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    APPROVAL_STATE_UNSPECIFIED: _ClassVar[ApprovalState]
    PENDING: _ClassVar[ApprovalState]
    APPROVED: _ClassVar[ApprovalState]
    REJECTED: _ClassVar[ApprovalState]
    EXPIRED: _ClassVar[ApprovalState]
    WITHDRAWN: _ClassVar[ApprovalState]
APPROVAL_STATE_UNSPECIFIED: ApprovalState
PENDING: ApprovalState
APPROVED: ApprovalState
REJECTED: ApprovalState
EXPIRED: ApprovalState
WITHDRAWN: ApprovalState

class ListPendingRequest(_message.Message):
    __slots__ = ("session_id", "actor_id", "tool", "limit")
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    session_id: str
    actor_id: str
    tool: str
    limit: int
    def __init__(self, session_id: _Optional[str] = ..., actor_id: _Optional[str] = ..., tool: _Optional[str] = ..., limit: _Optional[int] = ...) -> None: ...

class ListPendingResponse(_message.Message):
    __slots__ = ("approvals", "total")
    APPROVALS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    approvals: _containers.RepeatedCompositeFieldContainer[Approval]
    total: int
    def __init__(self, approvals: _Optional[_Iterable[_Union[Approval, _Mapping]]] = ..., total: _Optional[int] = ...) -> None: ...

class VerdictRequest(_message.Message):
    __slots__ = ("decision_id", "approver", "comment")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    APPROVER_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    approver: str
    comment: str
    def __init__(self, decision_id: _Optional[str] = ..., approver: _Optional[str] = ..., comment: _Optional[str] = ...) -> None: ...

class WithdrawRequest(_message.Message):
    __slots__ = ("decision_id", "reason")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    reason: str
    def __init__(self, decision_id: _Optional[str] = ..., reason: _Optional[str] = ...) -> None: ...

class AwaitRequest(_message.Message):
    __slots__ = ("decision_id", "timeout_ms")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    timeout_ms: int
    def __init__(self, decision_id: _Optional[str] = ..., timeout_ms: _Optional[int] = ...) -> None: ...

class Approval(_message.Message):
    __slots__ = ("decision_id", "state", "session_id", "actor_id", "tool", "action", "resource_type", "resource_id", "args_hash", "reason", "policy_ids", "args_json", "requested_at", "expires_at", "approver", "comment", "decided_at", "verdict_outcome", "seq", "idempotency_key")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    STATE_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    POLICY_IDS_FIELD_NUMBER: _ClassVar[int]
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    REQUESTED_AT_FIELD_NUMBER: _ClassVar[int]
    EXPIRES_AT_FIELD_NUMBER: _ClassVar[int]
    APPROVER_FIELD_NUMBER: _ClassVar[int]
    COMMENT_FIELD_NUMBER: _ClassVar[int]
    DECIDED_AT_FIELD_NUMBER: _ClassVar[int]
    VERDICT_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    IDEMPOTENCY_KEY_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    state: ApprovalState
    session_id: str
    actor_id: str
    tool: str
    action: str
    resource_type: str
    resource_id: str
    args_hash: str
    reason: str
    policy_ids: _containers.RepeatedScalarFieldContainer[str]
    args_json: str
    requested_at: str
    expires_at: str
    approver: str
    comment: str
    decided_at: str
    verdict_outcome: _gate_pb2.Outcome
    seq: int
    idempotency_key: str
    def __init__(self, decision_id: _Optional[str] = ..., state: _Optional[_Union[ApprovalState, str]] = ..., session_id: _Optional[str] = ..., actor_id: _Optional[str] = ..., tool: _Optional[str] = ..., action: _Optional[str] = ..., resource_type: _Optional[str] = ..., resource_id: _Optional[str] = ..., args_hash: _Optional[str] = ..., reason: _Optional[str] = ..., policy_ids: _Optional[_Iterable[str]] = ..., args_json: _Optional[str] = ..., requested_at: _Optional[str] = ..., expires_at: _Optional[str] = ..., approver: _Optional[str] = ..., comment: _Optional[str] = ..., decided_at: _Optional[str] = ..., verdict_outcome: _Optional[_Union[_gate_pb2.Outcome, str]] = ..., seq: _Optional[int] = ..., idempotency_key: _Optional[str] = ...) -> None: ...
