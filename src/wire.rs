//! Events between the trail's form and the wire's. `toolgate.v1.Event` has one field per
//! column, of the same name, so both directions are derived from the trail's column table.

use crate::proto;
use crate::trail::{self, CellError, Event, Record};

/// How a record field's type travels: the domain's enums by their names.
trait Wire: Sized {
    type Wire;
    fn to_wire(self) -> Self::Wire;
    fn from_wire(wire: Self::Wire) -> Result<Self, String>;
}

impl<T> Wire for Option<T>
where
    T: Wire,
{
    type Wire = Option<T::Wire>;
    fn to_wire(self) -> Self::Wire {
        self.map(T::to_wire)
    }
    fn from_wire(wire: Self::Wire) -> Result<Self, String> {
        wire.map(T::from_wire).transpose()
    }
}

macro_rules! plain_wire {
    ($($ty:ty),*) => {$(
        impl Wire for $ty {
            type Wire = $ty;
            fn to_wire(self) -> Self {
                self
            }
            fn from_wire(wire: Self) -> Result<Self, String> {
                Ok(wire)
            }
        }
    )*};
}
plain_wire!(String, i64);

macro_rules! named_wire {
    ($($ty:ty),*) => {$(
        impl Wire for $ty {
            type Wire = String;
            fn to_wire(self) -> String {
                self.as_str().to_owned()
            }
            fn from_wire(wire: String) -> Result<Self, String> {
                wire.parse().map_err(|()| format!("`{wire}` is not one of toolgate's names"))
            }
        }
    )*};
}
named_wire!(trail::Kind, trail::Outcome);

macro_rules! convert {
    ($( $(#[doc = $doc:literal])* $name:ident : $ty:ty, )*) => {
        /// An event as `toolgate.v1.Event`.
        pub fn event_to_proto(e: Event) -> proto::Event {
            let r = e.record;
            proto::Event {
                seq: e.seq.unsigned_abs(),
                event_id: e.event_id,
                ts: e.ts,
                $( $name: r.$name.to_wire(), )*
                prev_hash: e.prev_hash,
                hash: e.hash,
                node_id: String::new(),
            }
        }

        /// A `toolgate.v1.Event` as the trail holds it, or the field that no trail holds.
        pub fn event_from_proto(e: proto::Event) -> Result<Event, CellError> {
            let field = |column: &'static str| move |problem| CellError { column, problem };
            Ok(Event {
                // Sequence numbers fit an i64: the trail stores them as one.
                seq: i64::try_from(e.seq).unwrap_or(i64::MAX),
                event_id: e.event_id,
                ts: e.ts,
                record: Record {
                    $( $name: Wire::from_wire(e.$name).map_err(field(stringify!($name)))?, )*
                },
                prev_hash: e.prev_hash,
                hash: e.hash,
            })
        }
    };
}
trail::record_columns!(convert);
