import type { Actor as _toolgate_v1_Actor, Actor__Output as _toolgate_v1_Actor__Output } from '../../toolgate/v1/Actor.js';
import type { Long } from '@grpc/proto-loader';
export interface RecordRefusalRequest {
    'session_id'?: (string);
    'actor'?: (_toolgate_v1_Actor | null);
    'peer'?: (string);
    'peer_name'?: (string);
    'reason'?: (string);
    'count'?: (number | string | Long);
}
export interface RecordRefusalRequest__Output {
    'session_id': (string);
    'actor': (_toolgate_v1_Actor__Output | null);
    'peer': (string);
    'peer_name': (string);
    'reason': (string);
    'count': (number);
}
