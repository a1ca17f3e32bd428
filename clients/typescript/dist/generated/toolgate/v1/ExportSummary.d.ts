import type { Long } from '@grpc/proto-loader';
export interface ExportSummary {
    'rows'?: (number | string | Long);
    'first_seq'?: (number | string | Long);
    'last_seq'?: (number | string | Long);
    'csv_sha256'?: (string);
}
export interface ExportSummary__Output {
    'rows': (number);
    'first_seq': (number);
    'last_seq': (number);
    'csv_sha256': (string);
}
