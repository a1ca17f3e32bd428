import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';
import type { AdminClient as _toolgate_v1_AdminClient, AdminDefinition as _toolgate_v1_AdminDefinition } from './toolgate/v1/Admin.js';
type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
    new (...args: ConstructorParameters<Constructor>): Subtype;
};
export interface ProtoGrpcType {
    toolgate: {
        v1: {
            Admin: SubtypeConstructor<typeof grpc.Client, _toolgate_v1_AdminClient> & {
                service: _toolgate_v1_AdminDefinition;
            };
            ReloadPolicyRequest: MessageTypeDefinition;
            ReloadPolicyResponse: MessageTypeDefinition;
        };
    };
}
export {};
