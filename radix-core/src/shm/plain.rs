//! Values that mean the same in every process.

/// A value type that can live in shared memory: plain bytes, with no
/// pointer, reference, handle or anything else whose meaning depends on the
/// process that made it.
///
/// A `memory: shared` tree requires it of its value type (except for the
/// `varlen` layout, whose [`VarlenValue`](crate::value::VarlenValue) values
/// are plain bytes by contract). It is implemented for the integers, floats,
/// `bool`, `char`, `()`, and arrays and tuples of such types.
///
/// ```compile_fail
/// // A String points into one process's heap: rejected at compile time.
/// radix_core::radix_tree! {
///     struct Names { key: u32, value: String, memory: shared }
/// }
/// ```
///
/// # Safety
///
/// Every bit pattern a value of the type can have must mean the same value
/// when read by another process running the same program: the type must
/// not contain pointers, references, `Box`, `Vec`, file descriptors or the
/// like, nor anything with a `Drop` that frees a resource.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot live in shared memory: it is not `ShmSafe`",
    label = "a shared tree's value must be plain bytes",
    note = "a `memory: shared` tree stores values that other processes read; pointers and \
            heap memory (String, Vec, Box, references) mean nothing there",
    note = "use plain integers, arrays or tuples of them, a type you mark `unsafe impl \
            radix_core::shm::ShmSafe`, or the `varlen` layout"
)]
pub unsafe trait ShmSafe: Copy + 'static {}

macro_rules! shm_safe {
    ($($t:ty),*) => {$(
        // SAFETY: a plain number or character: bytes, no pointers.
        unsafe impl ShmSafe for $t {}
    )*};
}

shm_safe!(
    u8,
    u16,
    u32,
    u64,
    u128,
    usize,
    i8,
    i16,
    i32,
    i64,
    i128,
    isize,
    f32,
    f64,
    bool,
    char,
    ()
);

// SAFETY: an array of plain values is plain.
unsafe impl<T: ShmSafe, const N: usize> ShmSafe for [T; N] {}

macro_rules! shm_safe_tuple {
    ($($name:ident),+) => {
        // SAFETY: a tuple of plain values is plain.
        unsafe impl<$($name: ShmSafe),+> ShmSafe for ($($name,)+) {}
    };
}

shm_safe_tuple!(A);
shm_safe_tuple!(A, B);
shm_safe_tuple!(A, B, C);
shm_safe_tuple!(A, B, C, D);
shm_safe_tuple!(A, B, C, D, E);
shm_safe_tuple!(A, B, C, D, E, F);
