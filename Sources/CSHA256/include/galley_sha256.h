#ifndef GALLEY_SHA256_H
#define GALLEY_SHA256_H
#include <stddef.h>
#include <stdint.h>

/* SHA-256 with the x86 SHA extensions, one stream or two at once (see sha256.c for why this is
   written here). Only GalleyCore/Crypto/SHA256.swift calls it, and only once
   galley_sha256_available() said yes. */

typedef struct {
    uint32_t state[8];
    uint64_t length;      /* bytes taken so far */
    uint8_t buffer[64];   /* the block not yet complete */
    uint32_t buffered;
} galley_sha256;

/* 1 when this CPU has the SHA extensions (and SSE4.1) this code needs, else 0. */
int galley_sha256_available(void);

void galley_sha256_init(galley_sha256 *hash);
void galley_sha256_update(galley_sha256 *hash, const void *data, size_t count);
/* `a` takes `count_a` bytes and `b` takes `count_b`, the blocks both have hashed together. */
void galley_sha256_update2(galley_sha256 *a, const void *data_a, size_t count_a,
                           galley_sha256 *b, const void *data_b, size_t count_b);
void galley_sha256_final(galley_sha256 *hash, uint8_t digest[32]);

#endif
