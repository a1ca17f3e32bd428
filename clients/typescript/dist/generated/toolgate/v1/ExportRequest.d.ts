import type { Filter as _toolgate_v1_Filter, Filter__Output as _toolgate_v1_Filter__Output } from '../../toolgate/v1/Filter.js';
export interface ExportRequest {
    'filter'?: (_toolgate_v1_Filter | null);
    'bom'?: (boolean);
}
export interface ExportRequest__Output {
    'filter': (_toolgate_v1_Filter__Output | null);
    'bom': (boolean);
}
