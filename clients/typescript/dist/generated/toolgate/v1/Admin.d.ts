import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { ReloadPolicyRequest as _toolgate_v1_ReloadPolicyRequest, ReloadPolicyRequest__Output as _toolgate_v1_ReloadPolicyRequest__Output } from '../../toolgate/v1/ReloadPolicyRequest.js';
import type { ReloadPolicyResponse as _toolgate_v1_ReloadPolicyResponse, ReloadPolicyResponse__Output as _toolgate_v1_ReloadPolicyResponse__Output } from '../../toolgate/v1/ReloadPolicyResponse.js';
export interface AdminClient extends grpc.Client {
    ReloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    ReloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    ReloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    ReloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    reloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    reloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    reloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
    reloadPolicy(argument: _toolgate_v1_ReloadPolicyRequest, callback: grpc.requestCallback<_toolgate_v1_ReloadPolicyResponse__Output>): grpc.ClientUnaryCall;
}
export interface AdminHandlers extends grpc.UntypedServiceImplementation {
    ReloadPolicy: grpc.handleUnaryCall<_toolgate_v1_ReloadPolicyRequest__Output, _toolgate_v1_ReloadPolicyResponse>;
}
export interface AdminDefinition extends grpc.ServiceDefinition {
    ReloadPolicy: MethodDefinition<_toolgate_v1_ReloadPolicyRequest, _toolgate_v1_ReloadPolicyResponse, _toolgate_v1_ReloadPolicyRequest__Output, _toolgate_v1_ReloadPolicyResponse__Output>;
}
