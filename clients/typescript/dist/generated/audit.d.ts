import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';
import type { AuditClient as _toolgate_v1_AuditClient, AuditDefinition as _toolgate_v1_AuditDefinition } from './toolgate/v1/Audit.js';
type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
    new (...args: ConstructorParameters<Constructor>): Subtype;
};
export interface ProtoGrpcType {
    toolgate: {
        v1: {
            Audit: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_AuditClient> & {
                service: _toolgate_v1_AuditDefinition;
            };
            CheckpointRequest: MessageTypeDefinition;
            CheckpointResponse: MessageTypeDefinition;
            ConsistencyProofRequest: MessageTypeDefinition;
            ConsistencyProofResponse: MessageTypeDefinition;
            Count: MessageTypeDefinition;
            CsvChunk: MessageTypeDefinition;
            Event: MessageTypeDefinition;
            ExportRequest: MessageTypeDefinition;
            ExportSummary: MessageTypeDefinition;
            Filter: MessageTypeDefinition;
            HashArgsRequest: MessageTypeDefinition;
            HashArgsResponse: MessageTypeDefinition;
            HeadRequest: MessageTypeDefinition;
            HeadResponse: MessageTypeDefinition;
            InclusionProofRequest: MessageTypeDefinition;
            InclusionProofResponse: MessageTypeDefinition;
            Problem: MessageTypeDefinition;
            QueryRequest: MessageTypeDefinition;
            QueryResponse: MessageTypeDefinition;
            StatsRequest: MessageTypeDefinition;
            StatsResponse: MessageTypeDefinition;
            SubscribeRequest: MessageTypeDefinition;
            TlogProofRequest: MessageTypeDefinition;
            TlogProofResponse: MessageTypeDefinition;
            VerifyRequest: MessageTypeDefinition;
            VerifyResponse: MessageTypeDefinition;
        };
    };
}
export {};
