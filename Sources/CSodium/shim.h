#ifndef LAUNCHSERVICES_CSODIUM_H
#define LAUNCHSERVICES_CSODIUM_H
/* libsodium, as the daemon uses it: Argon2id password verifiers (crypto_pwhash_str_alg,
 * crypto_pwhash_str_verify), for pasteboard passwords. */
#include <sodium.h>

/* Macros Swift cannot import as constants. */
static const int ls_pwhash_alg_argon2id13 = crypto_pwhash_ALG_ARGON2ID13;
static const int ls_pwhash_strbytes = crypto_pwhash_STRBYTES;
#endif
