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
    /// that is freed, up to 32 MiB: once the first list that grows with an issue (the zip
    /// directory's entries, the manifest's asset index, the digests) had doubled, freeing its
    /// old buffer, the next buffers came from the heaps instead, and the old buffer each left
    /// there when it grew again stayed resident. A 30,000-article import peaked at 62.5 MiB
    /// with glibc's rule and at 53.7 with a fixed bar, in the same time (2026-11-27, 2 runs
    /// each; 128 KiB, 512 KiB and 1 MiB bars alike). `bench/import_bench.py` measures it: no
    /// unit test can, as whether a block is mapped also depends on what the heaps hold free.
    ///
    /// Fixing that bar also fixes the one for giving back free memory at the top of a heap at
    /// glibc's starting 128 KiB (glibc raises the two together, the second to twice the first):
    /// `serve`'s downloads, which take and free 512 KiB chunks, then gave a chunk's pages back
    /// and faulted them in again at nearly every step. So it is set to twice the first, as
    /// glibc's rule would. Four downloads of the 190 MB zip (wrk, 10 s, 3 alternating runs,
    /// medians): 2.52 GB/s before, 2.36 with the first bar alone, 2.56 with both; an import of
    /// 30,000 articles 54.2 -> 55.4 MiB for it.
    package static func mapLargeBlocks() {
        _ = mallopt(M_MMAP_THRESHOLD, largeBlock)
        _ = mallopt(M_TRIM_THRESHOLD, 2 * largeBlock)
    }

    /// Makes every thread allocate from one malloc heap (glibc's arenas: by default a thread
    /// that finds the others' heaps busy gets one of its own, up to eight per core). For the
    /// commands that make thumbnails: each libvips pipeline takes and frees megabytes of pixel
    /// buffers on its calling thread and on worker threads libvips starts and reuses, and what
    /// one thread's heap freed stayed resident there, unusable by the others. Pack of 300
    /// articles of 1800x1200 photos (`bench/thumbnail_bench.py`, two thumbnails at once):
    /// 114-124 MB with glibc's rule, 83 MB with one heap, in the same time (17.0 s); trimming
    /// the heaps after each thumbnail instead (`giveBack`) reached 86 MB but cost 12 s of
    /// system time at 1,000 articles (every page faulted in again). `galley preview` of the same
    /// 300 articles, two at once: 91 MB after a rebuild against 129 MB. Not for every command: pack
    /// without thumbnails at 30,000 articles, which allocates on both cores, was 0.7-1.1 s
    /// slower with it (2026-11-28). Call it before the work starts threads: the limit holds for
    /// the heaps made after it.
    package static func oneHeap() {
        _ = mallopt(M_ARENA_MAX, 1)
    }

    /// Returns free pages to the system (a walk over the free lists, and a system call for each
    /// free stretch).
    package static func giveBack() {
        _ = malloc_trim(0)
    }
}
