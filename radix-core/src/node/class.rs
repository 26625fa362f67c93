//! Size classes: how many children a node of each allocation size holds.
//!
//! Kinds (how a node finds a child) and classes (how much room it has) are
//! separate. A configuration lists the capacities it wants in ascending
//! order, and each capacity picks its kind: up to 4 is a node4, up to 32 a
//! node16, up to 64 a node48, and 256 is the node256. A full node grows into
//! the next class, which is either a roomier node of the same kind (a plain
//! copy) or a node of the next kind (a conversion).

use super::Kind;

/// The most size classes a configuration may declare.
pub const MAX_CLASSES: usize = 8;

/// The capacities of a tree's node classes, smallest first.
///
/// Build one with [`SizeClasses::new`] in a constant; an invalid list is a
/// compile-time error that says what is wrong:
///
/// ```
/// use radix_core::SizeClasses;
/// const CLASSES: SizeClasses = SizeClasses::new(&[4, 16, 32, 64, 256]);
/// assert_eq!(CLASSES.len(), 5);
/// assert_eq!(CLASSES, SizeClasses::DEFAULT);
/// ```
///
/// ```compile_fail
/// use radix_core::SizeClasses;
/// // 100 is no node kind's capacity.
/// const BAD: SizeClasses = SizeClasses::new(&[4, 16, 100, 256]);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct SizeClasses {
    caps: [u16; MAX_CLASSES],
    len: u8,
}

impl SizeClasses {
    /// PostgreSQL's local-memory classes: 4, 16, 32, 64 and 256.
    pub const DEFAULT: Self = Self::new(&[4, 16, 32, 64, 256]);

    /// Validates `caps` and builds the class table.
    ///
    /// # Panics
    ///
    /// Panics (at compile time, when used in a constant) if the list is
    /// empty or longer than [`MAX_CLASSES`], not strictly ascending, does not
    /// end with 256, or holds a capacity no kind has (0, or 65 to 255).
    pub const fn new(caps: &[u16]) -> Self {
        match Self::check(caps) {
            Ok(classes) => classes,
            Err(message) => panic!("{}", message),
        }
    }

    /// Like [`SizeClasses::new`], but reports a bad list as an error message.
    pub const fn check(caps: &[u16]) -> Result<Self, &'static str> {
        if caps.is_empty() {
            return Err("size_classes must not be empty");
        }
        if caps.len() > MAX_CLASSES {
            return Err("size_classes may list at most 8 classes");
        }
        let mut out = [0u16; MAX_CLASSES];
        let mut i = 0;
        while i < caps.len() {
            let cap = caps[i];
            if cap == 0 {
                return Err("size_classes: a class must hold at least one child");
            }
            if cap > 64 && cap != 256 {
                return Err(
                    "size_classes: capacities must be 1..=4 (node4), 5..=32 (node16), 33..=64 (node48) or 256 (node256)",
                );
            }
            if i > 0 && caps[i - 1] >= cap {
                return Err("size_classes must be strictly ascending");
            }
            out[i] = cap;
            i += 1;
        }
        if caps[caps.len() - 1] != 256 {
            return Err("size_classes must end with 256, the node256 class");
        }
        Ok(Self {
            caps: out,
            len: caps.len() as u8,
        })
    }

    /// Number of classes.
    #[allow(clippy::len_without_is_empty)] // never empty by construction
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn len(&self) -> usize {
        self.len as usize
    }

    /// Capacity of class `class`.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn capacity(&self, class: usize) -> usize {
        // The remainder is the class itself for every class index; taking
        // it lets the compiler drop the bounds check (one `and` instead of
        // a compare and a branch on every insert's "is the node full?").
        self.caps[class % MAX_CLASSES] as usize
    }

    /// The capacities, smallest first.
    pub fn capacities(&self) -> &[u16] {
        &self.caps[..self.len()]
    }

    /// The node kind that class `class` belongs to.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub const fn kind(&self, class: usize) -> Kind {
        Kind::for_capacity(self.caps[class] as usize)
    }

    /// Where a node of class `class` shrinks to when it loses children:
    /// `(target class, largest count at which it moves)`.
    ///
    /// PostgreSQL's thresholds, generalised: the target is the smallest
    /// class of the next smaller kind present, and the node moves when its
    /// count is at most that class's capacity for a node4 target or three
    /// quarters of it otherwise (the slack stops a node at the boundary from
    /// converting back and forth). With the default classes: node256 to
    /// node48 at 48 children, node48 to the 16-node16 at 12, node16 to node4
    /// at 4. Classes of one kind never shrink into each other.
    pub const fn shrink_target(&self, class: usize) -> Option<(usize, usize)> {
        let kind = self.kind(class) as usize;
        if kind == 0 {
            return None;
        }
        // The next smaller kind present: the kind of the class just below the
        // first class of this kind.
        let mut first_of_kind = class;
        while first_of_kind > 0 && self.kind(first_of_kind - 1) as usize == kind {
            first_of_kind -= 1;
        }
        if first_of_kind == 0 {
            return None;
        }
        let lower_kind = self.kind(first_of_kind - 1) as usize;
        let mut target = first_of_kind - 1;
        while target > 0 && self.kind(target - 1) as usize == lower_kind {
            target -= 1;
        }
        let cap = self.capacity(target);
        let threshold = if lower_kind == Kind::N4 as usize {
            cap
        } else {
            cap * 3 / 4
        };
        Some((target, threshold))
    }

    /// A fingerprint of the class list, for checked attachment.
    pub const fn fingerprint(&self) -> u64 {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        let mut i = 0;
        while i < self.len() {
            h = (h ^ self.caps[i] as u64).wrapping_mul(0x0100_0000_01b3);
            i += 1;
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_classes_match_postgres() {
        let c = SizeClasses::DEFAULT;
        let kinds: Vec<Kind> = (0..c.len()).map(|i| c.kind(i)).collect();
        assert_eq!(
            kinds,
            [Kind::N4, Kind::N16, Kind::N16, Kind::N48, Kind::N256]
        );
        assert_eq!(c.shrink_target(0), None);
        assert_eq!(c.shrink_target(1), Some((0, 4)));
        assert_eq!(c.shrink_target(2), Some((0, 4)));
        assert_eq!(c.shrink_target(3), Some((1, 12)));
        assert_eq!(c.shrink_target(4), Some((3, 48)));
    }

    #[test]
    fn bad_lists_say_what_is_wrong() {
        assert!(SizeClasses::check(&[]).is_err());
        assert_eq!(
            SizeClasses::check(&[16, 4, 256]),
            Err("size_classes must be strictly ascending")
        );
        assert!(
            SizeClasses::check(&[4, 16, 64])
                .unwrap_err()
                .contains("end with 256")
        );
        assert!(
            SizeClasses::check(&[4, 100, 256])
                .unwrap_err()
                .contains("capacities")
        );
        assert!(SizeClasses::check(&[0, 256]).is_err());
        assert!(SizeClasses::check(&[1, 2, 3, 4, 5, 6, 7, 8, 256]).is_err());
    }

    #[test]
    fn sparse_configurations_shrink_sensibly() {
        // No node4 and no node48: node256 shrinks straight to the node16.
        let c = SizeClasses::new(&[8, 32, 256]);
        assert_eq!(c.shrink_target(0), None);
        assert_eq!(c.shrink_target(1), None);
        assert_eq!(c.shrink_target(2), Some((0, 6)));
    }
}
