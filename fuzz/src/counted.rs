//! A 24-byte value with a `Drop` that proves every value is dropped
//! exactly once.
//!
//! Each [`Counted`] gets a unique id on creation, entered in a registry of
//! live ids; its `Drop` removes the id and panics if it was not there (a
//! double drop, or a bitwise copy dropped twice). Reading a value whose id
//! is not live panics too (a use after drop). The number of live values
//! ([`live`]) must equal the keys the trees hold, and return to its
//! starting point when the trees are cleared or dropped: nothing leaked.
//!
//! The registry is thread-local; libFuzzer runs every input on one thread.

use std::cell::RefCell;
use std::collections::BTreeSet;

/// Ids of the live values, and the next id to hand out.
struct Registry {
    live: BTreeSet<u64>,
    next: u64,
}

thread_local! {
    static REGISTRY: RefCell<Registry> = const {
        RefCell::new(Registry {
            live: BTreeSet::new(),
            next: 0,
        })
    };
}

/// A value that registers itself while alive: two payload words and an id.
///
/// `Clone` makes a new live value with the same payload; `Default` has
/// the payload `[0, 0]`. Comparisons and `Hash` go by the payload (read
/// with the liveness check), so a tree of them orders as its model.
#[derive(Debug)]
pub struct Counted {
    payload: [u64; 2],
    id: u64,
}

impl Clone for Counted {
    fn clone(&self) -> Self {
        Self::new(self.payload())
    }
}

impl Default for Counted {
    fn default() -> Self {
        Self::new([0, 0])
    }
}

impl PartialEq for Counted {
    fn eq(&self, other: &Self) -> bool {
        self.payload() == other.payload()
    }
}

impl Eq for Counted {}

impl PartialOrd for Counted {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Counted {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.payload().cmp(&other.payload())
    }
}

impl std::hash::Hash for Counted {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.payload().hash(state);
    }
}

const _: () = assert!(core::mem::size_of::<Counted>() == 24);

impl Counted {
    /// A new live value holding `payload`.
    pub fn new(payload: [u64; 2]) -> Self {
        let id = REGISTRY.with_borrow_mut(|r| {
            let id = r.next;
            r.next += 1;
            r.live.insert(id);
            id
        });
        Self { payload, id }
    }

    /// The payload.
    ///
    /// # Panics
    ///
    /// If this value was already dropped: the tree handed out a value it
    /// no longer owns.
    pub fn payload(&self) -> [u64; 2] {
        let live = REGISTRY.with_borrow(|r| r.live.contains(&self.id));
        assert!(
            live,
            "read of Counted value {} ({:x?}) after it was dropped",
            self.id, self.payload
        );
        self.payload
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let was_live = REGISTRY.with_borrow_mut(|r| r.live.remove(&self.id));
        assert!(
            was_live,
            "Counted value {} ({:x?}) dropped twice",
            self.id, self.payload
        );
    }
}

/// The number of [`Counted`] values alive now.
pub fn live() -> usize {
    REGISTRY.with_borrow(|r| r.live.len())
}
