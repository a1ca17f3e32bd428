import type { ExportSummary as _toolgate_v1_ExportSummary, ExportSummary__Output as _toolgate_v1_ExportSummary__Output } from '../../toolgate/v1/ExportSummary.js';
export interface CsvChunk {
    'data'?: (Buffer | Uint8Array | string);
    'summary'?: (_toolgate_v1_ExportSummary | null);
}
export interface CsvChunk__Output {
    'data': (Buffer);
    'summary': (_toolgate_v1_ExportSummary__Output | null);
}
