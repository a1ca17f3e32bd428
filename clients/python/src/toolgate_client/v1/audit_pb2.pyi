from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SubscribeRequest(_message.Message):
    __slots__ = ("from_seq", "filter")
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    FILTER_FIELD_NUMBER: _ClassVar[int]
    from_seq: int
    filter: Filter
    def __init__(self, from_seq: _Optional[int] = ..., filter: _Optional[_Union[Filter, _Mapping]] = ...) -> None: ...

class Filter(_message.Message):
    __slots__ = ("since", "until", "session_id", "actor_id", "tool", "action", "outcome", "kind", "decision_id", "shadow_disagrees", "node_id")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    SHADOW_DISAGREES_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    since: str
    until: str
    session_id: str
    actor_id: str
    tool: str
    action: str
    outcome: str
    kind: str
    decision_id: str
    shadow_disagrees: bool
    node_id: str
    def __init__(self, since: _Optional[str] = ..., until: _Optional[str] = ..., session_id: _Optional[str] = ..., actor_id: _Optional[str] = ..., tool: _Optional[str] = ..., action: _Optional[str] = ..., outcome: _Optional[str] = ..., kind: _Optional[str] = ..., decision_id: _Optional[str] = ..., shadow_disagrees: _Optional[bool] = ..., node_id: _Optional[str] = ...) -> None: ...

class QueryRequest(_message.Message):
    __slots__ = ("filter", "page_size", "page_token", "newest_first")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    NEWEST_FIRST_FIELD_NUMBER: _ClassVar[int]
    filter: Filter
    page_size: int
    page_token: str
    newest_first: bool
    def __init__(self, filter: _Optional[_Union[Filter, _Mapping]] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ..., newest_first: _Optional[bool] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("seq", "event_id", "ts", "kind", "decision_id", "session_id", "task_type", "actor_id", "actor_kind", "tool", "action", "resource_type", "resource_id", "args_hash", "outcome", "reason", "policy_ids", "policy_version", "max_output_chars", "timeout_ms", "duration_us", "result_bytes", "truncated", "status", "error", "request", "prev_hash", "hash", "rewritten_args_hash", "shadow_outcome", "shadow_reason", "note", "node_id")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    EVENT_ID_FIELD_NUMBER: _ClassVar[int]
    TS_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    SESSION_ID_FIELD_NUMBER: _ClassVar[int]
    TASK_TYPE_FIELD_NUMBER: _ClassVar[int]
    ACTOR_ID_FIELD_NUMBER: _ClassVar[int]
    ACTOR_KIND_FIELD_NUMBER: _ClassVar[int]
    TOOL_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_TYPE_FIELD_NUMBER: _ClassVar[int]
    RESOURCE_ID_FIELD_NUMBER: _ClassVar[int]
    ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    POLICY_IDS_FIELD_NUMBER: _ClassVar[int]
    POLICY_VERSION_FIELD_NUMBER: _ClassVar[int]
    MAX_OUTPUT_CHARS_FIELD_NUMBER: _ClassVar[int]
    TIMEOUT_MS_FIELD_NUMBER: _ClassVar[int]
    DURATION_US_FIELD_NUMBER: _ClassVar[int]
    RESULT_BYTES_FIELD_NUMBER: _ClassVar[int]
    TRUNCATED_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    PREV_HASH_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    REWRITTEN_ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    SHADOW_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    SHADOW_REASON_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    seq: int
    event_id: str
    ts: str
    kind: str
    decision_id: str
    session_id: str
    task_type: str
    actor_id: str
    actor_kind: str
    tool: str
    action: str
    resource_type: str
    resource_id: str
    args_hash: str
    outcome: str
    reason: str
    policy_ids: str
    policy_version: str
    max_output_chars: int
    timeout_ms: int
    duration_us: int
    result_bytes: int
    truncated: int
    status: str
    error: str
    request: str
    prev_hash: str
    hash: str
    rewritten_args_hash: str
    shadow_outcome: str
    shadow_reason: str
    note: str
    node_id: str
    def __init__(self, seq: _Optional[int] = ..., event_id: _Optional[str] = ..., ts: _Optional[str] = ..., kind: _Optional[str] = ..., decision_id: _Optional[str] = ..., session_id: _Optional[str] = ..., task_type: _Optional[str] = ..., actor_id: _Optional[str] = ..., actor_kind: _Optional[str] = ..., tool: _Optional[str] = ..., action: _Optional[str] = ..., resource_type: _Optional[str] = ..., resource_id: _Optional[str] = ..., args_hash: _Optional[str] = ..., outcome: _Optional[str] = ..., reason: _Optional[str] = ..., policy_ids: _Optional[str] = ..., policy_version: _Optional[str] = ..., max_output_chars: _Optional[int] = ..., timeout_ms: _Optional[int] = ..., duration_us: _Optional[int] = ..., result_bytes: _Optional[int] = ..., truncated: _Optional[int] = ..., status: _Optional[str] = ..., error: _Optional[str] = ..., request: _Optional[str] = ..., prev_hash: _Optional[str] = ..., hash: _Optional[str] = ..., rewritten_args_hash: _Optional[str] = ..., shadow_outcome: _Optional[str] = ..., shadow_reason: _Optional[str] = ..., note: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class QueryResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ExportRequest(_message.Message):
    __slots__ = ("filter", "bom")
    FILTER_FIELD_NUMBER: _ClassVar[int]
    BOM_FIELD_NUMBER: _ClassVar[int]
    filter: Filter
    bom: bool
    def __init__(self, filter: _Optional[_Union[Filter, _Mapping]] = ..., bom: _Optional[bool] = ...) -> None: ...

class CsvChunk(_message.Message):
    __slots__ = ("data", "summary")
    DATA_FIELD_NUMBER: _ClassVar[int]
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    data: bytes
    summary: ExportSummary
    def __init__(self, data: _Optional[bytes] = ..., summary: _Optional[_Union[ExportSummary, _Mapping]] = ...) -> None: ...

class ExportSummary(_message.Message):
    __slots__ = ("rows", "first_seq", "last_seq", "csv_sha256")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    FIRST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    CSV_SHA256_FIELD_NUMBER: _ClassVar[int]
    rows: int
    first_seq: int
    last_seq: int
    csv_sha256: str
    def __init__(self, rows: _Optional[int] = ..., first_seq: _Optional[int] = ..., last_seq: _Optional[int] = ..., csv_sha256: _Optional[str] = ...) -> None: ...

class VerifyRequest(_message.Message):
    __slots__ = ("from_seq", "to_seq", "node_id")
    FROM_SEQ_FIELD_NUMBER: _ClassVar[int]
    TO_SEQ_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    from_seq: int
    to_seq: int
    node_id: str
    def __init__(self, from_seq: _Optional[int] = ..., to_seq: _Optional[int] = ..., node_id: _Optional[str] = ...) -> None: ...

class Problem(_message.Message):
    __slots__ = ("seq", "kind", "message")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    kind: str
    message: str
    def __init__(self, seq: _Optional[int] = ..., kind: _Optional[str] = ..., message: _Optional[str] = ...) -> None: ...

class VerifyResponse(_message.Message):
    __slots__ = ("intact", "checked", "problems", "last_seq", "last_hash")
    INTACT_FIELD_NUMBER: _ClassVar[int]
    CHECKED_FIELD_NUMBER: _ClassVar[int]
    PROBLEMS_FIELD_NUMBER: _ClassVar[int]
    LAST_SEQ_FIELD_NUMBER: _ClassVar[int]
    LAST_HASH_FIELD_NUMBER: _ClassVar[int]
    intact: bool
    checked: int
    problems: _containers.RepeatedCompositeFieldContainer[Problem]
    last_seq: int
    last_hash: str
    def __init__(self, intact: _Optional[bool] = ..., checked: _Optional[int] = ..., problems: _Optional[_Iterable[_Union[Problem, _Mapping]]] = ..., last_seq: _Optional[int] = ..., last_hash: _Optional[str] = ...) -> None: ...

class HeadRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class HeadResponse(_message.Message):
    __slots__ = ("seq", "hash", "ts")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    HASH_FIELD_NUMBER: _ClassVar[int]
    TS_FIELD_NUMBER: _ClassVar[int]
    seq: int
    hash: str
    ts: str
    def __init__(self, seq: _Optional[int] = ..., hash: _Optional[str] = ..., ts: _Optional[str] = ...) -> None: ...

class StatsRequest(_message.Message):
    __slots__ = ("since", "until", "node_id")
    SINCE_FIELD_NUMBER: _ClassVar[int]
    UNTIL_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    since: str
    until: str
    node_id: str
    def __init__(self, since: _Optional[str] = ..., until: _Optional[str] = ..., node_id: _Optional[str] = ...) -> None: ...

class Count(_message.Message):
    __slots__ = ("key", "count")
    KEY_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    key: str
    count: int
    def __init__(self, key: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class StatsResponse(_message.Message):
    __slots__ = ("total", "by_outcome", "by_tool", "by_actor", "by_kind")
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    BY_OUTCOME_FIELD_NUMBER: _ClassVar[int]
    BY_TOOL_FIELD_NUMBER: _ClassVar[int]
    BY_ACTOR_FIELD_NUMBER: _ClassVar[int]
    BY_KIND_FIELD_NUMBER: _ClassVar[int]
    total: int
    by_outcome: _containers.RepeatedCompositeFieldContainer[Count]
    by_tool: _containers.RepeatedCompositeFieldContainer[Count]
    by_actor: _containers.RepeatedCompositeFieldContainer[Count]
    by_kind: _containers.RepeatedCompositeFieldContainer[Count]
    def __init__(self, total: _Optional[int] = ..., by_outcome: _Optional[_Iterable[_Union[Count, _Mapping]]] = ..., by_tool: _Optional[_Iterable[_Union[Count, _Mapping]]] = ..., by_actor: _Optional[_Iterable[_Union[Count, _Mapping]]] = ..., by_kind: _Optional[_Iterable[_Union[Count, _Mapping]]] = ...) -> None: ...

class HashArgsRequest(_message.Message):
    __slots__ = ("args_json",)
    ARGS_JSON_FIELD_NUMBER: _ClassVar[int]
    args_json: str
    def __init__(self, args_json: _Optional[str] = ...) -> None: ...

class HashArgsResponse(_message.Message):
    __slots__ = ("args_hash", "canonical_json")
    ARGS_HASH_FIELD_NUMBER: _ClassVar[int]
    CANONICAL_JSON_FIELD_NUMBER: _ClassVar[int]
    args_hash: str
    canonical_json: str
    def __init__(self, args_hash: _Optional[str] = ..., canonical_json: _Optional[str] = ...) -> None: ...

class CheckpointRequest(_message.Message):
    __slots__ = ("size", "node_id")
    SIZE_FIELD_NUMBER: _ClassVar[int]
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    size: int
    node_id: str
    def __init__(self, size: _Optional[int] = ..., node_id: _Optional[str] = ...) -> None: ...

class CheckpointResponse(_message.Message):
    __slots__ = ("note", "size", "seq", "cosigned")
    NOTE_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    COSIGNED_FIELD_NUMBER: _ClassVar[int]
    note: str
    size: int
    seq: int
    cosigned: str
    def __init__(self, note: _Optional[str] = ..., size: _Optional[int] = ..., seq: _Optional[int] = ..., cosigned: _Optional[str] = ...) -> None: ...

class InclusionProofRequest(_message.Message):
    __slots__ = ("seq", "tree_size")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TREE_SIZE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    tree_size: int
    def __init__(self, seq: _Optional[int] = ..., tree_size: _Optional[int] = ...) -> None: ...

class InclusionProofResponse(_message.Message):
    __slots__ = ("tree_size", "leaf_index", "leaf_hash", "hashes", "root")
    TREE_SIZE_FIELD_NUMBER: _ClassVar[int]
    LEAF_INDEX_FIELD_NUMBER: _ClassVar[int]
    LEAF_HASH_FIELD_NUMBER: _ClassVar[int]
    HASHES_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    tree_size: int
    leaf_index: int
    leaf_hash: bytes
    hashes: _containers.RepeatedScalarFieldContainer[bytes]
    root: bytes
    def __init__(self, tree_size: _Optional[int] = ..., leaf_index: _Optional[int] = ..., leaf_hash: _Optional[bytes] = ..., hashes: _Optional[_Iterable[bytes]] = ..., root: _Optional[bytes] = ...) -> None: ...

class TlogProofRequest(_message.Message):
    __slots__ = ("seq", "tree_size")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    TREE_SIZE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    tree_size: int
    def __init__(self, seq: _Optional[int] = ..., tree_size: _Optional[int] = ...) -> None: ...

class TlogProofResponse(_message.Message):
    __slots__ = ("proof", "tree_size")
    PROOF_FIELD_NUMBER: _ClassVar[int]
    TREE_SIZE_FIELD_NUMBER: _ClassVar[int]
    proof: str
    tree_size: int
    def __init__(self, proof: _Optional[str] = ..., tree_size: _Optional[int] = ...) -> None: ...

class ConsistencyProofRequest(_message.Message):
    __slots__ = ("old_size", "new_size")
    OLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    NEW_SIZE_FIELD_NUMBER: _ClassVar[int]
    old_size: int
    new_size: int
    def __init__(self, old_size: _Optional[int] = ..., new_size: _Optional[int] = ...) -> None: ...

class ConsistencyProofResponse(_message.Message):
    __slots__ = ("old_size", "new_size", "hashes", "old_root", "new_root")
    OLD_SIZE_FIELD_NUMBER: _ClassVar[int]
    NEW_SIZE_FIELD_NUMBER: _ClassVar[int]
    HASHES_FIELD_NUMBER: _ClassVar[int]
    OLD_ROOT_FIELD_NUMBER: _ClassVar[int]
    NEW_ROOT_FIELD_NUMBER: _ClassVar[int]
    old_size: int
    new_size: int
    hashes: _containers.RepeatedScalarFieldContainer[bytes]
    old_root: bytes
    new_root: bytes
    def __init__(self, old_size: _Optional[int] = ..., new_size: _Optional[int] = ..., hashes: _Optional[_Iterable[bytes]] = ..., old_root: _Optional[bytes] = ..., new_root: _Optional[bytes] = ...) -> None: ...
