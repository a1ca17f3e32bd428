import type * as grpc from '@grpc/grpc-js';
import type { MethodDefinition } from '@grpc/proto-loader';
import type { CosignRequest as _toolgate_v1_CosignRequest, CosignRequest__Output as _toolgate_v1_CosignRequest__Output } from '../../toolgate/v1/CosignRequest.js';
import type { CosignResponse as _toolgate_v1_CosignResponse, CosignResponse__Output as _toolgate_v1_CosignResponse__Output } from '../../toolgate/v1/CosignResponse.js';
import type { PositionRequest as _toolgate_v1_PositionRequest, PositionRequest__Output as _toolgate_v1_PositionRequest__Output } from '../../toolgate/v1/PositionRequest.js';
import type { PositionResponse as _toolgate_v1_PositionResponse, PositionResponse__Output as _toolgate_v1_PositionResponse__Output } from '../../toolgate/v1/PositionResponse.js';
import type { ShipRequest as _toolgate_v1_ShipRequest, ShipRequest__Output as _toolgate_v1_ShipRequest__Output } from '../../toolgate/v1/ShipRequest.js';
import type { ShipResponse as _toolgate_v1_ShipResponse, ShipResponse__Output as _toolgate_v1_ShipResponse__Output } from '../../toolgate/v1/ShipResponse.js';
export interface FleetIngestClient extends grpc.Client {
    Cosign(argument: _toolgate_v1_CosignRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    Cosign(argument: _toolgate_v1_CosignRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    Cosign(argument: _toolgate_v1_CosignRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    Cosign(argument: _toolgate_v1_CosignRequest, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    cosign(argument: _toolgate_v1_CosignRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    cosign(argument: _toolgate_v1_CosignRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    cosign(argument: _toolgate_v1_CosignRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    cosign(argument: _toolgate_v1_CosignRequest, callback: grpc.requestCallback<_toolgate_v1_CosignResponse__Output>): grpc.ClientUnaryCall;
    Position(argument: _toolgate_v1_PositionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    Position(argument: _toolgate_v1_PositionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    Position(argument: _toolgate_v1_PositionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    Position(argument: _toolgate_v1_PositionRequest, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    position(argument: _toolgate_v1_PositionRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    position(argument: _toolgate_v1_PositionRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    position(argument: _toolgate_v1_PositionRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    position(argument: _toolgate_v1_PositionRequest, callback: grpc.requestCallback<_toolgate_v1_PositionResponse__Output>): grpc.ClientUnaryCall;
    Ship(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_toolgate_v1_ShipRequest, _toolgate_v1_ShipResponse__Output>;
    Ship(options?: grpc.CallOptions): grpc.ClientDuplexStream<_toolgate_v1_ShipRequest, _toolgate_v1_ShipResponse__Output>;
    ship(metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientDuplexStream<_toolgate_v1_ShipRequest, _toolgate_v1_ShipResponse__Output>;
    ship(options?: grpc.CallOptions): grpc.ClientDuplexStream<_toolgate_v1_ShipRequest, _toolgate_v1_ShipResponse__Output>;
}
export interface FleetIngestHandlers extends grpc.UntypedServiceImplementation {
    Cosign: grpc.handleUnaryCall<_toolgate_v1_CosignRequest__Output, _toolgate_v1_CosignResponse>;
    Position: grpc.handleUnaryCall<_toolgate_v1_PositionRequest__Output, _toolgate_v1_PositionResponse>;
    Ship: grpc.handleBidiStreamingCall<_toolgate_v1_ShipRequest__Output, _toolgate_v1_ShipResponse>;
}
export interface FleetIngestDefinition extends grpc.ServiceDefinition {
    Cosign: MethodDefinition<_toolgate_v1_CosignRequest, _toolgate_v1_CosignResponse, _toolgate_v1_CosignRequest__Output, _toolgate_v1_CosignResponse__Output>;
    Position: MethodDefinition<_toolgate_v1_PositionRequest, _toolgate_v1_PositionResponse, _toolgate_v1_PositionRequest__Output, _toolgate_v1_PositionResponse__Output>;
    Ship: MethodDefinition<_toolgate_v1_ShipRequest, _toolgate_v1_ShipResponse, _toolgate_v1_ShipRequest__Output, _toolgate_v1_ShipResponse__Output>;
}
