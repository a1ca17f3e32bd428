import type { Cosignature as _toolgate_v1_Cosignature, Cosignature__Output as _toolgate_v1_Cosignature__Output } from '../../toolgate/v1/Cosignature.js';
import type { Long } from '@grpc/proto-loader';
export interface Witnessed {
    'seq'?: (number | string | Long);
    'note'?: (string);
    'cosignatures'?: (_toolgate_v1_Cosignature)[];
    'proof'?: (Buffer | Uint8Array | string)[];
}
export interface Witnessed__Output {
    'seq': (number);
    'note': (string);
    'cosignatures': (_toolgate_v1_Cosignature__Output)[];
    'proof': (Buffer)[];
}
