#ifndef GALLEY_CDEFLATE_SHIM_H
#define GALLEY_CDEFLATE_SHIM_H
// libdeflate, for its CRC-32 only: it folds with PCLMULQDQ where the CPU has it (about 14 GB/s
// on the development machine against zlib 1.2.13's 3.7 GB/s), and every byte an import or a
// validate reads is checked with it. Its whole-buffer inflater and deflater are not used: Galley
// streams every entry through zlib.
#include <libdeflate.h>
#endif
