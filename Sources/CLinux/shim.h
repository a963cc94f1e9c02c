#ifndef GALLEY_CLINUX_SHIM_H
#define GALLEY_CLINUX_SHIM_H
#include <sys/types.h>
#include <malloc.h>  /* malloc_trim(3), which Swift's Glibc module leaves out */
#include <fcntl.h>

/// open(2)'s O_DIRECT flag, which Swift's Glibc module leaves out (glibc names it only under
/// _GNU_SOURCE; its value, `__O_DIRECT`, differs by architecture and is always defined), or 0
/// where glibc has none.
static inline int galley_o_direct(void) {
#ifdef __O_DIRECT
    return __O_DIRECT;
#else
    return 0;
#endif
}

/// glibc's copy_file_range(2), which Swift's Glibc module leaves out (it is declared only
/// under _GNU_SOURCE). Declared under another name, bound to the same symbol, so it can never
/// clash with the header's own declaration. glibc 2.27 and later; Linux 4.5 and later.
ssize_t galley_copy_file_range(int fd_in, long long *off_in, int fd_out, long long *off_out,
                               size_t len, unsigned int flags) __asm__("copy_file_range");

#endif
