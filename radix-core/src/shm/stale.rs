//! Cleaning up after creators that crashed.

use std::io;

use super::handle::AreaHandle;
use super::lock::process_alive;
use super::segment::unlink;

/// Where Linux keeps POSIX shared-memory objects.
const SHM_DIR: &str = "/dev/shm";

/// Removes the shared-memory objects of areas whose creator is no longer
/// running, and returns their names.
///
/// An area's objects are unlinked when its creator drops it; a creator
/// that crashed (or was killed) leaves them in `/dev/shm`, where they hold
/// memory until reboot. Every object this crate makes is named
/// `radix-<creator pid>-…`, so a leftover is recognised by its name and a
/// pid that no longer runs. Objects of running creators, and objects not
/// named by this crate, are never touched. `vacuum-sim --remove-stale-shm`
/// calls this.
///
/// (A pid reused by an unrelated process keeps its area's objects until
/// that process exits too.)
///
/// # Errors
///
/// `/dev/shm` could not be read.
pub fn remove_stale() -> io::Result<Vec<String>> {
    let mut removed = Vec::new();
    for entry in std::fs::read_dir(SHM_DIR)? {
        let Ok(name) = entry?.file_name().into_string() else {
            continue;
        };
        let Some((handle, _)) = AreaHandle::parse_object_name(&name) else {
            continue;
        };
        if !process_alive(handle.creator_pid()) && unlink(&format!("/{name}")) {
            removed.push(name);
        }
    }
    removed.sort();
    Ok(removed)
}
