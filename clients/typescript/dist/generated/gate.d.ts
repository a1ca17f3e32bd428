import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';
import type { GateClient as _toolgate_v1_GateClient, GateDefinition as _toolgate_v1_GateDefinition } from './toolgate/v1/Gate.js';
type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
    new (...args: ConstructorParameters<Constructor>): Subtype;
};
export interface ProtoGrpcType {
    toolgate: {
        v1: {
            Actor: MessageTypeDefinition;
            ChangedTool: MessageTypeDefinition;
            DecideRequest: MessageTypeDefinition;
            DecideResponse: MessageTypeDefinition;
            DefineToolsRequest: MessageTypeDefinition;
            DefineToolsResponse: MessageTypeDefinition;
            ExecuteRequest: MessageTypeDefinition;
            ExecuteResponse: MessageTypeDefinition;
            ExecutionPlan: MessageTypeDefinition;
            ExecutionStatus: EnumTypeDefinition;
            Gate: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_GateClient> & {
                service: _toolgate_v1_GateDefinition;
            };
            NeverAllowedRequest: MessageTypeDefinition;
            NeverAllowedResponse: MessageTypeDefinition;
            Outcome: EnumTypeDefinition;
            RecordRefusalRequest: MessageTypeDefinition;
            RecordRefusalResponse: MessageTypeDefinition;
            Resource: MessageTypeDefinition;
            RunOptions: MessageTypeDefinition;
            ToolAction: MessageTypeDefinition;
            ToolDefinition: MessageTypeDefinition;
        };
    };
}
export {};
