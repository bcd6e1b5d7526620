// RFC 4518's string preparation of an LDAP value for caseIgnoreMatch (the matching rule
// of `uid`), through ICU's usprep with its RFC 4518 case-ignoring profile: map (soft
// hyphen and other ignorable characters to nothing, the space separators to SPACE, case
// folded), NFKC, prohibit. RFC 4518's last step, insignificant space handling, is the
// caller's (Sources/CredFile/Internals/LDAPStringPrep.swift).
//
// ICU is opened here at the first preparation (dlopen of the soname of the version built
// against), not linked: its 30 MB data library would otherwise be mapped by every start of
// every program built on CredFile, and only `export --to ldif` needs it (issue #34 item 9).
#include "CCredFile.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unicode/usprep.h>
#include <unicode/ustring.h>

#define QUOTED(x) #x
#define NAME(x) QUOTED(x)  // ICU's versioned name: usprep_close is usprep_close_72
#define ICU_SONAME "libicuuc.so." NAME(U_ICU_VERSION_MAJOR_NUM)

/// The five functions of libicuuc this file calls, once looked up (typed by the header).
struct icu {
    __typeof__(usprep_openByType) *openByType;
    __typeof__(usprep_close) *close;
    __typeof__(usprep_prepare) *prepare;
    __typeof__(u_strFromUTF8) *fromUTF8;
    __typeof__(u_strToUTF8) *toUTF8;
};

static struct icu icu;
static int icuState;  // after icuOnce: 1 loaded, -1 missing (icuError says why)
static char icuError[512];
static pthread_once_t icuOnce = PTHREAD_ONCE_INIT;

static void icu_open(void) {
    void *handle = dlopen(ICU_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (handle) {
        icu.openByType = (__typeof__(icu.openByType))dlsym(handle, NAME(usprep_openByType));
        icu.close = (__typeof__(icu.close))dlsym(handle, NAME(usprep_close));
        icu.prepare = (__typeof__(icu.prepare))dlsym(handle, NAME(usprep_prepare));
        icu.fromUTF8 = (__typeof__(icu.fromUTF8))dlsym(handle, NAME(u_strFromUTF8));
        icu.toUTF8 = (__typeof__(icu.toUTF8))dlsym(handle, NAME(u_strToUTF8));
    }
    if (handle && icu.openByType && icu.close && icu.prepare && icu.fromUTF8 && icu.toUTF8) {
        icuState = 1;
    } else {
        const char *reason = dlerror();
        snprintf(icuError, sizeof icuError, "cannot load %s (Debian package libicu%d): %s", ICU_SONAME,
                 U_ICU_VERSION_MAJOR_NUM, reason ? reason : "a function is missing");
        icuState = -1;
    }
}

static int icu_load(void) {
    pthread_once(&icuOnce, icu_open);
    return icuState;
}

const char *credfile_ldap_prepare_unavailable(void) {
    return icu_load() == 1 ? NULL : icuError;
}

int credfile_ldap_prepare(const void *utf8, size_t count, void *out, size_t capacity, size_t *written) {
    *written = 0;
    if (icu_load() != 1) return -2;
    if (count > 65536 || capacity > INT32_MAX) return -1;
    // UTF-16 takes at most one unit per UTF-8 byte; mapping grows it (ß → ss, ﬃ → ffi),
    // by at most 3 units per unit (NFKC's and case folding's longest expansions, with room).
    int32_t inputCapacity = (int32_t)count + 1, preparedCapacity = 4 * (int32_t)count + 16;
    UChar *input = malloc(sizeof(UChar) * (size_t)inputCapacity);
    UChar *prepared = malloc(sizeof(UChar) * (size_t)preparedCapacity);
    int result = -1;
    UErrorCode error = U_ZERO_ERROR;
    UStringPrepProfile *profile = input && prepared ? icu.openByType(USPREP_RFC4518_LDAP_CI, &error) : NULL;
    if (profile && U_SUCCESS(error)) {
        int32_t units = 0;
        icu.fromUTF8(input, inputCapacity, &units, utf8, (int32_t)count, &error);
        int32_t length = U_FAILURE(error)
            ? 0 : icu.prepare(profile, input, units, prepared, preparedCapacity, USPREP_ALLOW_UNASSIGNED, NULL, &error);
        if (U_FAILURE(error)) {
            result = 0;  // not valid UTF-8, or a character RFC 4518 prohibits
        } else {
            int32_t bytes = 0;
            icu.toUTF8(out, (int32_t)capacity, &bytes, prepared, length, &error);
            if (U_SUCCESS(error) && (size_t)bytes <= capacity) {
                *written = (size_t)bytes;
                result = 1;
            }
        }
    }
    if (profile) icu.close(profile);
    free(input);
    free(prepared);
    return result;
}
