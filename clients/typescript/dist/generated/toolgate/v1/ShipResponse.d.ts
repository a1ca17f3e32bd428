import type { Long } from '@grpc/proto-loader';
export interface ShipResponse {
    'seq'?: (number | string | Long);
    'stored'?: (number | string | Long);
    'awaiting_witnesses'?: (boolean);
    'witnesses'?: (string)[];
    'witnesses_required'?: (number);
}
export interface ShipResponse__Output {
    'seq': (number);
    'stored': (number);
    'awaiting_witnesses': (boolean);
    'witnesses': (string)[];
    'witnesses_required': (number);
}
