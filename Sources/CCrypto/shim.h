#ifndef GALLEY_CCRYPTO_SHIM_H
#define GALLEY_CCRYPTO_SHIM_H
#include <openssl/evp.h>
#endif
