//! The checker itself: histories, the WGL search, and the recording of a
//! stress run's history. Shared by the integration suite
//! ([`super`]) and the concurrent engine's unit tests
//! (`src/concurrent/tests.rs`, which include this file by path, so that
//! they can plant a bug inside the engine and see it caught).
#![allow(dead_code)]

use std::collections::{BTreeMap, HashSet};
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};

/// What an operation did, and what it answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// `get(key)` answered `found`.
    Get { found: Option<u64> },
    /// `insert(key, value)` answered the value it replaced.
    Insert { value: u64, old: Option<u64> },
    /// `remove(key)` answered the value it removed.
    Remove { old: Option<u64> },
}

/// One operation of a history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// The thread that ran it, for reports.
    pub thread: usize,
    pub key: u64,
    pub action: Action,
    /// When it was called, and when it returned: `call < ret`, both read
    /// from one counter shared by every thread.
    pub call: u64,
    pub ret: u64,
}

impl Event {
    /// Applies the operation to the key's value, or says it could not
    /// have answered what it did.
    fn step(&self, value: Option<u64>) -> Option<Option<u64>> {
        match self.action {
            Action::Get { found } => (found == value).then_some(value),
            Action::Insert { value: new, old } => (old == value).then_some(Some(new)),
            Action::Remove { old } => (old == value).then_some(None),
        }
    }
}

/// Checks `history`, every key starting absent.
///
/// # Errors
///
/// The first key whose operations admit no linearization, with them.
pub fn check(history: &[Event]) -> Result<(), String> {
    let mut by_key: BTreeMap<u64, Vec<Event>> = BTreeMap::new();
    for event in history {
        assert!(
            event.call < event.ret,
            "an event returns after its call: {event:?}"
        );
        by_key.entry(event.key).or_default().push(*event);
    }
    for (key, mut events) in by_key {
        events.sort_by_key(|e| e.call);
        if !key_linearizable(&events) {
            return Err(format!(
                "key {key}: no linearization of {} operations: {events:#?}",
                events.len()
            ));
        }
    }
    Ok(())
}

/// WGL on one key's events, sorted by call.
fn key_linearizable(events: &[Event]) -> bool {
    assert!(
        events.len() <= 128,
        "histories of at most 128 operations per key"
    );
    let all: u128 = if events.len() == 128 {
        u128::MAX
    } else {
        (1u128 << events.len()) - 1
    };
    let mut tried: HashSet<(u128, Option<u64>)> = HashSet::new();
    // The search's stack: the placed set and the value after it, and the
    // candidates left to try at that point.
    let mut stack: Vec<(u128, Option<u64>, Vec<usize>)> = Vec::new();
    let first = candidates(events, 0);
    stack.push((0, None, first));
    while let Some((placed, value, todo)) = stack.last_mut() {
        if *placed == all {
            return true;
        }
        let Some(next) = todo.pop() else {
            stack.pop();
            continue;
        };
        let (placed, value) = (*placed, *value);
        let Some(after) = events[next].step(value) else {
            continue;
        };
        let placed = placed | 1 << next;
        if tried.insert((placed, after)) {
            let more = candidates(events, placed);
            stack.push((placed, after, more));
        }
    }
    false
}

/// The unplaced events that may come next: those called before every
/// unplaced event returned.
fn candidates(events: &[Event], placed: u128) -> Vec<usize> {
    let unplaced = || (0..events.len()).filter(move |&i| placed & 1 << i == 0);
    let Some(first_return) = unplaced().map(|i| events[i].ret).min() else {
        return Vec::new();
    };
    unplaced()
        .filter(|&i| events[i].call < first_return)
        .collect()
}

/// The map under test in the stress runs below.
pub trait TestMap: Sync {
    /// `get`.
    fn get(&self, key: u64) -> Option<u64>;
    /// `insert`, answering the value replaced.
    fn insert(&self, key: u64, value: u64) -> Option<u64>;
    /// `remove`, answering the value removed.
    fn remove(&self, key: u64) -> Option<u64>;
}

/// The generator of the recorded operations (WORKLOADS.md's splitmix64).
struct SplitMix64(u64);

impl SplitMix64 {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n
    }
}

/// Three threads, each running `per_thread` operations on keys
/// `0..keys`, the history recorded with one shared clock.
pub fn record(map: &impl TestMap, keys: u64, per_thread: usize, seed: u64) -> Vec<Event> {
    let clock = AtomicU64::new(0);
    let barrier = Barrier::new(3);
    let histories: Vec<Vec<Event>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|thread| {
                let (clock, barrier) = (&clock, &barrier);
                s.spawn(move || {
                    let mut rng = SplitMix64(seed * 31 + thread as u64);
                    let mut events = Vec::with_capacity(per_thread);
                    barrier.wait();
                    for _ in 0..per_thread {
                        let key = rng.below(keys);
                        let value = rng.below(1000);
                        let kind = rng.below(3);
                        let tick = || clock.fetch_add(1, Ordering::SeqCst);
                        events.push(perform(map, thread, key, value, kind, tick));
                    }
                    events
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    histories.into_iter().flatten().collect()
}

/// Runs one operation on `map` and records it: `kind` 0 is a `get`, 1 an
/// `insert` of `value`, 2 a `remove`; `tick` reads the shared clock before
/// the call and after its return.
pub fn perform(
    map: &impl TestMap,
    thread: usize,
    key: u64,
    value: u64,
    kind: u64,
    tick: impl Fn() -> u64,
) -> Event {
    let call = tick();
    let action = match kind {
        0 => Action::Get {
            found: map.get(key),
        },
        1 => Action::Insert {
            value,
            old: map.insert(key, value),
        },
        _ => Action::Remove {
            old: map.remove(key),
        },
    };
    let ret = tick();
    Event {
        thread,
        key,
        action,
        call,
        ret,
    }
}
