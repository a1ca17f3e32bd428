import type { Event as _toolgate_v1_Event, Event__Output as _toolgate_v1_Event__Output } from '../../toolgate/v1/Event.js';
export interface QueryResponse {
    'events'?: (_toolgate_v1_Event)[];
    'next_page_token'?: (string);
}
export interface QueryResponse__Output {
    'events': (_toolgate_v1_Event__Output)[];
    'next_page_token': (string);
}
