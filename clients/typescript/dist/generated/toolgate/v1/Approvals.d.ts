import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { Approval as _toolgate_v1_Approval, Approval__Output as _toolgate_v1_Approval__Output } from '../../toolgate/v1/Approval.js';
import type { AwaitRequest as _toolgate_v1_AwaitRequest, AwaitRequest__Output as _toolgate_v1_AwaitRequest__Output } from '../../toolgate/v1/AwaitRequest.js';
import type { ListPendingRequest as _toolgate_v1_ListPendingRequest, ListPendingRequest__Output as _toolgate_v1_ListPendingRequest__Output } from '../../toolgate/v1/ListPendingRequest.js';
import type { ListPendingResponse as _toolgate_v1_ListPendingResponse, ListPendingResponse__Output as _toolgate_v1_ListPendingResponse__Output } from '../../toolgate/v1/ListPendingResponse.js';
import type { VerdictRequest as _toolgate_v1_VerdictRequest, VerdictRequest__Output as _toolgate_v1_VerdictRequest__Output } from '../../toolgate/v1/VerdictRequest.js';
import type { WithdrawRequest as _toolgate_v1_WithdrawRequest, WithdrawRequest__Output as _toolgate_v1_WithdrawRequest__Output } from '../../toolgate/v1/WithdrawRequest.js';
export interface ApprovalsClient extends grpc.Client {
    Approve(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Approve(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Approve(argument: _toolgate_v1_VerdictRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Approve(argument: _toolgate_v1_VerdictRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    approve(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    approve(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    approve(argument: _toolgate_v1_VerdictRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    approve(argument: _toolgate_v1_VerdictRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Await(argument: _toolgate_v1_AwaitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Await(argument: _toolgate_v1_AwaitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Await(argument: _toolgate_v1_AwaitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Await(argument: _toolgate_v1_AwaitRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    await(argument: _toolgate_v1_AwaitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    await(argument: _toolgate_v1_AwaitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    await(argument: _toolgate_v1_AwaitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    await(argument: _toolgate_v1_AwaitRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    ListPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    ListPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    ListPending(argument: _toolgate_v1_ListPendingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    ListPending(argument: _toolgate_v1_ListPendingRequest, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    listPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    listPending(argument: _toolgate_v1_ListPendingRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    listPending(argument: _toolgate_v1_ListPendingRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    listPending(argument: _toolgate_v1_ListPendingRequest, callback: grpc.requestCallback<_toolgate_v1_ListPendingResponse__Output>): grpc.ClientUnaryCall;
    Reject(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Reject(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Reject(argument: _toolgate_v1_VerdictRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Reject(argument: _toolgate_v1_VerdictRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    reject(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    reject(argument: _toolgate_v1_VerdictRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    reject(argument: _toolgate_v1_VerdictRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    reject(argument: _toolgate_v1_VerdictRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Withdraw(argument: _toolgate_v1_WithdrawRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Withdraw(argument: _toolgate_v1_WithdrawRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Withdraw(argument: _toolgate_v1_WithdrawRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    Withdraw(argument: _toolgate_v1_WithdrawRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    withdraw(argument: _toolgate_v1_WithdrawRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    withdraw(argument: _toolgate_v1_WithdrawRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    withdraw(argument: _toolgate_v1_WithdrawRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
    withdraw(argument: _toolgate_v1_WithdrawRequest, callback: grpc.requestCallback<_toolgate_v1_Approval__Output>): grpc.ClientUnaryCall;
}
export interface ApprovalsHandlers extends grpc.UntypedServiceImplementation {
    Approve: grpc.handleUnaryCall<_toolgate_v1_VerdictRequest__Output, _toolgate_v1_Approval>;
    Await: grpc.handleUnaryCall<_toolgate_v1_AwaitRequest__Output, _toolgate_v1_Approval>;
    ListPending: grpc.handleUnaryCall<_toolgate_v1_ListPendingRequest__Output, _toolgate_v1_ListPendingResponse>;
    Reject: grpc.handleUnaryCall<_toolgate_v1_VerdictRequest__Output, _toolgate_v1_Approval>;
    Withdraw: grpc.handleUnaryCall<_toolgate_v1_WithdrawRequest__Output, _toolgate_v1_Approval>;
}
export interface ApprovalsDefinition extends grpc.ServiceDefinition {
    Approve: MethodDefinition<_toolgate_v1_VerdictRequest, _toolgate_v1_Approval, _toolgate_v1_VerdictRequest__Output, _toolgate_v1_Approval__Output>;
    Await: MethodDefinition<_toolgate_v1_AwaitRequest, _toolgate_v1_Approval, _toolgate_v1_AwaitRequest__Output, _toolgate_v1_Approval__Output>;
    ListPending: MethodDefinition<_toolgate_v1_ListPendingRequest, _toolgate_v1_ListPendingResponse, _toolgate_v1_ListPendingRequest__Output, _toolgate_v1_ListPendingResponse__Output>;
    Reject: MethodDefinition<_toolgate_v1_VerdictRequest, _toolgate_v1_Approval, _toolgate_v1_VerdictRequest__Output, _toolgate_v1_Approval__Output>;
    Withdraw: MethodDefinition<_toolgate_v1_WithdrawRequest, _toolgate_v1_Approval, _toolgate_v1_WithdrawRequest__Output, _toolgate_v1_Approval__Output>;
}
