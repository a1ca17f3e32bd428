import type { Cosignature as _toolgate_v1_Cosignature, Cosignature__Output as _toolgate_v1_Cosignature__Output } from '../../toolgate/v1/Cosignature.js';
export interface CosignRequest {
    'node_id'?: (string);
    'cosignatures'?: (_toolgate_v1_Cosignature)[];
}
export interface CosignRequest__Output {
    'node_id': (string);
    'cosignatures': (_toolgate_v1_Cosignature__Output)[];
}
