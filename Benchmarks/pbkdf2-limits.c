// PBKDF2 rounds against the compression-function limit, side by side in one run, on
// whatever CPU this runs (issue #29). Built and run by pbkdf2-limits.sh, against the
// objects of Sources/CCredFile as SwiftPM compiled them; prints ratios, asserts nothing.
//
// The limit is OpenSSL's own bulk rate (EVP_DigestUpdate over 16 KiB buffers, what
// `openssl speed -evp sha256 -bytes 16384` measures) in blocks per second ÷ 2: one
// PBKDF2 round is two compressions. Every case runs in short slices, all cases round
// robin, `REPEATS` times; a ratio is taken within each repetition (so both sides saw the
// same neighbours on this shared machine) and the median and the range over the
// repetitions are printed.
//
//     pbkdf2-limits            this CPU as OpenSSL and credfile see it
//     pbkdf2-limits --no-sha   OpenSSL_ia32cap masks the SHA extensions: re-runs itself
//                              so that OpenSSL's bulk code and SHA256_Transform take their
//                              AVX2/SSSE3 paths, and measures credfile's TRANSFORM loop
//                              there (the SHA_NI loop is not used)
#define _GNU_SOURCE
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "CCredFile.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/// OpenSSL 3.0's mask for the SHA extensions: bit 64+29 of its capability vector
/// (CPUID leaf 7 EBX bit 29), set after the ':' (doc/man3/OPENSSL_ia32cap.pod).
static const char no_sha_mask[] = ":~0x20000000";

/// This thread's CPU time: on a machine shared with other jobs, wall time mostly
/// measures the neighbours (a slice preempted halfway reads half as fast).
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int repeats(void) {
    const char *quick = getenv("BENCH_QUICK");
    return quick && strcmp(quick, "1") == 0 ? 7 : 21;
}

static unsigned char buffer[16384];
static const unsigned char password[] = "contrase\xc3\xb1" "a-de-prueba";
static const unsigned char salt[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

/// One measured case: `run(work)` does `work` units of `rounds_per_unit` PBKDF2 rounds.
typedef struct {
    const char *name;
    void (*run)(long work);
    long work;  // units per slice, sized to about 20 ms once
    double *rates;  // rounds/s in each repetition
} bench_case;

static void bulk(const EVP_MD *md, long work) {
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    unsigned char out[64];
    if (!ctx || !EVP_DigestInit_ex(ctx, md, NULL)) exit(1);
    for (long i = 0; i < work; i++) EVP_DigestUpdate(ctx, buffer, sizeof buffer);
    EVP_DigestFinal_ex(ctx, out, NULL);
    EVP_MD_CTX_free(ctx);
}
// bulk: one unit is 16 KiB = 256 SHA-256 blocks = 128 rounds (128 SHA-512 blocks = 64 rounds)
static void bulk256(long work) { bulk(EVP_sha256(), work); }
static void bulk512(long work) { bulk(EVP_sha512(), work); }

static void derive(int digest, int loop, long rounds) {
    unsigned char out[64];
    size_t n = digest == CREDFILE_DIGEST_SHA512 ? 64 : 32;
    if (!credfile_fast_pbkdf2(digest, loop, password, sizeof password - 1, salt, sizeof salt,
                              (unsigned)rounds, out, n)) {
        exit(1);
    }
}
static void derive_pair(int digest, int loop, long rounds) {
    unsigned char out1[64], out2[64];
    size_t n = digest == CREDFILE_DIGEST_SHA512 ? 64 : 32;
    if (!credfile_fast_pbkdf2_pair(digest, loop, (unsigned)(rounds / 2), n, password,
                                   sizeof password - 1, salt, sizeof salt, out1, password, 5,
                                   salt, 8, out2)) {
        exit(1);
    }
}
static void openssl_pbkdf2(int digest, long rounds) {
    unsigned char out[64];
    size_t n = digest == CREDFILE_DIGEST_SHA512 ? 64 : 32;
    if (!credfile_pbkdf2_hmac(digest, password, sizeof password - 1, salt, sizeof salt,
                              (unsigned)rounds, out, n)) {
        exit(1);
    }
}
static void ni256(long r) { derive(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_SHA_NI, r); }
static void transform256(long r) { derive(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_TRANSFORM, r); }
static void transform512(long r) { derive(CREDFILE_DIGEST_SHA512, CREDFILE_PBKDF2_LOOP_TRANSFORM, r); }
static void pair_ni256(long r) { derive_pair(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_SHA_NI, r); }
static void pair_transform256(long r) { derive_pair(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_TRANSFORM, r); }
static void openssl256(long r) { openssl_pbkdf2(CREDFILE_DIGEST_SHA256, r); }
static void openssl512(long r) { openssl_pbkdf2(CREDFILE_DIGEST_SHA512, r); }

/// Rounds per unit of work of a case.
static double rounds_per_unit(const bench_case *c) {
    if (c->run == bulk256) return 128;
    if (c->run == bulk512) return 64;
    return 1;
}

static double slice(bench_case *c) {
    double start = now();
    c->run(c->work);
    return c->work * rounds_per_unit(c) / (now() - start);
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/// Median, lowest and highest of `n` values (sorted in place).
static void spread(double *v, int n, double *median, double *low, double *high) {
    qsort(v, (size_t)n, sizeof *v, compare);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    *low = v[0];
    *high = v[n - 1];
}

static void print_cpu(int masked) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[8192], model[256] = "unknown", flags[8192] = "";
    while (f && fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10) && !strcmp(model, "unknown")) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = 0;
        }
        if (!strncmp(line, "flags", 5) && !flags[0]) snprintf(flags, sizeof flags, "%s ", strchr(line, ':') + 1);
    }
    if (f) fclose(f);
    printf("cpu: %s, %ld online cores; flags:", model, sysconf(_SC_NPROCESSORS_ONLN));
    const char *wanted[] = {"ssse3", "sse4_1", "avx", "avx2", "bmi2", "avx512f", "avx512vl", "sha_ni"};
    for (size_t i = 0; i < sizeof wanted / sizeof *wanted; i++) {
        char word[32];
        snprintf(word, sizeof word, " %s ", wanted[i]);
        printf(" %s%s", strstr(flags, word) ? "" : "no-", wanted[i]);
    }
    const char *mask = getenv("OPENSSL_ia32cap");
    printf("\n%s; OPENSSL_ia32cap=%s; credfile's SHA_NI loop: %s\n", OpenSSL_version(OPENSSL_VERSION),
           mask ? mask : "(unset)",
           !credfile_pbkdf2_loop_available(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_SHA_NI)
               ? "not on this CPU"
               : masked ? "not measured (the run without SHA extensions)" : "runs here");
}

int main(int argc, char **argv) {
    int masked = argc > 1 && strcmp(argv[1], "--no-sha") == 0;
    if (masked && !getenv("OPENSSL_ia32cap")) {
        // OpenSSL reads the mask once, at start-up: run again with it set.
        setenv("OPENSSL_ia32cap", no_sha_mask, 1);
        execv("/proc/self/exe", argv);
        perror("execv");
        return 1;
    }
    print_cpu(masked);
    int ni = !masked && credfile_pbkdf2_loop_available(CREDFILE_DIGEST_SHA256, CREDFILE_PBKDF2_LOOP_SHA_NI);
    bench_case cases[] = {
        {"limit256", bulk256, 0, NULL},
        {"transform256", transform256, 0, NULL},
        {"pair_transform256", pair_transform256, 0, NULL},
        {"openssl256", openssl256, 0, NULL},
        {"limit512", bulk512, 0, NULL},
        {"transform512", transform512, 0, NULL},
        {"openssl512", openssl512, 0, NULL},
        {"ni256", ni ? ni256 : NULL, 0, NULL},
        {"pair_ni256", ni ? pair_ni256 : NULL, 0, NULL},
    };
    const int count = sizeof cases / sizeof *cases, reps = repeats();
    for (int i = 0; i < count; i++) {
        if (!cases[i].run) continue;
        cases[i].rates = calloc((size_t)reps, sizeof(double));
        // Size the slice to about 20 ms from a first try.
        cases[i].work = cases[i].run == bulk256 || cases[i].run == bulk512 ? 8 : 2000;
        double rate = slice(&cases[i]);
        cases[i].work = (long)(rate * 0.020 / rounds_per_unit(&cases[i])) + 2;
        cases[i].work += cases[i].work % 2;  // pairs split the rounds in two
    }
    for (int r = 0; r < reps; r++) {
        for (int i = 0; i < count; i++) {
            if (cases[i].run) cases[i].rates[r] = slice(&cases[i]);
        }
    }
    // Each row: numerator ÷ denominator, a ratio within each repetition.
    struct { const char *what, *num, *den; } rows[] = {
        {"SHA-256 limit (EVP bulk rate / 64 B / 2)", "limit256", NULL},
        {"SHA-512 limit (EVP bulk rate / 128 B / 2)", "limit512", NULL},
        {"sha256 SHA_NI loop / limit", "ni256", "limit256"},
        {"sha256 TRANSFORM loop / limit", "transform256", "limit256"},
        {"sha256 SHA_NI loop / TRANSFORM loop", "ni256", "transform256"},
        {"sha256 SHA_NI loop / PKCS5_PBKDF2_HMAC", "ni256", "openssl256"},
        {"sha256 TRANSFORM loop / PKCS5_PBKDF2_HMAC", "transform256", "openssl256"},
        {"sha256 PKCS5_PBKDF2_HMAC / limit", "openssl256", "limit256"},
        {"sha256 two chains interleaved (SHA_NI pair) / limit", "pair_ni256", "limit256"},
        {"sha256 two chains (TRANSFORM pair) / limit", "pair_transform256", "limit256"},
        {"sha512 TRANSFORM loop / limit", "transform512", "limit512"},
        {"sha512 TRANSFORM loop / PKCS5_PBKDF2_HMAC", "transform512", "openssl512"},
        {"sha512 PKCS5_PBKDF2_HMAC / limit", "openssl512", "limit512"},
    };
    printf("medians of %d repetitions, range in brackets%s\nns per round (medians):", reps,
           masked ? "; OpenSSL without the SHA extensions" : "");
    for (int i = 0; i < count; i++) {
        if (!cases[i].run) continue;
        double rates[64], median, low, high;
        memcpy(rates, cases[i].rates, (size_t)reps * sizeof *rates);
        spread(rates, reps, &median, &low, &high);
        printf(" %s %.1f", cases[i].name, 1e9 / median);
    }
    printf("\n");
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        bench_case *num = NULL, *den = NULL;
        for (int i = 0; i < count; i++) {
            if (!strcmp(cases[i].name, rows[k].num)) num = &cases[i];
            if (rows[k].den && !strcmp(cases[i].name, rows[k].den)) den = &cases[i];
        }
        if (!num->run || (rows[k].den && !den->run)) continue;
        double ratio[64], median, low, high;
        for (int r = 0; r < reps; r++) ratio[r] = num->rates[r] / (den ? den->rates[r] : 1e6);
        spread(ratio, reps, &median, &low, &high);
        if (den) {
            printf("  %-56s %.3f  [%.3f, %.3f]\n", rows[k].what, median, low, high);
        } else {
            printf("  %-56s %.2f M rounds/s  [%.2f, %.2f]\n", rows[k].what, median, low, high);
        }
    }
    return 0;
}
