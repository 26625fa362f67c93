//! Address space and segment objects: where an area's bytes come from.
//!
//! Each process that opens an area reserves one contiguous range of address
//! space for all of it ([`Reservation`]): `PROT_NONE`, `MAP_NORESERVE`, so
//! it costs no memory. Every segment has a fixed slot in that range, the
//! same in every process, and is mapped there with `MAP_FIXED` when the
//! process first needs it. That is what makes a stored offset resolve with
//! one add: the offset *is* the position in the range.
//!
//! Segments are POSIX shared-memory objects (`shm_open`, mode 0600), sized
//! with `fallocate` so that running out of shared memory is an error at
//! creation rather than a `SIGBUS` on first touch (PostgreSQL's DSM does the
//! same with `posix_fallocate`). A *heap-backed* reservation is one zeroed
//! allocation of process memory instead: the same offsets and allocator,
//! usable by tests and by Miri, which cannot map shared memory.

use core::ffi::c_void;
use core::ptr::NonNull;
use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::os::fd::OwnedFd;

use rustix::fs::{FallocateFlags, Mode};
use rustix::io::Errno;
use rustix::mm::{MapFlags, ProtFlags};
use rustix::shm;

use super::ShmError;
use super::buddy::PAGE;

/// Where an area's memory comes from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Backing {
    /// POSIX shared-memory objects, which other processes can attach by
    /// name. The default.
    #[default]
    SharedMemory,
    /// One allocation of this process's memory: the same layout, offsets
    /// and allocator, but no other process can attach. For tests, and for
    /// Miri, which cannot map shared memory.
    Heap,
}

/// A process's reserved address range for one area.
pub(crate) struct Reservation {
    base: NonNull<u8>,
    len: usize,
    backing: Backing,
}

// SAFETY: the reservation is a range of address space this value owns;
// every change to what is mapped in it is serialised by the area's locks.
unsafe impl Send for Reservation {}
// SAFETY: as above; `&Reservation` only maps or unmaps segment slots under
// those locks.
unsafe impl Sync for Reservation {}

impl Reservation {
    /// Reserves `len` bytes (a multiple of the page size).
    pub(crate) fn new(len: usize, backing: Backing) -> Result<Self, ShmError> {
        let base = match backing {
            Backing::SharedMemory => {
                // SAFETY: a fresh anonymous mapping at an address the kernel
                // picks; nothing else refers to it.
                let ptr = unsafe {
                    rustix::mm::mmap_anonymous(
                        core::ptr::null_mut(),
                        len,
                        ProtFlags::empty(),
                        MapFlags::PRIVATE | MapFlags::NORESERVE,
                    )
                }
                .map_err(|e| ShmError::io(format!("reserving {len} bytes of address space"), e))?;
                NonNull::new(ptr.cast::<u8>()).expect("mmap returned null")
            }
            Backing::Heap => {
                let layout = Self::heap_layout(len);
                // SAFETY: the layout has a non-zero size.
                NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or_else(|| {
                    ShmError::InvalidOptions(format!(
                        "a heap-backed area of {len} bytes could not be allocated"
                    ))
                })?
            }
        };
        Ok(Self { base, len, backing })
    }

    fn heap_layout(len: usize) -> Layout {
        Layout::from_size_align(len, PAGE).expect("reservation layout")
    }

    /// The first byte of the range: offset 0.
    #[cfg_attr(not(debug_assertions), inline(always))]
    pub(crate) fn base(&self) -> NonNull<u8> {
        self.base
    }

    /// The backing.
    pub(crate) fn backing(&self) -> Backing {
        self.backing
    }

    fn at(&self, offset: usize, size: usize) -> *mut c_void {
        assert!(
            offset.checked_add(size).is_some_and(|end| end <= self.len),
            "segment outside the reservation"
        );
        self.base.as_ptr().wrapping_add(offset).cast()
    }

    /// Creates object `name` of `size` bytes and maps it at `offset`. A
    /// heap-backed range just zeroes that part.
    pub(crate) fn create(&self, name: &str, offset: usize, size: usize) -> Result<(), ShmError> {
        let at = self.at(offset, size);
        if self.backing == Backing::Heap {
            // SAFETY: the range lies inside the allocation (checked by `at`)
            // and holds no live object when a segment is created.
            unsafe { at.cast::<u8>().write_bytes(0, size) };
            return Ok(());
        }
        let fd = shm::open(
            name,
            shm::OFlags::CREATE | shm::OFlags::EXCL | shm::OFlags::RDWR,
            Mode::RUSR | Mode::WUSR,
        )
        .map_err(|e| ShmError::io(format!("creating shared memory {name}"), e))?;
        let sized = match rustix::fs::fallocate(&fd, FallocateFlags::empty(), 0, size as u64) {
            Err(Errno::OPNOTSUPP | Errno::NOSYS) => rustix::fs::ftruncate(&fd, size as u64),
            other => other,
        };
        // SAFETY: the range is part of this reservation (checked by `at`)
        // and no live object is there: replacing it is ours to do.
        let mapped = sized.and_then(|()| unsafe { map_fixed(at, size, &fd) });
        match mapped {
            Ok(()) => Ok(()),
            Err(e) => {
                let _ = shm::unlink(name);
                self.release(offset, size);
                Err(match e {
                    Errno::NOSPC | Errno::NOMEM => ShmError::AreaFull {
                        requested: size,
                        used: 0,
                        limit: usize::MAX,
                    },
                    e => ShmError::io(format!("sizing and mapping {name}"), e),
                })
            }
        }
    }

    /// Maps the existing object `name` of `size` bytes at `offset`.
    pub(crate) fn open(&self, name: &str, offset: usize, size: usize) -> Result<(), ShmError> {
        let at = self.at(offset, size);
        if self.backing == Backing::Heap {
            return Ok(());
        }
        let missing = |e: Errno| ShmError::SegmentMissing {
            name: name.to_string(),
            source: e.into(),
        };
        let fd = shm::open(name, shm::OFlags::RDWR, Mode::empty()).map_err(missing)?;
        let stat = rustix::fs::fstat(&fd).map_err(missing)?;
        if (stat.st_size as u64) < size as u64 {
            return Err(missing(Errno::INVAL));
        }
        // SAFETY: as in `create`: our reservation, with nothing live there.
        unsafe { map_fixed(at, size, &fd) }.map_err(missing)
    }

    /// Unmaps what is at `offset`, keeping the range reserved.
    pub(crate) fn release(&self, offset: usize, size: usize) {
        let at = self.at(offset, size);
        if self.backing == Backing::Heap {
            return;
        }
        // SAFETY: our reservation; the segment there is no longer used.
        let result = unsafe {
            rustix::mm::mmap_anonymous(
                at,
                size,
                ProtFlags::empty(),
                MapFlags::PRIVATE | MapFlags::NORESERVE | MapFlags::FIXED,
            )
        };
        // Failing to re-reserve would leave a hole another mapping could
        // take; the segment would stay mapped instead, which is harmless.
        debug_assert!(result.is_ok(), "re-reserving a released segment failed");
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        match self.backing {
            // SAFETY: the whole range is ours and nothing refers into it any
            // more (the area is being dropped).
            Backing::SharedMemory => unsafe {
                let _ = rustix::mm::munmap(self.base.as_ptr().cast(), self.len);
            },
            // SAFETY: allocated in `new` with this layout.
            Backing::Heap => unsafe { dealloc(self.base.as_ptr(), Self::heap_layout(self.len)) },
        }
    }
}

/// Maps `size` bytes of the object `fd` at `at`, shared and writable,
/// replacing what was there.
///
/// # Safety
///
/// `at..at + size` is part of a reservation of this process and holds no
/// live object.
unsafe fn map_fixed(at: *mut c_void, size: usize, fd: &OwnedFd) -> Result<(), Errno> {
    // SAFETY: the caller's contract.
    unsafe {
        rustix::mm::mmap(
            at,
            size,
            ProtFlags::READ | ProtFlags::WRITE,
            MapFlags::SHARED | MapFlags::FIXED,
            fd,
            0,
        )
    }
    .map(drop)
}

/// Removes the object `name`; whether it existed.
pub(crate) fn unlink(name: &str) -> bool {
    shm::unlink(name).is_ok()
}
