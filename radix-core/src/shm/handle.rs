//! Handles: how an area or a tree travels to another process, as text.
//!
//! An [`AreaHandle`] is the area's name, `radix-<creator pid>-<16 hex
//! digits>`; its segments are POSIX shared-memory objects named after it
//! (`/radix-…` for the control segment, `/radix-…-<slot>-<generation>` for
//! data segments), so the creator's pid in every name lets
//! [`remove_stale`](super::remove_stale) find what a crashed creator left.
//! A [`TreeHandle`] names one tree of an area: `tree-<slot>-<generation>`.
//! Both print with `Display` and parse with `FromStr`, so they can be
//! passed as arguments or environment variables; anything else is an
//! error, never a crash.

use core::fmt;
use core::str::FromStr;

use super::ShmError;

/// The prefix of every object this crate creates.
pub(crate) const PREFIX: &str = "radix-";

/// The name of a shared area, which another process passes to
/// [`Area::attach`](super::Area::attach).
///
/// ```
/// use radix_core::shm::AreaHandle;
/// let handle: AreaHandle = "radix-4242-00c0ffee00c0ffee".parse()?;
/// assert_eq!(handle.to_string(), "radix-4242-00c0ffee00c0ffee");
/// assert_eq!(handle.creator_pid(), 4242);
/// assert!("radix-4242".parse::<AreaHandle>().is_err());
/// # Ok::<(), radix_core::shm::ShmError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AreaHandle {
    pid: u32,
    nonce: u64,
}

impl AreaHandle {
    pub(crate) fn new(pid: u32, nonce: u64) -> Self {
        Self { pid, nonce }
    }

    /// The pid of the process that created the area.
    pub fn creator_pid(&self) -> u32 {
        self.pid
    }

    /// The control segment's shared-memory object name.
    pub(crate) fn object_name(&self) -> String {
        format!("/{self}")
    }

    /// Data segment `slot`'s object name in its `generation`.
    pub(crate) fn segment_name(&self, slot: usize, generation: u32) -> String {
        format!("/{self}-{slot}-{generation}")
    }

    /// Parses an object name (without the leading `/`) made by this crate:
    /// the area's handle, and whether it is a data segment.
    pub(crate) fn parse_object_name(name: &str) -> Option<(Self, bool)> {
        let rest = name.strip_prefix(PREFIX)?;
        let mut parts = rest.split('-');
        let pid = parse_decimal(parts.next()?)?;
        let nonce = parts.next()?;
        if nonce.len() != 16 || !nonce.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        let nonce = u64::from_str_radix(nonce, 16).ok()?;
        let segment = match (parts.next(), parts.next(), parts.next()) {
            (None, _, _) => false,
            (Some(slot), Some(generation), None) => {
                parse_decimal(slot)?;
                parse_decimal(generation)?;
                true
            }
            _ => return None,
        };
        Some((Self::new(pid, nonce), segment))
    }
}

/// A decimal `u32` with no sign, no leading zero and no other character.
fn parse_decimal(text: &str) -> Option<u32> {
    let ok = !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && (text == "0" || !text.starts_with('0'));
    ok.then(|| text.parse().ok()).flatten()
}

impl fmt::Display for AreaHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{PREFIX}{}-{:016x}", self.pid, self.nonce)
    }
}

impl FromStr for AreaHandle {
    type Err = ShmError;

    fn from_str(text: &str) -> Result<Self, ShmError> {
        match Self::parse_object_name(text) {
            Some((handle, false)) => Ok(handle),
            Some((_, true)) => Err(bad(text, "that names a data segment, not an area")),
            None => Err(bad(
                text,
                "expected radix-<pid>-<16 hex digits>, as AreaHandle's Display prints it",
            )),
        }
    }
}

/// One tree of an area: pass it with the area's handle to the tree type's
/// `attach`.
///
/// ```
/// use radix_core::shm::TreeHandle;
/// let handle: TreeHandle = "tree-0-1".parse()?;
/// assert_eq!(handle.to_string(), "tree-0-1");
/// assert!("tree-0".parse::<TreeHandle>().is_err());
/// # Ok::<(), radix_core::shm::ShmError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TreeHandle {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

impl fmt::Display for TreeHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tree-{}-{}", self.slot, self.generation)
    }
}

impl FromStr for TreeHandle {
    type Err = ShmError;

    fn from_str(text: &str) -> Result<Self, ShmError> {
        let parsed = text.strip_prefix("tree-").and_then(|rest| {
            let (slot, generation) = rest.split_once('-')?;
            Some(TreeHandle {
                slot: parse_decimal(slot)?,
                generation: parse_decimal(generation)?,
            })
        });
        parsed.ok_or_else(|| {
            bad(
                text,
                "expected tree-<slot>-<generation>, as TreeHandle's Display prints it",
            )
        })
    }
}

fn bad(text: &str, reason: &'static str) -> ShmError {
    ShmError::BadHandle {
        text: text.chars().take(200).collect(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_round_trip_and_reject_garbage() {
        let area = AreaHandle::new(17, 0xdead_beef_0000_0001);
        assert_eq!(area.to_string(), "radix-17-deadbeef00000001");
        assert_eq!(area.to_string().parse::<AreaHandle>().unwrap(), area);
        assert_eq!(area.object_name(), "/radix-17-deadbeef00000001");
        assert_eq!(
            AreaHandle::parse_object_name("radix-17-deadbeef00000001-3-2"),
            Some((area, true))
        );
        for garbage in [
            "",
            "radix-",
            "radix-17",
            "radix-17-deadbeef",
            "radix-017-deadbeef00000001",
            "radix-+17-deadbeef00000001",
            "radix-17-deadbeef0000000g",
            "radix-17-deadbeef00000001-",
            "radix-17-deadbeef00000001-3-2",
            "radix-17-deadbeef00000001-3-2-1",
            "radix-99999999999-deadbeef00000001",
            "Radix-17-deadbeef00000001",
            "radix-17-deadbeef00000001\n",
            "radix-17-deadbeef00000001/../x",
            "💥",
        ] {
            let err = garbage.parse::<AreaHandle>().unwrap_err();
            assert!(matches!(err, ShmError::BadHandle { .. }), "{garbage:?}");
        }
        let tree = TreeHandle {
            slot: 3,
            generation: 9,
        };
        assert_eq!(tree.to_string().parse::<TreeHandle>().unwrap(), tree);
        for garbage in [
            "tree-",
            "tree-1",
            "tree-1-",
            "tree--1",
            "tree-1-2-3",
            "t-1-2",
        ] {
            assert!(garbage.parse::<TreeHandle>().is_err(), "{garbage:?}");
        }
    }
}
