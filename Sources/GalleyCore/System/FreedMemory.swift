internal import CLinux

/// Hands the memory a finished phase freed back to the system.
///
/// glibc's `free` keeps what it takes back in the heap of the thread that allocated it, and
/// returns to the system only what lies at the top of a heap (and the large blocks it mapped
/// on their own): memory a phase's helper threads used (an import's pass: the manifest checks,
/// the hashing) stays resident in their heaps though nothing uses it, and a later phase on
/// another thread (the import's database writes) does not reuse it. `malloc_trim` gives back
/// every free page of every heap.
package enum FreedMemory {
    /// Returns free pages to the system (a walk over the free lists, and a system call for each
    /// free stretch).
    package static func giveBack() {
        _ = malloc_trim(0)
    }
}
