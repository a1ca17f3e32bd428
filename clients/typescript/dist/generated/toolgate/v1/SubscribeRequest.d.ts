import type { Filter as _toolgate_v1_Filter, Filter__Output as _toolgate_v1_Filter__Output } from '../../toolgate/v1/Filter.js';
import type { Long } from '@grpc/proto-loader';
export interface SubscribeRequest {
    'from_seq'?: (number | string | Long);
    'filter'?: (_toolgate_v1_Filter | null);
}
export interface SubscribeRequest__Output {
    'from_seq': (number);
    'filter': (_toolgate_v1_Filter__Output | null);
}
