// credfile's own C code: what must be written in C, declared here, defined in the .c
// files beside this folder (where _GNU_SOURCE and OPENSSL_SUPPRESS_DEPRECATED stay
// local). Every function takes `const void *` + `size_t`, so Swift never binds memory
// to C types, and does its casts and `int` narrowing after one argument check. Only the
// library's files in Sources/CredFile/Internals/ import this module (Scripts/layers.sh
// checks that), and the CLI's main.swift and Terminal.swift.
#ifndef CCREDFILE_H
#define CCREDFILE_H

#include <stddef.h>
#include "CCredFileProcess.h"

// ---- glibc (system.c) ----

/// The first occurrence of `needle` in `haystack`, or NULL (glibc's `memmem`).
const void *credfile_memmem(const void *haystack, size_t haystackCount,
                            const void *needle, size_t needleCount);

/// `mkostemp(template, O_CLOEXEC)`: creates a unique file (mode 0600) from a template
/// ending in XXXXXX, rewritten in place; returns the descriptor or -1 with errno set.
int credfile_mkostemp_cloexec(char *template_);

/// Faults in the whole pages of `start..<start+length` (fresh memory about to be
/// written) in one call, `madvise(MADV_POPULATE_WRITE)`: on this kind of VM a page
/// faulted one at a time costs several times more (a 100 MB read into fresh memory:
/// ~110 ms, populated first: ~55 ms, one thread). Used for the arrays a pass fills, not
/// for a file's read: the call holds the address-space lock, and a thread being started
/// for the read's other piece (it maps its stack) waited for it. Advice only: errors
/// are ignored.
void credfile_prefault(void *start, size_t length);

/// `copy_file_range(from, offset, to, NULL, count, 0)`: copies up to `count` bytes of
/// `from` at `*offset` (advanced by what was copied) to `to` at its file offset, inside
/// the kernel. Returns the count copied, or -1 with errno set.
long credfile_copy_file_range(int from, long long *offset, int to, size_t count);

/// Guards reading the mapping `start..<start+length` (a file mapped read-only) against
/// the file shrinking meanwhile: until `credfile_mapped_read_end`, a SIGBUS on a page
/// of it replaces that page with zeros and is remembered; any other SIGBUS goes to the
/// handler installed before. Up to 32 mappings are guarded at once, from any threads;
/// past that this returns -1 with errno EBUSY (the caller reads the file instead).
/// Returns the guard's slot (0 or more) for the two calls below, or -1 with errno.
int credfile_mapped_read_begin(const void *start, size_t length);

/// Whether a page of the mapping guarded in `slot` had to be replaced so far (1 or 0).
int credfile_mapped_read_faulted(int slot);

/// Ends the guard of `slot`; returns 1 when a page of the mapping had to be replaced
/// (the file shrank: what was read from it is not the file), else 0.
int credfile_mapped_read_end(int slot);

/// `flock(fd, operation)` (LOCK_EX or LOCK_SH, without LOCK_NB) that waits in the
/// kernel's queue for at most `timeout_ns` nanoseconds: a timer of the calling thread
/// interrupts the blocking call at the deadline. Returns 0 when the lock is held; -1 with
/// errno EWOULDBLOCK when the time ran out, ENOSYS when no signal could be set aside for
/// the timer (the caller polls instead), or flock's or timer_create's errno.
int credfile_flock_timed(int fd, int operation, long long timeout_ns);

// ---- byte scans (scan.c) ----

/// How many bytes at the start of `text` are in passlib's adapted base64 alphabet
/// (`./0-9A-Za-z`): sixteen at a time with SSE2 on x86-64, one at a time elsewhere.
size_t credfile_adapted_base64_run(const void *text, size_t count);

// ---- OpenSSL libcrypto (openssl.c) ----

/// The hashes credfile's C code computes: PBKDF2 PRFs and plain digests.
enum credfile_digest {
    CREDFILE_DIGEST_SHA1 = 1,
    CREDFILE_DIGEST_SHA256 = 2,
    CREDFILE_DIGEST_SHA512 = 3,
    /// MD5, for peer schemes only (`$apr1$`, Django `md5$`); never a PBKDF2 PRF.
    CREDFILE_DIGEST_MD5 = 4,
};

/// PBKDF2-HMAC with `digest` through OpenSSL's `PKCS5_PBKDF2_HMAC`.
/// Returns 1 on success, 0 on failure (an argument outside `credfile_pbkdf2_arguments_ok`,
/// an unknown digest, or OpenSSL failing).
int credfile_pbkdf2_hmac(int digest, const void *password, size_t passwordCount,
                         const void *salt, size_t saltCount, unsigned rounds,
                         void *out, size_t outCount);

/// 1 when both PBKDF2 paths accept the arguments: password, salt and output lengths
/// that fit an int, 1 ... INT_MAX rounds, 1 ... 2^32 - 1 output blocks of the digest,
/// a known digest, and no NULL pointer with a nonzero length. The one argument check.
int credfile_pbkdf2_arguments_ok(int digest, const void *password, size_t passwordCount,
                                 const void *salt, size_t saltCount, unsigned rounds,
                                 const void *out, size_t outCount);

/// The digest of `count` bytes into `out`, which holds `outCount` bytes (at least the
/// digest's 16, 20, 32 or 64). Returns the digest's length, or 0 on failure.
int credfile_digest(int digest, const void *data, size_t count, void *out, size_t outCount);

/// HMAC-SHA-256 of `count` bytes under a `keyCount`-byte key into `out`, which holds
/// `outCount` bytes (at least 32). Returns 32, or 0 on failure.
int credfile_hmac_sha256(const void *key, size_t keyCount, const void *data, size_t count,
                         void *out, size_t outCount);

/// Fills `out` with `count` cryptographically secure random bytes. Returns 1 on success.
int credfile_random_bytes(void *out, size_t count);

/// Constant-time comparison: 0 when the `count` bytes at `a` and `b` are equal.
int credfile_memcmp(const void *a, const void *b, size_t count);

/// Overwrites `count` bytes at `p` with zeros in a way the compiler cannot elide.
void credfile_cleanse(void *p, size_t count);

/// OpenSSL's version string, e.g. "OpenSSL 3.0.19 27 Jan 2026".
const char *credfile_openssl_version(void);

// ---- Fast PBKDF2 (pbkdf2.c) ----

/// 1 when the fast PBKDF2 loop was built in, 0 when `credfile_fast_pbkdf2` falls back to
/// PKCS5_PBKDF2_HMAC. Decided at build time from the OpenSSL headers.
int credfile_fast_pbkdf2_available(void);

/// The loops that run PBKDF2's rounds in `credfile_fast_pbkdf2` (both give the bytes of
/// PKCS5_PBKDF2_HMAC). Callers other than tests and benchmarks pass BEST.
enum credfile_pbkdf2_loop {
    /// The fastest this build and CPU have: SHA_NI for SHA-256 where it runs, else
    /// TRANSFORM, else (no low-level SHA API in the headers) PKCS5_PBKDF2_HMAC.
    CREDFILE_PBKDF2_LOOP_BEST = 0,
    /// Two calls of OpenSSL's `SHA*_Transform` per round: every hash, every CPU.
    CREDFILE_PBKDF2_LOOP_TRANSFORM = 1,
    /// SHA-256 only, on an x86-64 CPU with the SHA extensions: credfile's own compression
    /// with the state kept in registers across rounds; two chains at a time.
    CREDFILE_PBKDF2_LOOP_SHA_NI = 2,
};

/// 1 when `loop` (an `enum credfile_pbkdf2_loop`) can derive with `digest` in this build
/// on this CPU (BEST always can), else 0.
int credfile_pbkdf2_loop_available(int digest, int loop);

/// PBKDF2-HMAC with `digest` (SHA-1, SHA-256, SHA-512) of `password` and `salt` with
/// `rounds` rounds into `outCount` bytes at `out`, bit-identical to PKCS5_PBKDF2_HMAC:
/// precomputed HMAC states and two compressions per round, on `loop`. Returns 1 on
/// success, 0 on failure (arguments outside `credfile_pbkdf2_arguments_ok`, a loop that
/// cannot run here, or OpenSSL failing). Intermediate state is cleansed before
/// returning, and `out` on failure.
int credfile_fast_pbkdf2(int digest, int loop, const void *password, size_t passwordCount,
                         const void *salt, size_t saltCount, unsigned rounds,
                         void *out, size_t outCount);

/// Two derivations with the same `digest`, `rounds` and `outCount`, as two calls of
/// `credfile_fast_pbkdf2` would give them, at once: on the SHA_NI loop their rounds run
/// interleaved (for batches: `upgrade`, `import`). `out1` and `out2` must not overlap.
/// Returns 1 when both succeeded; on failure both outputs are cleansed.
int credfile_fast_pbkdf2_pair(int digest, int loop, unsigned rounds, size_t outCount,
                              const void *password1, size_t password1Count, const void *salt1,
                              size_t salt1Count, void *out1, const void *password2,
                              size_t password2Count, const void *salt2, size_t salt2Count,
                              void *out2);
// ---- SQLite (sqlite.c) ----

struct sqlite3;

/// `sqlite3_db_config(db, option, on, state)` for an option that takes an int and an
/// int pointer (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`, …): `on` 1 or 0 sets it, -1 leaves
/// it; `*state` gets its state after the call. Returns SQLite's result code.
int credfile_sqlite_db_config_flag(struct sqlite3 *db, int option, int on, int *state);

// ---- Peer hash families (digests.c) ----
// OpenSSL's scrypt for Django and Werkzeug (digests go through credfile_digest above).

#include <stdint.h>

/// scrypt (RFC 7914) through OpenSSL's `EVP_KDF` "SCRYPT", refusing to use more than
/// `maxMemory` bytes. Returns 1 on success, 0 on failure.
int credfile_scrypt(const void *password, size_t passwordCount, const void *salt, size_t saltCount,
                    uint64_t n, uint32_t r, uint32_t p, uint64_t maxMemory,
                    void *out, size_t outCount);

// ---- LDAP string preparation (ldapprep.c) ----

/// RFC 4518's preparation of `count` bytes of UTF-8 for caseIgnoreMatch (map, case fold,
/// NFKC, prohibit; not the insignificant-space step), through ICU's usprep, into `out`
/// (`capacity` bytes; 12 per input byte always suffice), its length in `written`.
/// Returns 1 on success, 0 when the input is not UTF-8 or holds a character RFC 4518
/// prohibits, -1 when the input is over 65,536 bytes, `out` too small, or ICU fails, -2
/// when ICU's libicuuc cannot be loaded (it is opened at the first call, not linked:
/// `credfile_ldap_prepare_unavailable` says why).
int credfile_ldap_prepare(const void *utf8, size_t count, void *out, size_t capacity, size_t *written);

/// NULL when ICU's libicuuc (the soname of the version built against) is loaded or loads
/// now; otherwise why not, `cannot load SONAME (Debian package PACKAGE): REASON`.
const char *credfile_ldap_prepare_unavailable(void);

// ---- libpq (postgresql.c) ----

#include <postgresql/libpq-fe.h>

/// The functions of libpq that Sources/CredFile/Internals/PostgreSQL.swift calls, each of
/// libpq's own name and type, looked up once.
struct credfile_libpq {
    __typeof__(PQconnectdbParams) *PQconnectdbParams;
    __typeof__(PQstatus) *PQstatus;
    __typeof__(PQerrorMessage) *PQerrorMessage;
    __typeof__(PQfinish) *PQfinish;
    __typeof__(PQexec) *PQexec;
    __typeof__(PQexecParams) *PQexecParams;
    __typeof__(PQresultStatus) *PQresultStatus;
    __typeof__(PQresultErrorField) *PQresultErrorField;
    __typeof__(PQresultErrorMessage) *PQresultErrorMessage;
    __typeof__(PQclear) *PQclear;
    __typeof__(PQntuples) *PQntuples;
    __typeof__(PQnfields) *PQnfields;
    __typeof__(PQgetvalue) *PQgetvalue;
    __typeof__(PQgetlength) *PQgetlength;
    __typeof__(PQgetisnull) *PQgetisnull;
    __typeof__(PQftype) *PQftype;
    __typeof__(PQcmdTuples) *PQcmdTuples;
    __typeof__(PQconninfoParse) *PQconninfoParse;
    __typeof__(PQconninfoFree) *PQconninfoFree;
    __typeof__(PQfreemem) *PQfreemem;
    __typeof__(PQsetNoticeProcessor) *PQsetNoticeProcessor;
    __typeof__(PQtransactionStatus) *PQtransactionStatus;
    __typeof__(PQconsumeInput) *PQconsumeInput;
    __typeof__(PQnotifies) *PQnotifies;
    // Pipeline mode (libpq 14 and later): several statements in one round trip.
    __typeof__(PQenterPipelineMode) *PQenterPipelineMode;
    __typeof__(PQexitPipelineMode) *PQexitPipelineMode;
    __typeof__(PQpipelineStatus) *PQpipelineStatus;
    __typeof__(PQpipelineSync) *PQpipelineSync;
    __typeof__(PQsendPrepare) *PQsendPrepare;
    __typeof__(PQsendQueryPrepared) *PQsendQueryPrepared;
    __typeof__(PQgetResult) *PQgetResult;
    /// Sends the connection's notices nowhere (libpq's default writes them to stderr).
    void (*quiet)(PGconn *connection);
};

/// libpq's functions, opening libpq.so.5 at the first call; NULL when it cannot be
/// loaded (or older than 14: no pipeline mode), with `*error` set to
/// `cannot load libpq.so.5 (Debian package libpq5, 14 or later): REASON`.
const struct credfile_libpq *credfile_libpq(const char **error);

#endif
