// Byte scans that Swift's SIMD types do not compile to vector instructions (their
// compares are done lane by lane through the stack), over SSE2, which every x86-64 CPU
// has; elsewhere a plain loop.
#include "CCredFile.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/// Whether `byte` is in passlib's adapted base64 alphabet: ./0-9 A-Z a-z.
static int in_adapted_alphabet(unsigned char byte) {
    return (byte >= 0x2E && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A);
}

#if defined(__SSE2__)
/// Where the first byte outside the alphabet is among the sixteen at `at`, or 16.
/// Signed compares: a byte of 0x80 or more is negative, below every range.
static size_t first_outside_adapted_alphabet(const unsigned char *at) {
    const __m128i v = _mm_loadu_si128((const __m128i *)at);
    const __m128i digits = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x2E - 1)),
                                         _mm_cmplt_epi8(v, _mm_set1_epi8(0x39 + 1)));
    const __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x41 - 1)),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8(0x5A + 1)));
    const __m128i lower = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x61 - 1)),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8(0x7A + 1)));
    const unsigned outside = (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(digits, upper), lower)) ^ 0xFFFFu;
    return outside ? (size_t)__builtin_ctz(outside) : 16;
}
#endif

size_t credfile_adapted_base64_run(const void *text, size_t count) {
    const unsigned char *bytes = text;
    size_t index = 0;
#if defined(__SSE2__)
    if (count >= 16) {
        for (; index + 16 <= count; index += 16) {
            const size_t outside = first_outside_adapted_alphabet(bytes + index);
            if (outside < 16) return index + outside;
        }
        if (index == count) return count;
        // The last 1-15 bytes as the end of the last sixteen, whose earlier bytes were
        // found in the alphabet above.
        return count - 16 + first_outside_adapted_alphabet(bytes + count - 16);
    }
#endif
    while (index < count && in_adapted_alphabet(bytes[index])) index++;
    return index;
}
