import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { DecideRequest as _toolgate_v1_DecideRequest, DecideRequest__Output as _toolgate_v1_DecideRequest__Output } from '../../toolgate/v1/DecideRequest.js';
import type { DecideResponse as _toolgate_v1_DecideResponse, DecideResponse__Output as _toolgate_v1_DecideResponse__Output } from '../../toolgate/v1/DecideResponse.js';
import type { DefineToolsRequest as _toolgate_v1_DefineToolsRequest, DefineToolsRequest__Output as _toolgate_v1_DefineToolsRequest__Output } from '../../toolgate/v1/DefineToolsRequest.js';
import type { DefineToolsResponse as _toolgate_v1_DefineToolsResponse, DefineToolsResponse__Output as _toolgate_v1_DefineToolsResponse__Output } from '../../toolgate/v1/DefineToolsResponse.js';
import type { ExecuteRequest as _toolgate_v1_ExecuteRequest, ExecuteRequest__Output as _toolgate_v1_ExecuteRequest__Output } from '../../toolgate/v1/ExecuteRequest.js';
import type { ExecuteResponse as _toolgate_v1_ExecuteResponse, ExecuteResponse__Output as _toolgate_v1_ExecuteResponse__Output } from '../../toolgate/v1/ExecuteResponse.js';
import type { NeverAllowedRequest as _toolgate_v1_NeverAllowedRequest, NeverAllowedRequest__Output as _toolgate_v1_NeverAllowedRequest__Output } from '../../toolgate/v1/NeverAllowedRequest.js';
import type { NeverAllowedResponse as _toolgate_v1_NeverAllowedResponse, NeverAllowedResponse__Output as _toolgate_v1_NeverAllowedResponse__Output } from '../../toolgate/v1/NeverAllowedResponse.js';
import type { RecordRefusalRequest as _toolgate_v1_RecordRefusalRequest, RecordRefusalRequest__Output as _toolgate_v1_RecordRefusalRequest__Output } from '../../toolgate/v1/RecordRefusalRequest.js';
import type { RecordRefusalResponse as _toolgate_v1_RecordRefusalResponse, RecordRefusalResponse__Output as _toolgate_v1_RecordRefusalResponse__Output } from '../../toolgate/v1/RecordRefusalResponse.js';
export interface GateClient extends grpc.Client {
    Decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    Decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    Decide(argument: _toolgate_v1_DecideRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    Decide(argument: _toolgate_v1_DecideRequest, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    decide(argument: _toolgate_v1_DecideRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    decide(argument: _toolgate_v1_DecideRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    decide(argument: _toolgate_v1_DecideRequest, callback: grpc.requestCallback<_toolgate_v1_DecideResponse__Output>): grpc.ClientUnaryCall;
    DefineTools(argument: _toolgate_v1_DefineToolsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    DefineTools(argument: _toolgate_v1_DefineToolsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    DefineTools(argument: _toolgate_v1_DefineToolsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    DefineTools(argument: _toolgate_v1_DefineToolsRequest, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    defineTools(argument: _toolgate_v1_DefineToolsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    defineTools(argument: _toolgate_v1_DefineToolsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    defineTools(argument: _toolgate_v1_DefineToolsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    defineTools(argument: _toolgate_v1_DefineToolsRequest, callback: grpc.requestCallback<_toolgate_v1_DefineToolsResponse__Output>): grpc.ClientUnaryCall;
    Execute(argument: _toolgate_v1_ExecuteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    Execute(argument: _toolgate_v1_ExecuteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    Execute(argument: _toolgate_v1_ExecuteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    Execute(argument: _toolgate_v1_ExecuteRequest, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    execute(argument: _toolgate_v1_ExecuteRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    execute(argument: _toolgate_v1_ExecuteRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    execute(argument: _toolgate_v1_ExecuteRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    execute(argument: _toolgate_v1_ExecuteRequest, callback: grpc.requestCallback<_toolgate_v1_ExecuteResponse__Output>): grpc.ClientUnaryCall;
    NeverAllowed(argument: _toolgate_v1_NeverAllowedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    NeverAllowed(argument: _toolgate_v1_NeverAllowedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    NeverAllowed(argument: _toolgate_v1_NeverAllowedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    NeverAllowed(argument: _toolgate_v1_NeverAllowedRequest, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    neverAllowed(argument: _toolgate_v1_NeverAllowedRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    neverAllowed(argument: _toolgate_v1_NeverAllowedRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    neverAllowed(argument: _toolgate_v1_NeverAllowedRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    neverAllowed(argument: _toolgate_v1_NeverAllowedRequest, callback: grpc.requestCallback<_toolgate_v1_NeverAllowedResponse__Output>): grpc.ClientUnaryCall;
    RecordRefusal(argument: _toolgate_v1_RecordRefusalRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    RecordRefusal(argument: _toolgate_v1_RecordRefusalRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    RecordRefusal(argument: _toolgate_v1_RecordRefusalRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    RecordRefusal(argument: _toolgate_v1_RecordRefusalRequest, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    recordRefusal(argument: _toolgate_v1_RecordRefusalRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    recordRefusal(argument: _toolgate_v1_RecordRefusalRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    recordRefusal(argument: _toolgate_v1_RecordRefusalRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
    recordRefusal(argument: _toolgate_v1_RecordRefusalRequest, callback: grpc.requestCallback<_toolgate_v1_RecordRefusalResponse__Output>): grpc.ClientUnaryCall;
}
export interface GateHandlers extends grpc.UntypedServiceImplementation {
    Decide: grpc.handleUnaryCall<_toolgate_v1_DecideRequest__Output, _toolgate_v1_DecideResponse>;
    DefineTools: grpc.handleUnaryCall<_toolgate_v1_DefineToolsRequest__Output, _toolgate_v1_DefineToolsResponse>;
    Execute: grpc.handleUnaryCall<_toolgate_v1_ExecuteRequest__Output, _toolgate_v1_ExecuteResponse>;
    NeverAllowed: grpc.handleUnaryCall<_toolgate_v1_NeverAllowedRequest__Output, _toolgate_v1_NeverAllowedResponse>;
    RecordRefusal: grpc.handleUnaryCall<_toolgate_v1_RecordRefusalRequest__Output, _toolgate_v1_RecordRefusalResponse>;
}
export interface GateDefinition extends grpc.ServiceDefinition {
    Decide: MethodDefinition<_toolgate_v1_DecideRequest, _toolgate_v1_DecideResponse, _toolgate_v1_DecideRequest__Output, _toolgate_v1_DecideResponse__Output>;
    DefineTools: MethodDefinition<_toolgate_v1_DefineToolsRequest, _toolgate_v1_DefineToolsResponse, _toolgate_v1_DefineToolsRequest__Output, _toolgate_v1_DefineToolsResponse__Output>;
    Execute: MethodDefinition<_toolgate_v1_ExecuteRequest, _toolgate_v1_ExecuteResponse, _toolgate_v1_ExecuteRequest__Output, _toolgate_v1_ExecuteResponse__Output>;
    NeverAllowed: MethodDefinition<_toolgate_v1_NeverAllowedRequest, _toolgate_v1_NeverAllowedResponse, _toolgate_v1_NeverAllowedRequest__Output, _toolgate_v1_NeverAllowedResponse__Output>;
    RecordRefusal: MethodDefinition<_toolgate_v1_RecordRefusalRequest, _toolgate_v1_RecordRefusalResponse, _toolgate_v1_RecordRefusalRequest__Output, _toolgate_v1_RecordRefusalResponse__Output>;
}
