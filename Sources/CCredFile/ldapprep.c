// RFC 4518's string preparation of an LDAP value for caseIgnoreMatch (the matching rule
// of `uid`), through ICU's usprep with its RFC 4518 case-ignoring profile: map (soft
// hyphen and other ignorable characters to nothing, the space separators to SPACE, case
// folded), NFKC, prohibit. RFC 4518's last step, insignificant space handling, is the
// caller's (Sources/CredFile/Internals/LDAPStringPrep.swift).
#include "CCredFile.h"

#include <stdlib.h>
#include <unicode/usprep.h>
#include <unicode/ustring.h>

int credfile_ldap_prepare(const void *utf8, size_t count, void *out, size_t capacity, size_t *written) {
    *written = 0;
    if (count > 65536 || capacity > INT32_MAX) return -1;
    // UTF-16 takes at most one unit per UTF-8 byte; mapping grows it (ß → ss, ﬃ → ffi),
    // by at most 3 units per unit (NFKC's and case folding's longest expansions, with room).
    int32_t inputCapacity = (int32_t)count + 1, preparedCapacity = 4 * (int32_t)count + 16;
    UChar *input = malloc(sizeof(UChar) * (size_t)inputCapacity);
    UChar *prepared = malloc(sizeof(UChar) * (size_t)preparedCapacity);
    int result = -1;
    UErrorCode error = U_ZERO_ERROR;
    UStringPrepProfile *profile = input && prepared ? usprep_openByType(USPREP_RFC4518_LDAP_CI, &error) : NULL;
    if (profile && U_SUCCESS(error)) {
        int32_t units = 0;
        u_strFromUTF8(input, inputCapacity, &units, utf8, (int32_t)count, &error);
        int32_t length = U_FAILURE(error)
            ? 0 : usprep_prepare(profile, input, units, prepared, preparedCapacity, USPREP_ALLOW_UNASSIGNED, NULL, &error);
        if (U_FAILURE(error)) {
            result = 0;  // not valid UTF-8, or a character RFC 4518 prohibits
        } else {
            int32_t bytes = 0;
            u_strToUTF8(out, (int32_t)capacity, &bytes, prepared, length, &error);
            if (U_SUCCESS(error) && (size_t)bytes <= capacity) {
                *written = (size_t)bytes;
                result = 1;
            }
        }
    }
    if (profile) usprep_close(profile);
    free(input);
    free(prepared);
    return result;
}
