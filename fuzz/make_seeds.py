#!/usr/bin/env python3
"""Writes the seed corpus in seeds/<target>/: a few inputs per target that
encode meaningful operation sequences (grow a node through every size class
and shrink it back, keys at the width's boundaries, clustered keys, value
lengths on both sides of the varlen embedding limit, TID store forms and
refused calls, the map API: entries, mutable and owning iteration, bulk
removal, split and append, cursors, clones and set operations; the TID
store's set operations; concurrent trees, sequentially and in threaded
steps; trees with range values: chunks merged, split and spanned at every
level; TID bitmaps: every add, lossy chunks and blocks within a budget,
unions and intersections).

The bytes follow the `arbitrary` 1.x encoding that `fuzz_target!` decodes
(`Arbitrary::arbitrary_take_rest`): integers little-endian, `bool` the low
bit of a byte, an enum variant a `u32` scaled by the variant count, and a `Vec`
(the trailing list of operations, or offsets inside one) one `true` byte
before each element, a `false` byte or the end of the data after the last. Variant
numbers follow declaration order in src/ops.rs, src/keys.rs, src/shared.rs,
src/tids.rs, src/tid_sets.rs, src/concurrent.rs, src/ranges.rs and
src/bitmap.rs; if those enums change, re-run this script (old seeds still
decode, just to other operations). Check a seed's meaning with
`cargo +nightly fuzz fmt <target> seeds/<target>/<file>`.

Usage: python3 make_seeds.py   (from any directory)
"""

import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


class Enc:
    """Appends values in the `arbitrary` encoding."""

    def __init__(self):
        self.out = bytearray()

    def u8(self, v):
        self.out += struct.pack("<B", v & 0xFF)
        return self

    def i8(self, v):
        self.out += struct.pack("<b", v)
        return self

    def u16(self, v):
        self.out += struct.pack("<H", v & 0xFFFF)
        return self

    def u32(self, v):
        self.out += struct.pack("<I", v & 0xFFFFFFFF)
        return self

    def u64(self, v):
        self.out += struct.pack("<Q", v & (2**64 - 1))
        return self

    def u128(self, v):
        v &= 2**128 - 1
        return self.u64(v).u64(v >> 64)

    def bool(self, v):
        return self.u8(1 if v else 0)

    def variant(self, index, count):
        # derive(Arbitrary) picks variant (u32 * count) >> 32.
        return self.u32((index * 2**32 + count - 1) // count)

    def element(self):
        # Vec::arbitrary_take_rest: a `true` byte before each element.
        return self.bool(True)

    def vec_u16(self, values):
        """A Vec<u16> inside an operation (`Vec::arbitrary`): a `true` byte
        before each element, a `false` byte after the last."""
        for v in values:
            self.bool(True).u16(v)
        return self.bool(False)


# ---------------------------------------------------------------- keys.rs
KEYSPEC = 6


def small(e, n):
    e.variant(0, KEYSPEC).u8(n)


def near_max(e, n):
    e.variant(1, KEYSPEC).u8(n)


def clustered(e, base, offset):
    e.variant(2, KEYSPEC).u8(base).u16(offset)


def power_of_two(e, exponent, delta):
    e.variant(3, KEYSPEC).u8(exponent).i8(delta)


def repeated(e, byte):
    e.variant(4, KEYSPEC).u8(byte)


def raw(e, v):
    e.variant(5, KEYSPEC).u128(v)


def included(e, key, *args):
    e.variant(0, 3)
    key(e, *args)


def excluded(e, key, *args):
    e.variant(1, 3)
    key(e, *args)


def unbounded(e):
    e.variant(2, 3)


# ----------------------------------------------------------------- ops.rs
OP = 27
STEP_256 = 225  # run_step: 224 + 1 -> a step of 256


# What goes between an operation's element byte and its `Op` variant: nothing
# for the tree targets; for tree_shared, the `SharedOp::Tree` variant and
# which tree (see on_tree).
OP_PREFIX = [None]


def op(e, index):
    e.element()
    if OP_PREFIX[0] is not None:
        OP_PREFIX[0](e)
    e.variant(index, OP)


def insert(e, key, *args, value=0):
    op(e, 0)
    key(e, *args)
    e.u64(value)


def replace(e, index, value):
    op(e, 1)
    e.u16(index).u64(value)


def modify(e, index, value):
    op(e, 2)
    e.u16(index).u64(value)


def remove(e, key, *args):
    op(e, 3)
    key(e, *args)


def remove_existing(e, index):
    op(e, 4)
    e.u16(index)


def get(e, key, *args):
    op(e, 5)
    key(e, *args)


def get_near(e, index, delta):
    op(e, 6)
    e.u16(index).i8(delta)


def range_op(e, low, high, pattern):
    """`low` and `high` are callables writing a BoundSpec."""
    op(e, 7)
    low(e)
    high(e)
    e.u64(pattern)


def range_near(e, frm, fd, fx, to, td, tx, pattern):
    op(e, 8)
    e.u16(frm).i8(fd).bool(fx).u16(to).i8(td).bool(tx).u64(pattern)


def iterate(e, pattern):
    op(e, 9)
    e.u64(pattern)


def clear(e):
    op(e, 10)


def insert_run(e, key, args, length, step, value=0):
    op(e, 11)
    key(e, *args)
    e.u16(length).u8(step).u64(value)


def remove_run(e, key, args, length, step):
    op(e, 12)
    key(e, *args)
    e.u16(length).u8(step)


def verify(e):
    op(e, 13)


# The map API (ops.rs after `Verify`). A KeyPick is written by a callable:
# any_key(spec, *args), existing(n) or near(n, delta).
def any_key(key, *args):
    def w(e):
        e.variant(0, 3)
        key(e, *args)
    return w


def existing(index):
    return lambda e: e.variant(1, 3).u16(index)


def near(index, delta):
    return lambda e: e.variant(2, 3).u16(index).i8(delta)


def pick_included(pick):
    return lambda e: (e.variant(0, 3), pick(e))


def pick_excluded(pick):
    return lambda e: (e.variant(1, 3), pick(e))


def pick_unbounded(e):
    e.variant(2, 3)


ENTRY_ACTIONS = 6
OCC_GET, OCC_GET_MUT, OCC_INTO_MUT, OCC_INSERT, OCC_REMOVE, OCC_REMOVE_ENTRY = range(6)


def entry(e, pick, action, value):
    """`action` is ("or_insert", write), ("or_insert_with", write),
    ("or_insert_with_key",), ("or_default", write), ("and_modify", insert)
    or ("match", occupied, vacant_insert, write)."""
    op(e, 14)
    pick(e)
    name = action[0]
    if name == "or_insert":
        e.variant(0, ENTRY_ACTIONS).bool(action[1])
    elif name == "or_insert_with":
        e.variant(1, ENTRY_ACTIONS).bool(action[1])
    elif name == "or_insert_with_key":
        e.variant(2, ENTRY_ACTIONS)
    elif name == "or_default":
        e.variant(3, ENTRY_ACTIONS).bool(action[1])
    elif name == "and_modify":
        e.variant(4, ENTRY_ACTIONS).bool(action[1])
    else:
        e.variant(5, ENTRY_ACTIONS).variant(action[1], 6).bool(action[2]).bool(action[3])
    e.u64(value)


def iter_mut(e, pattern, rewrite, values_only):
    op(e, 15)
    e.u64(pattern).u64(rewrite).bool(values_only)


def range_mut(e, low, high, pattern, rewrite):
    op(e, 16)
    low(e)
    high(e)
    e.u64(pattern).u64(rewrite)


ENTRIES, KEYS, VALUES = 0, 1, 2


def into_iter(e, kind, pattern, take, on_self):
    op(e, 17)
    e.variant(kind, 3).u64(pattern).u16(take).bool(on_self)


def pop(e, count, pattern):
    op(e, 18)
    e.u8(count).u64(pattern)


def retain(e, seed, keep, rewrite):
    op(e, 19)
    e.u64(seed).u8(keep).bool(rewrite)


def split_append(e, pick, upper_into_lower):
    op(e, 20)
    pick(e)
    e.bool(upper_into_lower)


def other_spec(e, every, frm, key, args, length, step, value):
    e.u8(every).u16(frm)
    key(e, *args)
    e.u8(length).u8(step).u64(value)


def append(e, *other):
    op(e, 21)
    other_spec(e, *other)


def seek(e, pick):
    op(e, 22)
    pick(e)


CURSOR_MOVES = 7
NEXT, PREV, PEEK_NEXT, PEEK_PREV, FORK = 0, 1, 2, 3, 6


def cursor(e, start, moves):
    """`moves`: NEXT, PREV, PEEK_NEXT, PEEK_PREV, FORK, ("seek", pick) or
    ("seek_get", pick)."""
    op(e, 23)
    start(e)
    for m in moves:
        e.bool(True)
        if isinstance(m, tuple):
            e.variant(4 if m[0] == "seek" else 5, CURSOR_MOVES)
            m[1](e)
        else:
            e.variant(m, CURSOR_MOVES)
    e.bool(False)


def clone_change(e, pick, remove, value):
    op(e, 24)
    pick(e)
    e.bool(remove).u64(value)


UNION, INTERSECT, DIFFERENCE = 0, 1, 2
OURS, THEIRS, MIXED = 0, 1, 2


def set_op(e, kind, merge, *other):
    op(e, 25)
    e.variant(kind, 3)
    other_spec(e, *other)
    e.variant(merge, 3)


def compare(e, *other):
    op(e, 26)
    other_spec(e, *other)


DRAIN, CLEAR, DROP = 0, 1, 2


def tree_input(insert_only, finish, bases):
    e = Enc().bool(insert_only).variant(finish, 3)
    for b in bases:
        e.u128(b)
    return e


def tree_seeds():
    seeds = {}

    # One node grows through every class and shrinks back, at the last
    # level (step 1) and one level up (step 256).
    e = tree_input(False, DRAIN, [0x1000, 1 << 40, 2**64 - 4096])
    insert_run(e, small, [0], 300, 0, value=7)
    verify(e)
    iterate(e, 0x5555_5555_5555_5555)
    remove_run(e, small, [0], 260, 0)
    verify(e)
    insert_run(e, clustered, [1, 0], 300, STEP_256, value=9)
    verify(e)
    remove_run(e, clustered, [1, 0], 290, STEP_256)
    iterate(e, 2**64 - 1)
    seeds["grow_shrink"] = e

    # Keys at the width's edges and around powers of two; ranges across
    # them from both ends.
    e = tree_input(False, DROP, [0, 2**63, 2**128 - 2**64])
    for n in (0, 255):
        insert(e, small, n, value=n)
        insert(e, near_max, n, value=n + 1000)
    for exp in (8, 16, 64, 127):
        for delta in (-1, 0):
            insert(e, power_of_two, exp, delta, value=exp * 3 + delta)
    insert(e, repeated, 0xFF, value=5)
    insert(e, repeated, 0x01, value=6)
    verify(e)
    range_op(
        e,
        lambda e: included(e, power_of_two, 16, -1),
        lambda e: excluded(e, near_max, 0),
        0xF0F0_F0F0_F0F0_F0F0,
    )
    range_op(e, unbounded, lambda e: included(e, small, 255), 0xAAAA)
    range_op(
        e,
        lambda e: excluded(e, near_max, 1),
        unbounded,
        2**64 - 1,
    )
    get(e, power_of_two, 32, 2)
    get_near(e, 3, 1)
    remove(e, near_max, 0)
    remove_existing(e, 0)
    iterate(e, 0x0123_4567_89AB_CDEF)
    seeds["boundaries"] = e

    # Clustered keys in insert-only memory: replacements, get_mut, ranges
    # between existing keys, a clear and a refill.
    e = tree_input(True, CLEAR, [0xABCD_0000, 0xABCD_0100, 1 << 100])
    insert_run(e, clustered, [0, 0], 70, 0, value=1)
    insert_run(e, clustered, [1, 0], 20, 2, value=2)
    for i in range(0, 80, 7):
        replace(e, i, 100 + i)
        modify(e, i + 3, 200 + i)
    range_near(e, 5, -1, False, 60, 1, True, 0x3333)
    get_near(e, 10, -1)
    verify(e)
    clear(e)
    insert_run(e, clustered, [2, 0xFFF0], 40, 0, value=3)
    verify(e)
    seeds["clustered"] = e

    # Values of many varlen lengths (the value seed modulo 41), replaced
    # back and forth across the 7-byte embedding limit.
    e = tree_input(False, DRAIN, [0x77_0000, 0, 0])
    insert_run(e, clustered, [0, 0], 60, 0, value=0x1234)
    for length in (0, 7, 8, 40):
        insert(e, small, length, value=length)
    for i, length in enumerate((8, 7, 40, 0, 9, 1)):
        replace(e, i * 5, length)
    remove_run(e, clustered, [0, 0], 30, 1)
    verify(e)
    seeds["value_lengths"] = e

    # Sparse keys, for the compressed trees: scattered keys (lazy leaves
    # and long skipped prefixes), pairs that part at each byte of a shared
    # prefix (a node where they part, prefixes split), then removals that
    # collapse nodes back into lazy leaves and merge single children.
    e = tree_input(False, DRAIN, [0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10, 2**100, 2**60])
    x = 0x9E37_79B9_7F4A_7C15
    for i in range(40):
        x = (x * 0x2545_F491_4F6C_DD1D + i) % 2**128
        insert(e, raw, x, value=i)
    insert(e, clustered, 0, 0, value=99)
    for byte in range(16):
        insert(e, raw, 0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10 ^ (1 << (8 * byte)), value=byte)
    verify(e)
    range_op(
        e,
        lambda e: included(e, clustered, 0, 0),
        lambda e: excluded(e, near_max, 0),
        0x0F0F_0F0F_0F0F_0F0F,
    )
    for i in range(0, 40, 3):
        remove_existing(e, i)
        get_near(e, i, 1)
    insert_run(e, clustered, [1, 0], 30, STEP_256 + 5, value=4)
    verify(e)
    remove_run(e, clustered, [1, 0], 29, STEP_256 + 5)
    for byte in range(15):
        remove(e, raw, 0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10 ^ (1 << (8 * byte)))
        if byte % 4 == 0:
            verify(e)
    iterate(e, 0x5A5A_5A5A_5A5A_5A5A)
    seeds["sparse"] = e

    # The map API on a node grown through its classes: every entry
    # combinator on present and absent keys, mutable walks, pops, a
    # retain, owning walks of clones and of the tree itself, cursors.
    e = tree_input(False, DRAIN, [0x4400, 1 << 36, 2**62])
    insert_run(e, clustered, [0, 0], 200, 0, value=5)
    for i, action in enumerate([
        ("or_insert", True), ("or_insert_with", False),
        ("or_insert_with_key",), ("or_default", True),
        ("and_modify", True), ("and_modify", False),
        ("match", OCC_GET, True, False), ("match", OCC_GET_MUT, False, False),
        ("match", OCC_INTO_MUT, True, True), ("match", OCC_INSERT, True, False),
        ("match", OCC_REMOVE, False, False), ("match", OCC_REMOVE_ENTRY, True, True),
    ]):
        entry(e, existing(i * 13), action, 1000 + i)
        entry(e, any_key(clustered, 0, 300 + i), action, 2000 + i)
        entry(e, near(i * 7, 1), action, 3000 + i)
    verify(e)
    iter_mut(e, 0x0F0F_0F0F_0F0F_0F0F, 77, False)
    iter_mut(e, 0xAAAA_AAAA_AAAA_AAAA, 78, True)
    range_mut(e, pick_included(existing(20)), pick_excluded(near(150, 1)), 0x3333, 79)
    range_mut(e, pick_excluded(existing(180)), pick_unbounded, 2**64 - 1, 80)
    pop(e, 12, 0x0F0)
    seek(e, near(40, 1))
    seek(e, any_key(near_max, 0))
    cursor(e, existing(10), [NEXT, NEXT, PREV, PEEK_PREV, PEEK_NEXT, FORK,
                             ("seek", near(100, -1)), NEXT, PREV, PREV,
                             ("seek_get", existing(50)), ("seek_get", near(60, 1)),
                             ("seek", any_key(near_max, 0)), NEXT, PREV, PEEK_NEXT])
    retain(e, 0xC0FFEE, 160, True)
    verify(e)
    into_iter(e, ENTRIES, 0x5555, 40, False)
    into_iter(e, KEYS, 0xFF00, 1000, False)
    into_iter(e, VALUES, 0x1248, 7, False)
    into_iter(e, ENTRIES, 0x6666, 90, True)
    insert_run(e, clustered, [1, 0], 100, STEP_256, value=6)
    verify(e)
    seeds["map_api"] = e

    # Split and append, clones, and set operations against second trees
    # that share every key, some keys, or none.
    e = tree_input(True, CLEAR, [0x7700, 0x7700 + 2**24, 2**40])
    insert_run(e, clustered, [0, 0], 150, 1, value=8)
    insert_run(e, clustered, [1, 0], 60, STEP_256, value=9)
    split_append(e, existing(75), True)
    split_append(e, near(180, 1), False)
    split_append(e, any_key(small, 0), True)
    split_append(e, any_key(near_max, 0), False)
    clone_change(e, existing(30), False, 42)
    clone_change(e, existing(31), True, 0)
    clone_change(e, any_key(clustered, 2, 5), False, 43)
    compare(e, 1, 0, small, [0], 0, 0, 1)       # every key: equal sets
    compare(e, 3, 1, small, [0], 0, 0, 2)       # a subset
    compare(e, 0, 0, clustered, [2, 0], 50, 0, 3)  # disjoint
    compare(e, 2, 0, clustered, [2, 0], 9, 0, 4)   # overlapping
    set_op(e, UNION, MIXED, 5, 2, clustered, [2, 0], 40, 1, 10)
    set_op(e, INTERSECT, THEIRS, 2, 0, clustered, [0, 500], 30, 0, 11)
    set_op(e, DIFFERENCE, OURS, 4, 1, small, [0], 0, 0, 12)
    verify(e)
    append(e, 3, 0, clustered, [1, 0x40], 100, 1, 13)
    set_op(e, UNION, OURS, 0, 0, near_max, [20], 20, 0, 14)
    set_op(e, INTERSECT, MIXED, 1, 0, small, [0], 0, 0, 15)
    clone_change(e, existing(3), True, 0)
    set_op(e, DIFFERENCE, OURS, 1, 0, small, [0], 0, 0, 16)  # everything
    set_op(e, UNION, THEIRS, 0, 0, clustered, [1, 0], 200, STEP_256, 17)  # into empty
    verify(e)
    seeds["split_clone_sets"] = e

    return seeds


# ------------------------------------------------------------- shared.rs
SHAREDOP = 4
UNLIMITED = None
FIRST, SECOND, BOTH = 0, 1, 2
S_DRAIN, S_CLEAR, S_DESTROY = 0, 1, 2
NONE, LAZY, PATH, FULL, RANGES = 0, 1, 2, 3, 4


def on_tree(second):
    """Makes the ops.rs helpers write `SharedOp::Tree { second, op }`."""
    def prefix(e):
        e.variant(0, SHAREDOP).bool(second)
    OP_PREFIX[0] = prefix


def shared_input(limit, trees, finish, bases, compression=NONE):
    """`limit` is None (unlimited) or n for `AreaLimit::Small(n)`: 64 KiB
    << (n % 3) above the empty size."""
    e = Enc()
    if limit is None:
        e.variant(0, 2)
    else:
        e.variant(1, 2).u8(limit)
    e.variant(trees, 3).variant(finish, 3).variant(compression, 5)
    for b in bases:
        e.u128(b)
    return e


def reread(e, second, pattern):
    e.element().variant(1, SHAREDOP).bool(second).u64(pattern)


def attach(e, second, index, value, key, *args):
    e.element().variant(2, SHAREDOP).bool(second).u16(index)
    key(e, *args)
    e.u64(value)


def fill(e, second, stride, key, *args):
    e.element().variant(3, SHAREDOP).bool(second)
    key(e, *args)
    e.u8(stride)


def shared_seeds(compression=NONE):
    """The seeds of `tree_shared`, for the pair of trees of `compression`."""
    seeds = {}
    try:
        # Both trees in a 64 KiB-limited area: a run into the first, the
        # second filled until refused, refused inserts in both, reads and
        # a second handle while full, removes, then room again.
        e = shared_input(0, BOTH, S_DRAIN, [0x5000, 1 << 33, 2**60], compression)
        on_tree(False)
        insert_run(e, clustered, [0, 0], 300, 0, value=1)
        fill(e, True, 1, clustered, 1, 0)
        on_tree(False)
        insert_run(e, clustered, [2, 0], 300, STEP_256 + 1, value=2)
        reread(e, False, 0xAAAA_AAAA_AAAA_AAAA)
        attach(e, True, 5, 9, clustered, 1, 7)
        on_tree(True)
        remove_run(e, clustered, [1, 0], 200, 0)
        verify(e)
        on_tree(False)
        remove_run(e, clustered, [0, 0], 300, 0)
        insert_run(e, small, [0], 100, 0, value=3)
        verify(e)
        seeds["fill_both_limited"] = e

        # Two trees without a limit, destroyed full: nodes grown through
        # every class and shrunk in both, ranges, second handles, a clear.
        e = shared_input(UNLIMITED, BOTH, S_DESTROY, [0x1000, 1 << 20, 2**31], compression)
        for second in (False, True):
            on_tree(second)
            insert_run(e, small, [0], 300, 0, value=7)
            iterate(e, 0x5555_5555_5555_5555)
            remove_run(e, small, [0], 260, 0)
            insert_run(e, clustered, [1, 0], 300, STEP_256, value=9)
            range_op(
                e,
                lambda e: included(e, power_of_two, 16, -1),
                lambda e: excluded(e, near_max, 0),
                0xF0F0_F0F0_F0F0_F0F0,
            )
            range_near(e, 5, -1, False, 60, 1, True, 0x3333)
        attach(e, False, 3, 11, near_max, 0)
        attach(e, True, 4, 12, small, 9)
        reread(e, True, 2**64 - 1)
        on_tree(True)
        clear(e)
        insert_run(e, clustered, [2, 0xFFF0], 40, 0, value=3)
        on_tree(False)
        verify(e)
        seeds["two_trees_destroyed_full"] = e

        # Varlen strings in a 256 KiB-limited area: lengths on both sides
        # of the embedding limit, replaced back and forth, then filled.
        e = shared_input(2, SECOND, S_CLEAR, [0x77_0000, 0, 0], compression)
        on_tree(True)
        insert_run(e, clustered, [0, 0], 200, 0, value=0x1234)
        for length in (0, 7, 8, 40):
            insert(e, small, length, value=length)
        for i, length in enumerate((8, 7, 40, 0, 9, 1)):
            replace(e, i * 5, length)
        fill(e, True, 0, clustered, 0, 300)
        for i, length in enumerate((40, 39, 0)):
            replace(e, i * 11, length)
        remove_run(e, clustered, [0, 0], 100, 1)
        fill(e, True, 2, power_of_two, 24, 0)
        verify(e)
        seeds["varlen_limited"] = e

        # The first tree alone, limited to 128 KiB: keys one node each
        # (stride 256^3), refused, then removes that may be refused too.
        e = shared_input(1, FIRST, S_DRAIN, [2**40, 0, 0], compression)
        fill(e, False, 3, small, 0)
        on_tree(False)
        modify(e, 3, 42)
        get_near(e, 7, 1)
        remove_run(e, small, [0], 300, STEP_256 + 3)
        insert(e, near_max, 0, value=5)
        verify(e)
        seeds["one_node_per_key"] = e

        if compression == RANGES:
            # Ranges split where a 64 KiB-limited area refuses: runs of
            # one value (an even seed) merge chunks of 256 into ranges,
            # the second tree fills the area, then removes and inserts of
            # other values land inside the ranges, each split needing a
            # node the area may not have.
            e = shared_input(2, BOTH, S_DRAIN, [0x1_0000, 1 << 33, 2**60], compression)
            on_tree(False)
            insert_run(e, small, [0], 300, 0, value=2)
            fill(e, False, 32, clustered, 0, 0)
            fill(e, True, 1, clustered, 1, 0)
            on_tree(False)
            remove_run(e, clustered, [0, 0x10], 300, STEP_256)
            insert_run(e, clustered, [0, 0x2000], 300, 1, value=5)
            remove_run(e, small, [0], 300, 1)
            verify(e)
            on_tree(True)
            remove_run(e, clustered, [1, 0], 300, 0)
            on_tree(False)
            remove_run(e, clustered, [0, 0x3010], 300, STEP_256)
            verify(e)
            seeds["split_refused"] = e
    finally:
        OP_PREFIX[0] = None
    return seeds


# --------------------------------------------------------------- tids.rs
TIDOP = 10
OFFSETS = 5


def run_offsets(e, start, length):
    # Run: start % 2048 + 1 .. + length % 2049, at most 2048
    e.variant(2, OFFSETS).u16(start).u16(length)


def stride_offsets(e, start, step, count):
    e.variant(3, OFFSETS).u16(start).u8(step).u8(count)


def tid_op(e, index):
    e.element().variant(index, TIDOP)


def tid_set(e, key, args, offsets, oargs):
    tid_op(e, 0)
    key(e, *args)
    offsets(e, *oargs)


def tid_replace(e, index, offsets, oargs):
    tid_op(e, 1)
    e.u16(index)
    offsets(e, *oargs)


def tid_set_run(e, key, args, count, step, offsets, oargs):
    tid_op(e, 2)
    key(e, *args)
    e.u8(count).u8(step)
    offsets(e, *oargs)


def tid_probe(e, key, args, offset):
    tid_op(e, 3)
    key(e, *args)
    e.u16(offset)


def tid_probe_near(e, index, pick, block_delta, offset_delta):
    tid_op(e, 4)
    e.u16(index).u16(pick).i8(block_delta).i8(offset_delta)


def tid_copy(e, index, buf_len):
    tid_op(e, 5)
    e.u16(index).u16(buf_len)


def tid_iterate(e):
    tid_op(e, 6)


def tid_clear(e):
    tid_op(e, 7)


def tid_verify(e):
    tid_op(e, 8)


def tid_equal_run(e, key, args, count, offsets, oargs, at, changed=None):
    """`changed` None, or (offsets, oargs) for the block `at % count`."""
    tid_op(e, 9)
    key(e, *args)
    e.u16(count)
    offsets(e, *oargs)
    e.u16(at)
    if changed is None:
        e.bool(False)
    else:
        e.bool(True)
        changed[0](e, *changed[1])


# The store a tidstore input drives: None for a local one, else the
# limit of the shared store's area (UNLIMITED, or n for AreaLimit::Small).
TID_STORE = [None]


def tid_input(insert_only, budget, bases):
    e = Enc().bool(insert_only)
    if budget is None:
        e.variant(0, 3)  # Large
    elif budget == "small":
        e.variant(1, 3)
    else:
        e.variant(2, 3).u16(budget)  # Tiny(n)
    store = TID_STORE[0]
    if store is None:
        e.variant(0, 2)  # StoreKind::Local
    elif store == "unlimited":
        e.variant(1, 2).variant(0, 2)  # Shared(Unlimited)
    else:
        e.variant(1, 2).variant(1, 2).u8(store)  # Shared(Small(n))
    for b in bases:
        e.u128(b)
    return e


def tidstore_seeds(store=None):
    """The seeds of `tidstore`, on a local store (`store` None) or a
    shared one whose area has limit `store` ("unlimited" or n)."""
    TID_STORE[0] = store
    seeds = {}

    # Every entry form: inline (1 to 3 offsets), a run, bitmaps, the
    # largest offset; replaced between forms; probes next to them.
    e = tid_input(False, None, [1000, 1 << 24, 2**32 - 300])
    tid_set(e, small, [1], stride_offsets, [0, 1, 1])  # [1]
    tid_set(e, small, [2], stride_offsets, [2046, 1, 3])  # 2047, 2048
    tid_set(e, small, [3], stride_offsets, [9, 30, 3])  # three offsets
    tid_set(e, small, [4], run_offsets, [0, 2048])  # 1..=2048
    tid_set(e, small, [5], stride_offsets, [0, 7, 200])  # a bitmap
    tid_set(e, near_max, [0], stride_offsets, [63, 64, 20])
    for i in range(6):
        tid_replace(e, i, run_offsets if i % 2 else stride_offsets,
                    [i * 100, 50] if i % 2 else [i, 3, 4])
        tid_probe_near(e, i, i * 7, 0, -1)
        tid_probe_near(e, i, i * 7, 1, 1)
    tid_copy(e, 3, 2)
    tid_copy(e, 4, 2048)
    tid_iterate(e)
    tid_verify(e)
    seeds["entry_forms"] = e

    # Many blocks so the tree's nodes grow, in insert-only memory with a
    # small budget; a clear and a refill.
    e = tid_input(True, "small", [0x0100_0000, 5 << 16, 0])
    tid_set_run(e, clustered, [0, 0], 255, 1, run_offsets, [10, 20])
    tid_set_run(e, clustered, [1, 0], 100, 3, stride_offsets, [4, 9, 12])
    tid_verify(e)
    tid_probe(e, clustered, [0, 17], 15)
    tid_probe(e, clustered, [1, 3], 5)
    tid_clear(e)
    tid_set_run(e, power_of_two, [24, -2], 4, 1, run_offsets, [2047, 1])  # [2048]
    tid_iterate(e)
    seeds["many_blocks"] = e

    # Refused calls (offset 0, past 2048, a duplicate, unsorted, empty)
    # between accepted ones, with a tiny budget; each must change nothing.
    e = tid_input(False, 200, [42, 0, 0])
    tid_set(e, clustered, [0, 0], run_offsets, [0, 5])
    for offsets in ([0, 1], [2048, 2049], [5, 5], [9, 3], []):
        tid_op(e, 0)
        clustered(e, 0, 0)
        e.variant(0, OFFSETS).vec_u16(offsets)  # Raw
    tid_op(e, 1)  # Replace the block with a list broken at its 3rd offset
    e.u16(0).variant(4, OFFSETS).vec_u16([1, 2, 3, 4]).u8(2).u16(0).bool(False)
    tid_op(e, 0)  # Sorted: 0 survives the modulo, so refused
    clustered(e, 0, 1)
    e.variant(1, OFFSETS).vec_u16([2049 * 3, 7])
    tid_iterate(e)
    seeds["refused"] = e

    # Runs of blocks with equal offsets, which the block table stores as
    # range values: 600 blocks from a chunk's start (two chunks merge),
    # then the middle one changed (its range splits); a run across a
    # chunk edge with the edge block changed to a bitmap; a run of
    # refused offsets; an empty run; a run replaced block by block.
    e = tid_input(False, None, [0x1_0000, 0x2_0000 - 44, 0x7_0000])
    tid_equal_run(e, clustered, [0, 0], 600, run_offsets, [0, 3], 300,
                  (stride_offsets, [3, 3, 5]))
    tid_probe(e, clustered, [0, 299], 3)
    tid_probe(e, clustered, [0, 300], 3)
    tid_probe_near(e, 256, 0, 0, 0)
    tid_equal_run(e, clustered, [1, 0], 600, stride_offsets, [0, 1, 1], 44,
                  (run_offsets, [999, 1049]))
    tid_equal_run(e, clustered, [2, 0], 512, stride_offsets, [9, 30, 3], 0)
    tid_replace(e, 1500, stride_offsets, [9, 30, 3])
    tid_op(e, 9)  # a run of refused offsets
    clustered(e, 2, 600)
    e.u16(50).variant(0, OFFSETS).vec_u16([5, 3]).u16(7).bool(False)
    tid_equal_run(e, clustered, [2, 0], 0, run_offsets, [0, 1], 0)
    tid_verify(e)
    tid_equal_run(e, clustered, [0, 0], 600, run_offsets, [0, 3], 599,
                  (run_offsets, [0, 3]))
    tid_copy(e, 256, 8)
    tid_iterate(e)
    seeds["equal_runs"] = e

    # The same in insert-only memory with a small budget: two chunks
    # merge, the first block of the second changes, the run is reset.
    e = tid_input(True, "small", [0x4_0000, 0, 0])
    tid_equal_run(e, clustered, [0, 0], 512, run_offsets, [0, 2048], 256,
                  (stride_offsets, [0, 2, 40]))
    tid_equal_run(e, clustered, [0, 256], 256, run_offsets, [0, 2048], 0)
    tid_verify(e)
    tid_clear(e)
    tid_equal_run(e, clustered, [0, 255], 258, stride_offsets, [0, 1, 3], 1,
                  (stride_offsets, [0, 1, 2]))
    tid_iterate(e)
    seeds["equal_runs_insert_only"] = e

    TID_STORE[0] = None
    return seeds


# ------------------------------------------------------------ tid_sets.rs
def set_budget(e, tiny):
    if tiny is None:
        e.variant(0, 2)
    else:
        e.variant(1, 2).u16(tiny)


def window(n):
    return lambda e: e.variant(0, 3).u8(n)


def spread(n):
    return lambda e: e.variant(1, 3).u8(n)


def raw_block(b):
    return lambda e: e.variant(2, 3).u32(b)


FORMS = 6


def few(*offsets):
    offs = list(offsets) + [0] * (3 - len(offsets))
    # Each offset is stored modulo 2048 plus 1.
    return lambda e: (e.variant(0, FORMS).u8(len(offsets) - 1),
                      [e.u16(o - 1) for o in offs])


def run_form(first, length):
    return lambda e: e.variant(1, FORMS).u16(first - 1).u16(length)


def stride_form(first, step, count):
    return lambda e: e.variant(2, FORMS).u16(first - 1).u8(step).u8(count)


def bits_form(first, bits):
    return lambda e: e.variant(3, FORMS).u16(first - 1).u64(bits)


def edges_form(low, high):
    return lambda e: e.variant(4, FORMS).u8(low).u8(high)


def full_form(e):
    e.variant(5, FORMS)


def store_spec(e, insert_only, tiny, blocks):
    e.bool(insert_only)
    set_budget(e, tiny)
    for block, form in blocks:
        e.bool(True)
        block(e)
        form(e)
    e.bool(False)


OPS3 = {"union": 0, "intersect": 1, "difference": 2}


def steps(e, items):
    """("combine", op, into_second), ("copy", op, into_second, max_bytes),
    ("set", second, block, form) or ("clear", second)."""
    for item in items:
        e.bool(True)
        kind = item[0]
        if kind == "combine":
            e.variant(0, 4).variant(OPS3[item[1]], 3).bool(item[2])
        elif kind == "copy":
            e.variant(1, 4).variant(OPS3[item[1]], 3).bool(item[2]).u16(item[3])
        elif kind == "set":
            e.variant(2, 4).bool(item[1])
            item[2](e)
            item[3](e)
        else:
            e.variant(3, 4).bool(item[1])
    e.bool(False)


def probes(e, items):
    for block, offset in items:
        e.bool(True)
        block(e)
        e.u16(offset)


def tid_set_seeds():
    seeds = {}
    every_form = [few(1), few(2047, 2048), few(5, 900, 2048), run_form(1, 2048),
                  run_form(100, 300), stride_form(3, 7, 250), bits_form(1, 0xF0F0_F0F0_0F0F_0F0F),
                  edges_form(3, 4), full_form, run_form(2000, 49)]

    # The same blocks in both stores with every pair of entry forms, then
    # every operation both ways, chained, and into tiny copies.
    e = Enc()
    store_spec(e, False, None, [(window(i), f) for i, f in enumerate(every_form)])
    store_spec(e, True, None, [(window(i), f) for i, f in enumerate(reversed(every_form))]
               + [(window(20), run_form(1, 10)), (spread(3), few(9))])
    steps(e, [("copy", "union", False, 64), ("copy", "intersect", True, 32),
              ("copy", "difference", False, 0), ("copy", "union", True, 2000),
              ("combine", "union", False), ("combine", "intersect", True),
              ("combine", "difference", False), ("combine", "union", True),
              ("set", False, window(2), few(3)), ("combine", "difference", True),
              ("combine", "intersect", False)])
    probes(e, [(window(0), 0), (window(3), 2049), (raw_block(0), 1), (raw_block(2**32 - 1), 2048)])
    seeds["every_form_pair"] = e

    # Runs that overlap, touch, nest and split in two; a tiny budget on the
    # first store, so that its own operations are refused.
    e = Enc()
    store_spec(e, False, 300, [(window(1), run_form(10, 100)), (window(2), run_form(1, 50)),
                               (window(3), run_form(500, 1000)), (window(4), run_form(1, 2048)),
                               (window(5), run_form(2040, 9))])
    store_spec(e, False, None, [(window(1), run_form(110, 20)), (window(2), run_form(20, 5)),
                                (window(3), run_form(1, 2048)), (window(4), run_form(700, 1)),
                                (window(6), few(1, 2, 3))])
    steps(e, [("combine", "union", False), ("combine", "difference", False),
              ("combine", "intersect", False), ("combine", "difference", True),
              ("clear", False), ("combine", "union", False), ("combine", "intersect", True)])
    probes(e, [(window(1), 109), (window(1), 110), (window(4), 700)])
    seeds["runs_tiny_budget"] = e

    # Many blocks, one per last-level node and dense, insert-only against
    # replacing; subsets and ordered probes across them.
    e = Enc()
    store_spec(e, True, None, [(spread(i), bits_form(1 + i * 30, 0xFFFF_0000_FFFF)) for i in range(24)]
               + [(window(i), edges_form(i, 8 - i % 9)) for i in range(0, 240, 10)])
    store_spec(e, False, None, [(spread(i), few(1 + i * 30)) for i in range(0, 24, 2)])
    steps(e, [("copy", "intersect", False, 100), ("combine", "difference", True),
              ("combine", "union", True), ("copy", "difference", True, 500),
              ("set", True, raw_block(7), full_form), ("combine", "intersect", False)])
    probes(e, [(spread(5), 151), (spread(5), 152), (window(0), 2048)])
    seeds["many_blocks_subsets"] = e
    return seeds


# -------------------------------------------------------------- ranges.rs
RANGEOP = 16
(G_INSERT, G_REMOVE, G_INSERT_RUN, G_REMOVE_RUN, G_INSERT_SPAN, G_SET_SPAN,
 G_GET, G_SPANS, G_RANGE, G_ITERATE, G_SEEK, G_CURSOR, G_GET_EACH,
 G_CLONE_CHANGE, G_CLEAR, G_VERIFY) = range(RANGEOP)
LEAF_TREE, VARLEN_TREE, INLINE_TREE = range(3)
# Level bytes (ranges::level_of): 0, 1, 2, 3, and 4 (refused).
L0, L1, L2, L3, L4 = 0, 1, 12, 14, 15
STEP1, STEP256, STEP64K = 0, 225, 226

# A RangeKey is written by a callable: low(n), chunk(c, offset),
# existing_key(at, delta) or any_u32(n); a RangeBound by r_incl(key),
# r_excl(key) or r_unb.


def low(n):
    return lambda e: e.variant(0, 4).u32(n)


def chunk(c, offset):
    return lambda e: e.variant(1, 4).u16(c).u8(offset)


def existing_key(at, delta):
    return lambda e: e.variant(2, 4).u32(at).i8(delta)


def any_u32(n):
    return lambda e: e.variant(3, 4).u32(n)


def r_incl(key):
    return lambda e: (e.variant(0, 3), key(e))


def r_excl(key):
    return lambda e: (e.variant(1, 3), key(e))


def r_unb(e):
    e.variant(2, 3)


def g_op(e, index):
    e.element().variant(index, RANGEOP)


def g_insert(e, key, value):
    g_op(e, G_INSERT)
    key(e)
    e.u8(value)


def g_remove(e, key):
    g_op(e, G_REMOVE)
    key(e)


def g_insert_run(e, start, length, step, value, vary=0):
    g_op(e, G_INSERT_RUN)
    start(e)
    e.u16(length).u8(step).u8(value).u8(vary)


def g_remove_run(e, start, length, step):
    g_op(e, G_REMOVE_RUN)
    start(e)
    e.u16(length).u8(step)


def g_span(e, key, level, value, with_old=False):
    g_op(e, G_INSERT_SPAN)
    key(e)
    e.u8(level).u8(value).bool(with_old)


def g_set_span(e, key, value):
    g_op(e, G_SET_SPAN)
    key(e)
    e.u8(value)


def g_get(e, key):
    g_op(e, G_GET)
    key(e)


def g_spans(e, lo, hi):
    g_op(e, G_SPANS)
    lo(e)
    hi(e)


def g_range(e, lo, hi, pattern):
    g_op(e, G_RANGE)
    lo(e)
    hi(e)
    e.u64(pattern)


def g_iterate(e, pattern):
    g_op(e, G_ITERATE)
    e.u64(pattern)


def g_seek(e, key):
    g_op(e, G_SEEK)
    key(e)


G_CURSOR_MOVES = 7


def g_cursor(e, start, moves):
    """`moves`: NEXT, PREV, PEEK_NEXT, PEEK_PREV, FORK, ("seek", key) or
    ("seek_get", key)."""
    g_op(e, G_CURSOR)
    start(e)
    for m in moves:
        e.bool(True)
        if isinstance(m, tuple):
            e.variant(4 if m[0] == "seek" else 5, G_CURSOR_MOVES)
            m[1](e)
        else:
            e.variant(m, G_CURSOR_MOVES)
    e.bool(False)


def g_get_each(e, keys, run):
    g_op(e, G_GET_EACH)
    for k in keys:
        e.bool(True)
        k(e)
    e.bool(False)
    e.u16(run)


def g_clone_insert(e, key, value):
    g_op(e, G_CLONE_CHANGE)
    e.variant(0, 3)
    key(e)
    e.u8(value)


def g_clone_remove(e, key):
    g_op(e, G_CLONE_CHANGE)
    e.variant(1, 3)
    key(e)


def g_clone_span(e, key, level, value):
    g_op(e, G_CLONE_CHANGE)
    e.variant(2, 3)
    key(e)
    e.u8(level).u8(value)


def g_clear(e):
    g_op(e, G_CLEAR)


def g_verify(e):
    g_op(e, G_VERIFY)


def ranges_input(insert_only, second, finish):
    return Enc().bool(insert_only).variant(second, 3).variant(finish, 3)


def ranges_seeds():
    seeds = {}
    L2_BASE = 0x1_0000  # a span of level 2 (keys 0x10000..=0x1FFFF)
    L3_BASE = 0x0300_0000  # a span of level 3 (2^24 keys)

    # Runs of one value fill chunks, which merge into ranges; inserts of
    # other values split them, of the same value are absorbed; a remove
    # splits, the 256th key back merges again; runs with a varying value
    # do not merge; walks, cursors, batches and clones over them.
    e = ranges_input(False, LEAF_TREE, DRAIN)
    g_insert_run(e, low(0), 600, STEP1, 1)
    g_get(e, chunk(1, 7))
    g_spans(e, r_unb, r_unb)
    g_insert(e, chunk(0, 100), 2)
    g_insert(e, chunk(0, 100), 1)
    g_insert(e, chunk(1, 50), 1)
    g_remove(e, chunk(1, 0))
    g_insert(e, chunk(1, 0), 1)
    g_insert_run(e, chunk(4, 0), 256, STEP1, 3)
    g_insert_run(e, chunk(8, 0), 512, STEP1, 4, vary=7)
    g_remove_run(e, chunk(0, 10), 300, STEP1)
    g_range(e, r_incl(chunk(0, 0)), r_excl(chunk(5, 3)), 0x5555_5555_5555_5555)
    g_range(e, r_excl(chunk(4, 255)), r_incl(chunk(9, 0)), 2**64 - 1)
    g_iterate(e, 0xF0F0_F0F0_F0F0_F0F0)
    g_verify(e)
    g_cursor(e, chunk(4, 250), [NEXT] * 9 + [PREV, PREV, ("seek", chunk(1, 255)),
                                            PEEK_NEXT, PEEK_PREV,
                                            ("seek_get", chunk(4, 3)), FORK, NEXT, PREV])
    g_get_each(e, [chunk(4, 1), low(5), any_u32(2**31)], 1024)
    g_seek(e, chunk(3, 200))
    g_seek(e, chunk(4, 255))
    g_clone_insert(e, chunk(4, 9), 5)
    g_clone_remove(e, chunk(4, 9))
    g_clone_span(e, chunk(6, 0), 1, 3)
    g_set_span(e, chunk(4, 9), 6)
    g_spans(e, r_incl(chunk(4, 100)), r_excl(chunk(9, 17)))
    seeds["fill_merge_split"] = e

    # Spans at every level: a chunk, a level-2 span split down to a key
    # and its chunks replaced, the level-2 span changed through
    # get_span_mut; a level-3 span, a run splitting one of its chunks
    # per key (over 1 MiB of nodes: the pipelined batch), walks and
    # seeks across its edges, and a level the key cannot have.
    e = ranges_input(False, VARLEN_TREE, CLEAR)
    g_span(e, chunk(2, 17), L1, 1)
    g_span(e, low(L2_BASE + 5), L2, 2, with_old=True)
    g_insert(e, low(L2_BASE + 300), 3)
    g_span(e, low(L2_BASE + 256 * 3), L1, 2, with_old=True)
    g_span(e, low(L2_BASE + 256 * 5), L1, 5, with_old=True)
    g_set_span(e, low(L2_BASE + 600), 4)
    g_set_span(e, low(L2_BASE + 300), 4)
    g_get(e, low(L2_BASE + 65535))
    g_spans(e, r_incl(low(L2_BASE + 100)), r_incl(low(L2_BASE + 70000)))
    g_span(e, any_u32(L3_BASE + 12345), L3, 6)
    g_insert(e, any_u32(L3_BASE + 5), 7)
    g_remove(e, any_u32(L3_BASE + 6))
    g_insert_run(e, any_u32(L3_BASE), 600, STEP256, 1)
    g_get_each(e, [any_u32(L3_BASE + 5), any_u32(L3_BASE + 0x100), any_u32(0x0400_0000)], 1024)
    g_range(e, r_incl(any_u32(L3_BASE - 10)), r_excl(any_u32(0x0400_0000)), 2**64 - 1)
    g_range(e, r_incl(any_u32(L3_BASE - 10)), r_excl(any_u32(0x0400_0000)), 0)
    g_iterate(e, 0x3333_3333_3333_3333)
    g_cursor(e, any_u32(L3_BASE - 1), [NEXT, NEXT, PREV, PREV, PREV,
                                       ("seek", any_u32(0x03FF_FFFF)), NEXT, NEXT, PEEK_PREV])
    g_seek(e, any_u32(0x0400_0000))
    g_seek(e, any_u32(L3_BASE + 6))
    g_span(e, any_u32(L3_BASE), L3, 6)
    g_span(e, low(5), L4, 1)
    g_clone_span(e, any_u32(L3_BASE + 77), 2, 1)
    g_spans(e, r_unb, r_unb)
    g_verify(e)
    seeds["spans_levels"] = e

    # Chunk edges: runs straddling them with the step of a key and of a
    # chunk, a root of one value that merges under a new root and splits
    # back, spans shown by insert_span_with_old over keys and ranges at
    # the bottom of the key space, lookups of existing keys and their
    # neighbours; a clear and a refill.
    e = ranges_input(True, INLINE_TREE, DROP)
    g_insert_run(e, low(0), 256, STEP1, 2)
    g_insert(e, low(7), 3)
    g_insert(e, low(7), 2)
    g_get(e, existing_key(0, 0))
    g_insert_run(e, low(200), 400, STEP1, 2)
    g_insert_run(e, low(0), 600, STEP256, 5)
    g_span(e, low(0), L1, 4, with_old=True)
    g_span(e, low(0), L2, 4, with_old=True)
    g_span(e, low(0), L2, 4, with_old=True)
    g_insert(e, existing_key(0, 1), 4)
    g_remove(e, existing_key(3000, 0))
    g_get(e, existing_key(2**31 + 5, -1))
    g_remove_run(e, low(250), 12, STEP1)
    g_spans(e, r_excl(low(250)), r_incl(low(300)))
    g_range(e, r_incl(existing_key(100, -2)), r_unb, 0xAAAA_AAAA_AAAA_AAAA)
    g_iterate(e, 0)
    g_clear(e)
    g_insert_run(e, chunk(1023, 0), 256, STEP1, 1)
    g_insert(e, any_u32(2**32 - 1), 1)
    g_span(e, any_u32(2**32 - 1), L1, 1)
    g_cursor(e, any_u32(2**32 - 300), [NEXT, ("seek", any_u32(2**32 - 1)), NEXT, NEXT, PREV,
                                       PEEK_NEXT, ("seek_get", chunk(1023, 255))])
    g_get_each(e, [chunk(1023, 0), any_u32(2**32 - 1), low(0)], 0)
    g_seek(e, any_u32(2**32 - 2))
    seeds["chunk_edges"] = e
    return seeds


# ----------------------------------------------------------- bitmap.rs
BITMAPOP = 10
(B_ADD_TIDS, B_ADD_TID, B_ADD_PAGE, B_ADD_PAGES, B_ADD_RUN, B_COMBINE,
 B_CLONE, B_ITER_FROM, B_ITERATE, B_CLEAR) = range(BITMAPOP)
B_UNION, B_INTERSECT = 0, 1
EXCLUSIVE, INCLUSIVE, TO_THE_TOP = 0, 1, 2

# A Block is written by a callable: near(n), in_chunk(c, page),
# existing_block(at, delta) or far(b); BitmapOffsets by raw_offs(list),
# valid_offs(list), small_offs(list) or run_offs(first, length, reversed).


def near_block(n):
    return lambda e: e.variant(0, 4).u16(n)


def in_chunk(c, page):
    return lambda e: e.variant(1, 4).u8(c).u8(page)


def existing_block(at, delta):
    return lambda e: e.variant(2, 4).u16(at).i8(delta)


def far(b):
    return lambda e: e.variant(3, 4).u32(b)


def raw_offs(offsets):
    return lambda e: e.variant(0, 4).vec_u16(offsets)


def valid_offs(offsets):
    """Each stored as o - 1 (the harness adds 1 back)."""
    return lambda e: e.variant(1, 4).vec_u16([o - 1 for o in offsets])


def small_offs(offsets):
    def w(e):
        e.variant(2, 4)
        for o in offsets:
            e.bool(True).u8(o - 1)
        e.bool(False)
    return w


def run_offs(first, length, reversed_=False):
    return lambda e: e.variant(3, 4).u16(first - 1).u16(length).bool(reversed_)


def b_op(e, index):
    e.element().variant(index, BITMAPOP)


def b_add_tids(e, second, block, offs, recheck=False):
    b_op(e, B_ADD_TIDS)
    e.bool(second)
    block(e)
    offs(e)
    e.bool(recheck)


def b_add_tid(e, second, block, offset, recheck=False):
    b_op(e, B_ADD_TID)
    e.bool(second)
    block(e)
    e.u16(offset).bool(recheck)


def b_add_page(e, second, block):
    b_op(e, B_ADD_PAGE)
    e.bool(second)
    block(e)


def b_add_pages(e, second, start, length, form):
    b_op(e, B_ADD_PAGES)
    e.bool(second)
    start(e)
    e.u16(length).variant(form, 3)


def b_add_run(e, second, start, count, offs, recheck=False):
    b_op(e, B_ADD_RUN)
    e.bool(second)
    start(e)
    e.u16(count)
    offs(e)
    e.bool(recheck)


def b_combine(e, kind, into_second):
    b_op(e, B_COMBINE)
    e.variant(kind, 2).bool(into_second)


def b_clone(e, from_second):
    b_op(e, B_CLONE)
    e.bool(from_second)


def b_iter_from(e, second, block, take):
    b_op(e, B_ITER_FROM)
    e.bool(second)
    block(e)
    e.u8(take)


def b_iterate(e):
    b_op(e, B_ITERATE)


def b_clear(e, second):
    b_op(e, B_CLEAR)
    e.bool(second)


def bitmap_input(budget, second_budget, base):
    """Budgets: None (unlimited) or n (MIN_BUDGET + n % (3 * MIN_BUDGET + 1))."""
    e = Enc()
    for b in (budget, second_budget):
        if b is None:
            e.variant(0, 2)
        else:
            e.variant(1, 2).u16(b)
    return e.u32(base)


def bitmap_seeds():
    seeds = {}

    # Unlimited bitmaps: every offset form (small, large, repeated, in
    # any order, descending runs), refused offsets, empty adds, lossy
    # pages and ranges of them, a run of equal pages split in the middle;
    # unions and intersections both ways, a clone, walks from a block.
    e = bitmap_input(None, None, 1000)
    b_add_tids(e, False, near_block(0), small_offs([3, 1, 2, 3]))
    b_add_tids(e, False, near_block(1), valid_offs([2048, 113, 1, 113]), True)
    b_add_tids(e, False, near_block(2), run_offs(1, 2048, True))
    b_add_tids(e, False, near_block(3), raw_offs([5, 0, 3]))
    b_add_tids(e, False, near_block(3), raw_offs([2049]))
    b_add_tids(e, False, near_block(3), raw_offs([]))
    b_add_tid(e, False, near_block(4), 7)
    b_add_tid(e, False, near_block(4), 0)
    b_add_tid(e, False, near_block(4), 2049, True)
    b_add_page(e, False, near_block(1))
    b_add_tids(e, False, near_block(1), small_offs([9]))
    b_add_pages(e, False, in_chunk(2, 200), 300, EXCLUSIVE)
    b_add_pages(e, False, in_chunk(5, 0), 256, INCLUSIVE)
    b_add_pages(e, False, in_chunk(6, 0), 0, INCLUSIVE)
    b_add_run(e, False, in_chunk(8, 0), 600, small_offs([1, 2]))
    b_add_tids(e, False, in_chunk(9, 44), small_offs([3]))
    b_add_page(e, False, in_chunk(8, 100))
    b_add_tids(e, True, near_block(0), small_offs([2, 3, 4]))
    b_add_tids(e, True, near_block(1), small_offs([9, 10]))
    b_add_page(e, True, near_block(2))
    b_add_tids(e, True, in_chunk(2, 250), valid_offs([1000]), True)
    b_add_run(e, True, in_chunk(8, 128), 300, small_offs([2, 5]))
    b_iter_from(e, False, in_chunk(2, 199), 40)
    b_iterate(e)
    b_clone(e, False)
    b_add_tids(e, True, near_block(0), small_offs([77]))
    b_combine(e, B_UNION, True)
    b_combine(e, B_INTERSECT, False)
    b_add_tids(e, False, existing_block(0, 1), small_offs([5]))
    b_combine(e, B_UNION, False)
    b_iter_from(e, True, existing_block(600, 0), 255)
    b_clear(e, True)
    b_add_tids(e, True, far(2**32 - 1), run_offs(2040, 9))
    b_add_pages(e, True, far(2**32 - 300), 300, TO_THE_TOP)
    b_combine(e, B_INTERSECT, True)
    b_iterate(e)
    seeds["unlimited_forms"] = e

    # A budget of MIN_BUDGET: chunks of 255 pages (no run merges) with
    # large pages until chunks turn lossy; pages added to lossy chunks;
    # unions and intersections with an unlimited second bitmap, into it
    # and out of it.
    e = bitmap_input(0, None, 0)
    for c in range(16):
        b_add_run(e, False, in_chunk(c, 0), 255, valid_offs([2000, 5 + c]))
        b_add_tids(e, False, in_chunk(c, 255), small_offs([c + 1]))
    b_add_tids(e, False, in_chunk(3, 7), small_offs([40]), True)
    b_add_page(e, False, in_chunk(3, 8))
    b_iter_from(e, False, in_chunk(3, 0), 255)
    b_add_tids(e, True, in_chunk(3, 7), small_offs([40, 41]))
    b_add_pages(e, True, in_chunk(4, 10), 50, EXCLUSIVE)
    b_add_run(e, True, in_chunk(10, 0), 256, valid_offs([2000]))
    b_combine(e, B_UNION, False)
    b_iterate(e)
    b_combine(e, B_INTERSECT, False)
    b_combine(e, B_UNION, True)
    b_clone(e, True)
    b_combine(e, B_INTERSECT, True)
    b_iterate(e)
    seeds["budget_lossy_chunks"] = e

    # A budget of MIN_BUDGET over pages spread across the block space:
    # blocks of 2^16 and 2^24 pages turn lossy, looked up rather than
    # walked; a clone of it; a second bitmap with a larger budget.
    e = bitmap_input(0, 2000, 77)
    x = 0
    for i in range(400):
        x = (i * 2654435761) % 2**32
        b_add_tid(e, False, far(x), 3 + i % 200)
    b_iterate(e)
    b_iter_from(e, False, far(2**31), 200)
    b_add_tids(e, True, far(2**31 + 5), small_offs([1, 2]))
    b_add_pages(e, True, far(2**31), 700, INCLUSIVE)
    b_combine(e, B_UNION, True)
    b_combine(e, B_INTERSECT, False)
    b_combine(e, B_INTERSECT, True)
    b_clone(e, False)
    b_iterate(e)
    seeds["budget_spread"] = e
    return seeds


# ---------------------------------------------------------- concurrent.rs
ROWEX_OP = 11
(R_INSERT, R_UPDATE, R_REMOVE, R_GET, R_GET_EACH, R_RANGE, R_SEEK, R_ENDS,
 R_ITERATE, R_RUN, R_PINNED) = range(ROWEX_OP)
RUN_INSERT, RUN_UPDATE, RUN_REMOVE = range(3)
INTERLEAVED, NODES, HALVES = range(3)
R_DRAIN, R_DROP = range(2)
# The target's trees, in order: three on the heap, then two in areas (the
# second limited to 128 KiB).
R_WORDS, R_FULL_WORDS, R_LEAF, R_SHARED_WORDS, R_SHARED_PAIRS = range(5)
# run_step: 224 + 15 -> 2^120 for u128 keys, 2^56 for u64 keys (15 % 8 =
# 7): each key in a subtree of its own below the root.
STEP_TOP = 224 + 15

# A RowexOp is written by a callable taking the encoder; r_step() puts one
# in the input's step list, threads() in a writer's list. Keys are KeyPicks
# (any_key, existing, near) and bounds BoundPicks (pick_included, ...).


def r_insert(pick, value):
    return lambda e: (e.variant(R_INSERT, ROWEX_OP), pick(e), e.u64(value))


def r_update(pick, seed):
    return lambda e: (e.variant(R_UPDATE, ROWEX_OP), pick(e), e.u64(seed))


def r_remove(pick):
    return lambda e: (e.variant(R_REMOVE, ROWEX_OP), pick(e))


def r_get(pick):
    return lambda e: (e.variant(R_GET, ROWEX_OP), pick(e))


def r_get_each(*picks):
    def w(e):
        e.variant(R_GET_EACH, ROWEX_OP)
        for pick in picks:
            e.bool(True)
            pick(e)
        e.bool(False)
    return w


def r_range(low, high, pattern):
    return lambda e: (e.variant(R_RANGE, ROWEX_OP), low(e), high(e), e.u64(pattern))


def r_seek(pick):
    return lambda e: (e.variant(R_SEEK, ROWEX_OP), pick(e))


def r_ends(e):
    e.variant(R_ENDS, ROWEX_OP)


def r_iterate(pattern):
    return lambda e: (e.variant(R_ITERATE, ROWEX_OP), e.u64(pattern))


def r_run(kind, key, args, length, step, value=0):
    def w(e):
        e.variant(R_RUN, ROWEX_OP).variant(kind, 3)
        key(e, *args)
        e.u16(length).u8(step).u64(value)
    return w


def r_pinned(pick, value):
    """`value` None removes the key under the pin."""
    def w(e):
        e.variant(R_PINNED, ROWEX_OP)
        pick(e)
        if value is None:
            e.bool(False)
        else:
            e.bool(True).u64(value)
    return w


def rowex_input(compression, finish, bases):
    e = Enc().variant(compression, 4).variant(finish, 2)
    for b in bases:
        e.u128(b)
    return e


def r_step(e, *ops):
    for o in ops:
        e.element()
        e.variant(0, 2)
        o(e)


def reader(pattern, low, high, every):
    return lambda e: (e.u64(pattern), low(e), high(e), e.u8(every))


def threads(e, tree, split, rd, first, second):
    """A threaded step on tree `tree` (R_WORDS, ...): `rd` a reader() or
    None, `first` and `second` the writers' op lists."""
    e.element()
    e.variant(1, 2).u8(tree).variant(split, 3)
    if rd is None:
        e.bool(False)
    else:
        e.bool(True)
        rd(e)
    for ops in (first, second):
        for o in ops:
            e.bool(True)
            o(e)
        e.bool(False)


def rowex_seeds():
    seeds = {}

    # One node grows through every class (4, 16, 32, 64, 256) and shrinks
    # back, at the last level and one level up; lookups, batches, ranges
    # and seeks on the way.
    e = rowex_input(NONE, R_DRAIN, [0x1000, 1 << 40, 2**64 - 4096])
    r_step(
        e,
        r_run(RUN_INSERT, small, [0], 300, 0, value=7),
        r_iterate(0x5555_5555_5555_5555),
        r_ends,
        r_get_each(existing(0), existing(100), near(200, 1), any_key(small, 5),
                   any_key(near_max, 0), existing(299)),
        r_range(pick_included(existing(10)), pick_excluded(existing(250)),
                0xF0F0_F0F0_F0F0_F0F0),
        r_run(RUN_REMOVE, small, [0], 260, 0),
        r_ends,
        r_get(existing(3)),
        r_run(RUN_INSERT, clustered, [1, 0], 300, STEP_256, value=9),
        r_seek(near(100, 1)),
        r_run(RUN_UPDATE, clustered, [1, 0], 300, STEP_256, value=3),
        r_range(pick_unbounded, pick_included(near(50, -1)), 2**64 - 1),
        r_run(RUN_REMOVE, clustered, [1, 0], 290, STEP_256),
        r_iterate(2**64 - 1),
        r_ends,
    )
    seeds["grow_shrink"] = e

    # Keys at the widths' edges and around powers of two; ranges and seeks
    # across them, updates and writes under a pin.
    e = rowex_input(FULL, R_DROP, [0, 2**63, 2**128 - 2**64])
    for n in (0, 255):
        r_step(e, r_insert(any_key(small, n), n), r_insert(any_key(near_max, n), n + 1000))
    for exp in (8, 16, 63, 64, 127):
        for delta in (-1, 0):
            r_step(e, r_insert(any_key(power_of_two, exp, delta), exp * 3 + delta))
    r_step(
        e,
        r_insert(any_key(repeated, 0xFF), 5),
        r_insert(any_key(repeated, 0x01), 6),
        r_range(pick_included(any_key(power_of_two, 16, -1)),
                pick_excluded(any_key(near_max, 0)), 0xF0F0_F0F0_F0F0_F0F0),
        r_range(pick_unbounded, pick_included(any_key(small, 255)), 0xAAAA),
        r_range(pick_excluded(any_key(near_max, 1)), pick_unbounded, 2**64 - 1),
        r_range(pick_included(existing(5)), pick_excluded(existing(2)), 0),
        r_seek(any_key(near_max, 0)),
        r_seek(any_key(power_of_two, 64, 1)),
        r_seek(near(0, -1)),
        r_update(existing(4), 11),
        r_update(any_key(power_of_two, 32, 0), 12),
        r_pinned(existing(7), 99),
        r_pinned(existing(8), None),
        r_pinned(any_key(clustered, 1, 1), 100),
        r_get(any_key(power_of_two, 127, 0)),
        r_remove(any_key(near_max, 0)),
        r_remove(existing(0)),
        r_ends,
        r_iterate(0x0123_4567_89AB_CDEF),
    )
    seeds["boundaries"] = e

    # Two writers in the same last-level nodes as stable keys (the two low
    # bits), growing and shrinking them, with a reader; then in
    # neighbouring nodes (bits 8 and 9) of the leaf tree, and in separate
    # subtrees (the top bits) of the compressed tree.
    e = rowex_input(LAZY, R_DRAIN, [0xABCD_0000, 0xABCD_0100, 1 << 100])
    r_step(
        e,
        r_run(RUN_INSERT, clustered, [0, 0], 150, 0, value=1),
        r_run(RUN_INSERT, clustered, [1, 0], 60, 0, value=2),
    )
    first = [
        r_run(RUN_INSERT, clustered, [0, 0], 200, 0, value=3),
        r_get_each(existing(0), existing(7), near(9, 1), any_key(clustered, 0, 40)),
        r_range(pick_included(existing(10)), pick_unbounded, 0x0F0F),
        r_run(RUN_REMOVE, clustered, [0, 0], 190, 0),
        r_update(existing(3), 5),
        r_seek(existing(2)),
        r_ends,
    ]
    second = [
        r_run(RUN_INSERT, clustered, [0, 0x40], 250, 1, value=4),
        r_pinned(existing(1), 6),
        r_remove(existing(0)),
        r_run(RUN_UPDATE, clustered, [0, 0], 120, 0, value=7),
        r_iterate(0x3333),
        r_run(RUN_REMOVE, clustered, [0, 0x40], 240, 1),
        r_get(existing(2)),
    ]
    rd = reader(0xAAAA_AAAA, pick_included(existing(3)), pick_unbounded, 3)
    threads(e, R_WORDS, INTERLEAVED, rd, first, second)
    r_step(e, r_iterate(0x5A5A), r_ends)
    rd = reader(0x0F0F, pick_unbounded, pick_excluded(existing(150)), 1)
    threads(e, R_LEAF, NODES, rd, first, second)
    threads(e, R_FULL_WORDS, HALVES, None, first, second)
    r_step(e, r_range(pick_included(existing(20)), pick_included(existing(120)), 0x1111))
    seeds["threads_shared_nodes"] = e

    # Writers in separate subtrees (top bits) while the stable half holds
    # keys near the maximum; then both in one node of the leaf tree.
    e = rowex_input(PATH, R_DROP, [2**64 - 2**20, 0x100, 2**127])
    r_step(
        e,
        r_run(RUN_INSERT, near_max, [0], 100, 0, value=8),
        r_run(RUN_INSERT, small, [0], 100, STEP_256 + 1, value=9),
    )
    first = [
        r_run(RUN_INSERT, small, [0], 300, STEP_256, value=10),
        r_run(RUN_REMOVE, small, [0], 280, STEP_256),
        r_insert(any_key(clustered, 1, 5), 11),
        r_ends,
    ]
    second = [
        r_run(RUN_INSERT, clustered, [1, 0], 300, 0, value=12),
        r_seek(any_key(small, 0)),
        r_run(RUN_REMOVE, clustered, [1, 0], 299, 0),
        r_pinned(any_key(small, 1), None),
    ]
    threads(e, R_FULL_WORDS, HALVES, None, first, second)
    rd = reader(2**64 - 1, pick_unbounded, pick_unbounded, 7)
    threads(e, R_LEAF, HALVES, rd, first, second)
    threads(e, R_LEAF, INTERLEAVED, rd, second, first)
    r_step(e, r_iterate(0x6666), r_ends)
    seeds["threads_subtrees"] = e

    # Sparse keys for the compressed trees: scattered keys and pairs that
    # part at each byte of a shared prefix, then writers removing them
    # while stable neighbours stay.
    base = 0x0102_0304_0506_0708_090A_0B0C_0D0E_0F10
    e = rowex_input(FULL, R_DRAIN, [base, 2**100, 2**60])
    x = 0x9E37_79B9_7F4A_7C15
    for i in range(24):
        x = (x * 0x2545_F491_4F6C_DD1D + i) % 2**128
        r_step(e, r_insert(any_key(raw, x), i))
    for byte in range(16):
        for low in range(2):
            r_step(e, r_insert(any_key(raw, (base ^ (1 << (8 * byte))) + low), byte))
    r_step(e, r_range(pick_included(any_key(clustered, 0, 0)),
                      pick_excluded(any_key(near_max, 0)), 0x0F0F_0F0F_0F0F_0F0F))
    first = [r_remove(existing(i)) for i in range(0, 30, 3)] + [r_seek(existing(4))]
    second = [r_update(existing(i), i) for i in range(0, 30, 5)] + [
        r_remove(any_key(raw, base ^ (1 << (8 * b)))) for b in range(16)]
    threads(e, R_FULL_WORDS, INTERLEAVED, reader(0x5555, pick_unbounded, pick_unbounded, 2),
            first, second)
    threads(e, R_LEAF, INTERLEAVED, reader(0x5555, pick_unbounded, pick_unbounded, 2),
            first, second)
    r_step(e, r_iterate(0x5A5A_5A5A_5A5A_5A5A))
    seeds["sparse"] = e

    # The shared trees: keys each in a subtree of their own fill the
    # limited area (a chain of nodes per key, sixteen levels deep), then
    # updates (a leaf value's new cell) and inserts are refused, removes
    # make room; writers in separate subtrees of the limited tree grow
    # past its limit beside a reader, and in shared last-level nodes of
    # the unlimited one. Once uncompressed and once fully compressed
    # (prefixes and lazy leaves, built and refused in the area).
    for name, compression in (("shared_areas", NONE), ("shared_areas_full", FULL)):
        e = rowex_input(compression, R_DRAIN, [0x5000, 1 << 70, 2**64 - 2**12])
        r_step(
            e,
            r_run(RUN_INSERT, raw, [0x0102_0304_0506_0708], 250, STEP_TOP, value=1),
            r_run(RUN_UPDATE, raw, [0x0102_0304_0506_0708], 250, STEP_TOP, value=2),
            r_insert(any_key(near_max, 0), 3),
            r_pinned(any_key(small, 7), 4),
            r_ends,
            r_run(RUN_REMOVE, raw, [0x0102_0304_0506_0708], 120, STEP_TOP),
            r_run(RUN_INSERT, clustered, [0, 0], 300, 0, value=5),
            r_iterate(0x0F0F_0F0F_0F0F_0F0F),
        )
        first = [
            r_run(RUN_INSERT, raw, [0x1111], 100, STEP_TOP, value=6),
            r_run(RUN_UPDATE, raw, [0x1111], 100, STEP_TOP, value=7),
            r_range(pick_unbounded, pick_included(existing(30)), 0x3C3C),
            r_run(RUN_REMOVE, raw, [0x1111], 90, STEP_TOP),
            r_insert(any_key(clustered, 1, 9), 8),
        ]
        second = [
            r_run(RUN_INSERT, clustered, [2, 0], 300, 0, value=9),
            r_update(existing(5), 10),
            r_get_each(existing(0), existing(50), near(60, 1)),
            r_run(RUN_REMOVE, clustered, [2, 0], 280, 0),
            r_seek(existing(3)),
        ]
        rd = reader(0x9999, pick_unbounded, pick_unbounded, 4)
        threads(e, R_SHARED_PAIRS, HALVES, rd, first, second)
        threads(e, R_SHARED_WORDS, INTERLEAVED, rd, second, first)
        r_step(e, r_iterate(0x5555), r_ends)
        seeds[name] = e

    return seeds


def write(target, name, e):
    d = os.path.join(HERE, "seeds", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(bytes(e.out))


def main():
    trees = tree_seeds()
    for target in ("tree_embedded", "tree_leaf", "tree_inline", "tree_varlen",
                   "tree_u128", "macro_configs"):
        for name, e in trees.items():
            write(target, name, e)
    for name, e in tidstore_seeds().items():
        write("tidstore", name, e)
    # The same on a shared store: in an area without a limit, and in one
    # of 64 KiB above its empty size, where valid calls are refused too.
    for prefix, store in (("shared_", "unlimited"), ("shared_small_", 0)):
        for name, e in tidstore_seeds(store).items():
            write("tidstore", prefix + name, e)
    for name, e in tid_set_seeds().items():
        write("tidstore_set_ops", name, e)
    for name, e in shared_seeds().items():
        write("tree_shared", name, e)
    for name, e in rowex_seeds().items():
        write("tree_rowex", name, e)
    for name, e in ranges_seeds().items():
        write("tree_ranges", name, e)
    for name, e in bitmap_seeds().items():
        write("tidbitmap", name, e)
    # The same sequences on the compressed pairs (lazy leaves and prefixed
    # nodes in a limited area, refused and retried) and on the pair with
    # range values, which has one more of its own.
    for prefix, compression in (
        ("lazy_", LAZY),
        ("path_", PATH),
        ("full_", FULL),
        ("ranges_", RANGES),
    ):
        for name, e in shared_seeds(compression).items():
            write("tree_shared", prefix + name, e)


if __name__ == "__main__":
    main()
