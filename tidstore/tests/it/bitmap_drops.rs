//! A counting allocator proves that a `TidBitmap` gives back every byte:
//! dropped, cleared, or replaced by an intersection, with small pages
//! only (whose drop visits no entry), large pages, lossy chunks that keep
//! their parts, and a one-page bitmap.

use tidstore::TidBitmap;

use crate::counting::thread_bytes;

/// A bitmap of `pages` pages of the chosen kinds.
fn filled(pages: u32, large_every: u32, budget: Option<usize>) -> TidBitmap {
    let mut b = match budget {
        Some(max) => TidBitmap::new(max).unwrap(),
        None => TidBitmap::unlimited(),
    };
    for block in 0..pages {
        let block = block * 3;
        b.add_tids(block, &[1, 7, (block % 100) as u16 + 1], false)
            .unwrap();
        if large_every > 0 && block % large_every == 0 {
            b.add_tids(block, &[300, 2048], true).unwrap();
        }
    }
    b.add_pages(1 << 20..(1 << 20) + 700);
    b
}

/// Runs `scenario` and checks this thread holds no more bytes after it.
fn returns_every_byte(what: &str, scenario: impl FnOnce()) {
    let before = thread_bytes();
    scenario();
    assert_eq!(thread_bytes(), before, "{what}: bytes left behind");
}

#[test]
fn bitmaps_give_back_every_byte() {
    let pages = test_depth::pick(60_000, 20_000, 20_000);
    returns_every_byte("small pages only, dropped", || {
        let b = filled(pages, 0, None);
        assert!(b.exact_pages() > 0 && b.memory_usage() > 0);
        drop(b);
    });
    returns_every_byte("large pages, dropped", || {
        drop(filled(pages, 7, None));
    });
    returns_every_byte("lossy chunks with parts, dropped", || {
        let b = filled(pages, 11, Some(TidBitmap::MIN_BUDGET * 2));
        assert!(b.lossy_pages() > 0);
        drop(b);
    });
    returns_every_byte("cleared, then dropped", || {
        let mut b = filled(pages, 7, None);
        b.clear();
        assert_eq!(b.memory_usage(), 0);
        drop(b);
    });
    returns_every_byte("intersections and unions", || {
        let mut a = filled(pages, 0, None);
        let b = filled(pages / 2, 5, None);
        a.intersect_with(&b);
        assert!(a.exact_pages() > 0);
        let mut c = filled(pages / 3, 0, Some(TidBitmap::MIN_BUDGET * 2));
        c.union_with(&a);
        c.intersect_with(&b);
        drop((a, b, c));
    });
    returns_every_byte("one page", || {
        let mut b = TidBitmap::unlimited();
        b.add_tids(9, &[3, 2048], false).unwrap();
        drop(b);
    });
}
