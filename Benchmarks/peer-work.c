// Measures the work of one verification of each peer hash scheme (SPEC §3.2) in units of
// one round of credfile's own PBKDF2-HMAC-SHA256 loop: the constants of PeerWork in
// Sources/CredFile/Hashing/Schemes/PeerWork.swift. Built and run by peer-work.sh;
// prints ratios measured side by side in one run, asserts nothing.
#define _GNU_SOURCE
#include "shim.h"       // Sources/COpenSSL: libcrypto (and, before the wave-2 move, the fast loop)
#include "CCredFile.h"  // Sources/CCredFile: credfile_digest, credfile_scrypt (and the fast loop after it)
#include <argon2.h>
#include <crypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static struct crypt_data data;

// Seconds per call of crypt_rn(setting), best of 3 batches of `count`.
static double crypt_time(const char *setting, int count) {
    double best = 1e9;
    for (int batch = 0; batch < 3; batch++) {
        double start = now();
        for (int i = 0; i < count; i++) {
            if (!crypt_rn("contraseña123", setting, &data, sizeof data)) { fprintf(stderr, "crypt_rn failed: %s\n", setting); exit(1); }
        }
        double t = (now() - start) / count;
        if (t < best) best = t;
    }
    return best;
}

static const char *pw = "contraseña123";
static unsigned char out[64], salt[16] = {1, 2, 3};

// Seconds per round of the policy's PBKDF2-HMAC-SHA256 (credfile's fast loop), from 100,000 rounds.
static double round_time(void) {
    double start = now();
    credfile_fast_pbkdf2(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_BEST, pw, strlen(pw), salt, 16, 100000, out, 32);
    return (now() - start) / 100000;
}

typedef double (*scheme_time)(void);

// The median over 7 tries of (scheme time / PBKDF2 round time), each pair measured back to
// back so that the machine's load (other builds on 2 cores) weighs on both alike.
static double ratio(scheme_time f) {
    double r[7];
    for (int i = 0; i < 7; i++) {
        double a = round_time();
        double t = f();
        double b = round_time();
        r[i] = t / ((a + b) / 2);
    }
    for (int i = 0; i < 7; i++)
        for (int j = i + 1; j < 7; j++)
            if (r[j] < r[i]) { double x = r[i]; r[i] = r[j]; r[j] = x; }
    return r[3];
}

static double t_digest(void) {
    double start = now();
    for (int i = 0; i < 20000; i++) credfile_digest(CREDFILE_DIGEST_SHA512, "contraseña123salt1234", 22, out, 64);
    return (now() - start) / 20000;
}
static double t_openssl_round(void) {
    double start = now();
    PKCS5_PBKDF2_HMAC(pw, strlen(pw), salt, 16, 30000, EVP_sha256(), 32, out);
    return (now() - start) / 30000;
}
static double t_fast(int digest) {
    double start = now();
    credfile_fast_pbkdf2(digest, CREDFILE_PBKDF2_LOOP_BEST, pw, strlen(pw), salt, 16, 30000, out, 20);
    return (now() - start) / 30000;
}
static double t_sha1_round(void) { return t_fast(CREDFILE_DIGEST_SHA1); }
static double t_sha512_round(void) { return t_fast(CREDFILE_DIGEST_SHA512); }
static double t_bsdi(void) { return crypt_time("_../.salt", 5) / (64.0 * 64); }  // count 4096 (c2 = 1: 1 << 12)
static double t_bigcrypt(void) { return crypt_time("ablUDMr6t4HK6xxxxxxxxxxx", 500) / 2; }  // two 8-byte blocks
static double t_nt(void) { return crypt_time("$3$", 2000); }
static double t_sunmd5(void) { return crypt_time("$md5,rounds=20000$saltsalt$", 1) / (20000 + 4096); }
static double t_sha1crypt(void) { return crypt_time("$sha1$20000$saltsalt$", 1) / 20000; }
static double t_gost(void) { return crypt_time("$gy$j7T$saltsaltsaltsaltsalt", 2) / (1024.0 * 32); }  // N 1024, r 32
static double t_yes_t3(void) { return crypt_time("$y$j7T/0$saltsaltsaltsaltsalt", 2) / (1024.0 * 32); }  // t 3
static double t_bcrypt(void) { return crypt_time("$2b$06$Mey1/eqXqYWDCiO1EFF0P.", 3) / 64; }
static double t_sha256(void) { return crypt_time("$5$rounds=20000$saltsaltsaltsalt", 1) / 20000; }
static double t_sha512(void) { return crypt_time("$6$rounds=20000$saltsaltsaltsalt", 1) / 20000; }
static double t_md5(void) { return crypt_time("$1$saltsalt", 50); }
static double t_des(void) { return crypt_time("ab", 500); }
static double t_yes(void) { return crypt_time("$y$j7T$saltsaltsaltsaltsalt", 2) / (1024.0 * 32); }  // N 1024, r 32
static double t_scrypt7(void) { return crypt_time("$7$AU..../....saltsaltsaltsalt", 2) / (4096.0 * 32); }  // N 4096, r 32
static double t_scrypt(void) {
    double start = now();
    credfile_scrypt(pw, strlen(pw), salt, 16, 16384, 8, 1, 64 << 20, out, 64);
    return (now() - start) / (16384.0 * 8);
}
static double t_argon2(void) {
    double start = now();
    argon2_hash(1, 16384, 1, pw, strlen(pw), salt, 16, out, 32, NULL, 0, Argon2_id, ARGON2_VERSION_13);
    return (now() - start) / 16384.0;
}

int main(void) {
    printf("Work per unit, in rounds of credfile's PBKDF2-HMAC-SHA256 loop (median of 7 paired runs)\n");
    printf("OpenSSL PKCS5_PBKDF2_HMAC round              %10.2f\n", ratio(t_openssl_round));
    printf("oneDigest (SHA-512 of 22 bytes, EVP_Digest)  %10.2f\n", ratio(t_digest));
    printf("bcryptPerCostUnit (cost 6 / 2^6)             %10.1f\n", ratio(t_bcrypt));
    printf("sha256CryptPerRound (20000 rounds)           %10.2f\n", ratio(t_sha256));
    printf("sha512CryptPerRound (20000 rounds)           %10.2f\n", ratio(t_sha512));
    printf("md5Crypt (one md5crypt)                      %10.0f\n", ratio(t_md5));
    printf("desCrypt (one DES crypt)                     %10.0f\n", ratio(t_des));
    printf("yescryptPerNr (N 1024, r 32)                 %10.3f\n", ratio(t_yes));
    printf("scrypt $7$ per N·r·p (N 4096, r 32, p 1)     %10.3f\n", ratio(t_scrypt7));
    printf("scryptPerNrp EVP_KDF (N 16384, r 8, p 1)     %10.3f\n", ratio(t_scrypt));
    printf("argon2PerKiBPass (argon2id m 16384, t 1)     %10.3f\n", ratio(t_argon2));
    printf("PBKDF2-HMAC-SHA1 round (credfile's loop)     %10.2f\n", ratio(t_sha1_round));
    printf("PBKDF2-HMAC-SHA512 round (credfile's loop)   %10.2f\n", ratio(t_sha512_round));
    printf("bsdiCryptPerIteration (count 4096)           %10.3f\n", ratio(t_bsdi));
    printf("bigcryptPerBlock (two blocks of 8)           %10.1f\n", ratio(t_bigcrypt));
    printf("ntHash (one $3$)                             %10.1f\n", ratio(t_nt));
    printf("sunMD5PerRound (20000 + 4096 rounds)         %10.2f\n", ratio(t_sunmd5));
    printf("sha1CryptPerRound (20000 rounds)             %10.2f\n", ratio(t_sha1crypt));
    printf("gostYescryptPerNr (N 1024, r 32)             %10.3f\n", ratio(t_gost));
    printf("yescrypt t 3 per N·r (N 1024, r 32)          %10.3f\n", ratio(t_yes_t3));
    return 0;
}
