internal import CLinux

/// Hands the memory a finished phase freed back to the system.
///
/// glibc's `free` keeps what it takes back in the heap of the thread that allocated it, and
/// returns pages to the system only from the top of the main heap: memory a phase's helper
/// threads used (an import's pass: the manifest checks, the hashing) stays in their heaps,
/// resident, though nothing uses it, and a later phase on another thread (the import's
/// database writes) cannot reuse it. `malloc_trim` gives back every free page of every heap.
package enum FreedMemory {
    /// Returns free pages to the system; costs a walk over the free lists (about a millisecond
    /// after a 30,000-article pass).
    package static func giveBack() {
        _ = malloc_trim(0)
    }
}
