import type { Event as _toolgate_v1_Event, Event__Output as _toolgate_v1_Event__Output } from '../../toolgate/v1/Event.js';
import type { Cosignature as _toolgate_v1_Cosignature, Cosignature__Output as _toolgate_v1_Cosignature__Output } from '../../toolgate/v1/Cosignature.js';
import type { Witnessed as _toolgate_v1_Witnessed, Witnessed__Output as _toolgate_v1_Witnessed__Output } from '../../toolgate/v1/Witnessed.js';
export interface ShipRequest {
    'node_id'?: (string);
    'events'?: (_toolgate_v1_Event)[];
    'cosignatures'?: (_toolgate_v1_Cosignature)[];
    'witnessed'?: (_toolgate_v1_Witnessed | null);
}
export interface ShipRequest__Output {
    'node_id': (string);
    'events': (_toolgate_v1_Event__Output)[];
    'cosignatures': (_toolgate_v1_Cosignature__Output)[];
    'witnessed': (_toolgate_v1_Witnessed__Output | null);
}
