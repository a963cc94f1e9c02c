#ifndef GALLEY_CARCHIVE_SHIM_H
#define GALLEY_CARCHIVE_SHIM_H
#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <stdlib.h>
#include <time.h>
// AE_IFREG and friends are cast macros that Swift cannot import.
static const unsigned int galley_AE_IFREG = AE_IFREG;
static const unsigned int galley_AE_IFDIR = AE_IFDIR;
static const unsigned int galley_AE_IFLNK = AE_IFLNK;
#endif
