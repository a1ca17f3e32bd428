from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class ReloadPolicyRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ReloadPolicyResponse(_message.Message):
    __slots__ = ("policy_version", "source", "policies", "seq")
    POLICY_VERSION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    POLICIES_FIELD_NUMBER: _ClassVar[int]
    SEQ_FIELD_NUMBER: _ClassVar[int]
    policy_version: str
    source: str
    policies: int
    seq: int
    def __init__(self, policy_version: _Optional[str] = ..., source: _Optional[str] = ..., policies: _Optional[int] = ..., seq: _Optional[int] = ...) -> None: ...
