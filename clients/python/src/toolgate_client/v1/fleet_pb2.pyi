from toolgate_client.v1 import audit_pb2 as _audit_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PositionRequest(_message.Message):
    __slots__ = ("node_id",)
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    def __init__(self, node_id: _Optional[str] = ...) -> None: ...

class PositionResponse(_message.Message):
    __slots__ = ("seq", "cosigned")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    COSIGNED_FIELD_NUMBER: _ClassVar[int]
    seq: int
    cosigned: int
    def __init__(self, seq: _Optional[int] = ..., cosigned: _Optional[int] = ...) -> None: ...

class ShipRequest(_message.Message):
    __slots__ = ("node_id", "events", "cosignatures", "witnessed")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    COSIGNATURES_FIELD_NUMBER: _ClassVar[int]
    WITNESSED_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    events: _containers.RepeatedCompositeFieldContainer[_audit_pb2.Event]
    cosignatures: _containers.RepeatedCompositeFieldContainer[Cosignature]
    witnessed: Witnessed
    def __init__(self, node_id: _Optional[str] = ..., events: _Optional[_Iterable[_Union[_audit_pb2.Event, _Mapping]]] = ..., cosignatures: _Optional[_Iterable[_Union[Cosignature, _Mapping]]] = ..., witnessed: _Optional[_Union[Witnessed, _Mapping]] = ...) -> None: ...

class Witnessed(_message.Message):
    __slots__ = ("seq", "note", "cosignatures", "proof")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    COSIGNATURES_FIELD_NUMBER: _ClassVar[int]
    PROOF_FIELD_NUMBER: _ClassVar[int]
    seq: int
    note: str
    cosignatures: _containers.RepeatedCompositeFieldContainer[Cosignature]
    proof: _containers.RepeatedScalarFieldContainer[bytes]
    def __init__(self, seq: _Optional[int] = ..., note: _Optional[str] = ..., cosignatures: _Optional[_Iterable[_Union[Cosignature, _Mapping]]] = ..., proof: _Optional[_Iterable[bytes]] = ...) -> None: ...

class ShipResponse(_message.Message):
    __slots__ = ("seq", "stored", "awaiting_witnesses", "witnesses", "witnesses_required")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    AWAITING_WITNESSES_FIELD_NUMBER: _ClassVar[int]
    WITNESSES_FIELD_NUMBER: _ClassVar[int]
    WITNESSES_REQUIRED_FIELD_NUMBER: _ClassVar[int]
    seq: int
    stored: int
    awaiting_witnesses: bool
    witnesses: _containers.RepeatedScalarFieldContainer[str]
    witnesses_required: int
    def __init__(self, seq: _Optional[int] = ..., stored: _Optional[int] = ..., awaiting_witnesses: _Optional[bool] = ..., witnesses: _Optional[_Iterable[str]] = ..., witnesses_required: _Optional[int] = ...) -> None: ...

class Cosignature(_message.Message):
    __slots__ = ("seq", "witness", "size", "time", "line")
    SEQ_FIELD_NUMBER: _ClassVar[int]
    WITNESS_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    TIME_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    seq: int
    witness: str
    size: int
    time: int
    line: str
    def __init__(self, seq: _Optional[int] = ..., witness: _Optional[str] = ..., size: _Optional[int] = ..., time: _Optional[int] = ..., line: _Optional[str] = ...) -> None: ...

class CosignRequest(_message.Message):
    __slots__ = ("node_id", "cosignatures")
    NODE_ID_FIELD_NUMBER: _ClassVar[int]
    COSIGNATURES_FIELD_NUMBER: _ClassVar[int]
    node_id: str
    cosignatures: _containers.RepeatedCompositeFieldContainer[Cosignature]
    def __init__(self, node_id: _Optional[str] = ..., cosignatures: _Optional[_Iterable[_Union[Cosignature, _Mapping]]] = ...) -> None: ...

class CosignResponse(_message.Message):
    __slots__ = ("stored",)
    STORED_FIELD_NUMBER: _ClassVar[int]
    stored: int
    def __init__(self, stored: _Optional[int] = ...) -> None: ...
