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
    /// The size from which `mapLargeBlocks` gives a block a mapping of its own: above the
    /// 256 KiB chunks the streaming readers take and free by the thousand (each a system call
    /// and its page faults otherwise), below the lists that grow with an issue.
    static let largeBlock: Int32 = 1 << 20

    /// Makes an allocation of `largeBlock` or more that no free stretch of the heaps can hold a
    /// mapping of its own, given back to the system when it is freed, for the whole process
    /// (the CLI's `main` calls it first).
    ///
    /// glibc starts out so from 128 KiB, but raises the bar to the size of every such block
    /// freed, up to 32 MiB: once the lists that grow with an issue had doubled, their old
    /// buffers came from and stayed in the heaps (a 30,000-article import peaked 9 MiB higher,
    /// `bench/import_bench.py`). Fixing that bar also fixes the one for trimming the top of a
    /// heap at 128 KiB, where `serve`'s 512 KiB download chunks were given back and faulted in
    /// again at every step; so that one is set to twice the first, as glibc's own rule would.
    package static func mapLargeBlocks() {
        _ = mallopt(M_MMAP_THRESHOLD, largeBlock)
        _ = mallopt(M_TRIM_THRESHOLD, 2 * largeBlock)
    }

    /// Makes every thread allocate from one malloc heap (glibc's arenas: by default a thread
    /// that finds the others' heaps busy gets one of its own, up to eight per core). For the
    /// commands that make thumbnails: each libvips pipeline takes and frees megabytes of pixel
    /// buffers on its own and libvips's worker threads, and what one thread's heap freed stayed
    /// resident there, unusable by the others (`bench/thumbnail_bench.py`: about a third less
    /// peak memory with one heap, no slower). Not for every command: pack without thumbnails,
    /// which allocates on both cores, is slower with it. Call it before the work starts threads: the limit holds for
    /// the heaps made after it.
    package static func oneHeap() {
        _ = mallopt(M_ARENA_MAX, 1)
    }

    /// At most two heaps, for the servers (`serve`, `preview`): thousands of connections whose
    /// buffers come and go on both event loops left free memory stranded across the heaps
    /// glibc made for them (`bench/slow_readers.py`, 2,000 slow readers: 118 MB at glibc's
    /// default, 97 MB with two heaps). Two, not one: the event loops allocate at once.
    package static func twoHeaps() {
        _ = mallopt(M_ARENA_MAX, 2)
    }

    /// Returns free pages to the system (a walk over the free lists, and a system call for each
    /// free stretch).
    package static func giveBack() {
        _ = malloc_trim(0)
    }
}
