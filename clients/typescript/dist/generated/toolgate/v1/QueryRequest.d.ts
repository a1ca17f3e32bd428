import type { Filter as _toolgate_v1_Filter, Filter__Output as _toolgate_v1_Filter__Output } from '../../toolgate/v1/Filter.js';
export interface QueryRequest {
    'filter'?: (_toolgate_v1_Filter | null);
    'page_size'?: (number);
    'page_token'?: (string);
    'newest_first'?: (boolean);
}
export interface QueryRequest__Output {
    'filter': (_toolgate_v1_Filter__Output | null);
    'page_size': (number);
    'page_token': (string);
    'newest_first': (boolean);
}
