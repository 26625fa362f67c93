//! Consuming double-ended iterators from both ends.
//!
//! A 64-bit *pattern* says, step by step, which end the next item comes
//! from: bit `i % 64` set takes from the back. Tree and model iterators are
//! walked with the same pattern and the item sequences compared, so the two
//! cursors of a tree iterator meet at every possible place.

/// Takes every item of `it`, from the front or the back as `pattern`
/// says, and checks that the iterator stays exhausted at both ends.
///
/// # Panics
///
/// If the iterator yields an item after it first returned `None`.
pub fn walk<I: DoubleEndedIterator>(mut it: I, pattern: u64) -> Vec<I::Item> {
    let mut items = Vec::new();
    loop {
        let from_back = (pattern >> (items.len() % 64)) & 1 == 1;
        let item = if from_back { it.next_back() } else { it.next() };
        match item {
            Some(item) => items.push(item),
            None => break,
        }
    }
    assert!(
        it.next().is_none() && it.next_back().is_none(),
        "iterator yields items after it ended (after {} items)",
        items.len()
    );
    items
}

/// Like [`walk`], but stops after `take` items (checking exhaustion only
/// when the iterator ended before), for iterators too long to walk in
/// full: the ranges of a tree with range values expand key by key.
///
/// # Panics
///
/// As [`walk`].
pub fn walk_partial<I: DoubleEndedIterator>(mut it: I, pattern: u64, take: usize) -> Vec<I::Item> {
    let mut items = Vec::new();
    while items.len() < take {
        let from_back = (pattern >> (items.len() % 64)) & 1 == 1;
        let item = if from_back { it.next_back() } else { it.next() };
        match item {
            Some(item) => items.push(item),
            None => {
                assert!(
                    it.next().is_none() && it.next_back().is_none(),
                    "iterator yields items after it ended (after {} items)",
                    items.len()
                );
                break;
            }
        }
    }
    items
}

/// Like [`walk`], and also checks that `len()` and `size_hint()` count
/// the items not yet taken at every step.
///
/// # Panics
///
/// As [`walk`], or when the reported length is wrong.
pub fn walk_exact<I: DoubleEndedIterator + ExactSizeIterator>(
    mut it: I,
    pattern: u64,
) -> Vec<I::Item> {
    let total = it.len();
    let mut items = Vec::with_capacity(total);
    loop {
        let left = total - items.len();
        assert_eq!(it.len(), left, "len() after {} items", items.len());
        assert_eq!(it.size_hint(), (left, Some(left)), "size_hint()");
        let from_back = (pattern >> (items.len() % 64)) & 1 == 1;
        let item = if from_back { it.next_back() } else { it.next() };
        match item {
            Some(item) => items.push(item),
            None => break,
        }
        assert!(items.len() <= total, "more items than len() said");
    }
    assert_eq!(items.len(), total, "fewer items than len() said");
    assert!(
        it.next().is_none() && it.next_back().is_none(),
        "iterator yields items after it ended"
    );
    items
}

/// Like [`walk_exact`], but stops after `take` items (and checks that
/// the iterator is exhausted only when it yielded them all), leaving the
/// rest to whoever drops the iterator.
///
/// # Panics
///
/// As [`walk_exact`].
pub fn walk_exact_partial<I: DoubleEndedIterator + ExactSizeIterator>(
    mut it: I,
    pattern: u64,
    take: usize,
) -> Vec<I::Item> {
    let total = it.len();
    let take = take.min(total);
    let mut items = Vec::with_capacity(take);
    while items.len() < take {
        let left = total - items.len();
        assert_eq!(it.len(), left, "len() after {} items", items.len());
        assert_eq!(it.size_hint(), (left, Some(left)), "size_hint()");
        let from_back = (pattern >> (items.len() % 64)) & 1 == 1;
        let item = if from_back { it.next_back() } else { it.next() };
        match item {
            Some(item) => items.push(item),
            None => panic!(
                "iterator ended after {} items, len() said {total}",
                items.len()
            ),
        }
    }
    assert_eq!(it.len(), total - take, "len() after {take} items");
    if take == total {
        assert!(
            it.next().is_none() && it.next_back().is_none(),
            "iterator yields items after it ended"
        );
    }
    items
}

/// The `index % len`-th key of `model`, if it has any: how operations name
/// an existing key so that removes and lookups hit.
pub fn nth_key<K: Copy, V>(model: &std::collections::BTreeMap<K, V>, index: u16) -> Option<K> {
    let len = model.len();
    (len > 0).then(|| {
        *model
            .keys()
            .nth(usize::from(index) % len)
            .expect("index below len")
    })
}
