#ifndef GALLEY_CZLIB_SHIM_H
#define GALLEY_CZLIB_SHIM_H
#include <zlib.h>
// inflateInit2 is a macro that Swift cannot import.
static inline int galley_inflate_init_raw(z_stream *stream) {
    return inflateInit2(stream, -MAX_WBITS);
}
#endif
