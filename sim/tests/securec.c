/* securec.h's functions as libascend_hal.so exports them: return codes and which errors reset
 * the destination. Prints "checks=N failures=M". */
#include <string.h>

#include "check.h"
#include "securec.h"

int main(void) {
    char d[8], big[64];

    /* memset_s */
    EXPECT_EQ(memset_s(d, sizeof d, 'a', 4), EOK);
    EXPECT_EQ(d[3], 'a');
    EXPECT_EQ(memset_s(d, 0, 'b', 1), ERANGE);
    EXPECT_EQ(memset_s(d, (size_t)0x80000000UL, 'b', 1), ERANGE);
    EXPECT_EQ(d[0], 'a');
    EXPECT_EQ(memset_s(NULL, 8, 'b', 1), EINVAL);
    EXPECT_EQ(memset_s(d, sizeof d, 'c', 9), ERANGE_AND_RESET); /* filled up to destMax with c */
    EXPECT_EQ(d[7], 'c');

    /* memcpy_s */
    memset(big, 'x', sizeof big);
    EXPECT_EQ(memcpy_s(d, sizeof d, big, 8), EOK);
    EXPECT_EQ(d[7], 'x');
    EXPECT_EQ(memcpy_s(d, sizeof d, big, 0), EOK);
    EXPECT_EQ(memcpy_s(d, 0, big, 1), ERANGE);
    EXPECT_EQ(memcpy_s(NULL, 8, big, 1), EINVAL);
    EXPECT_EQ(memcpy_s(d, sizeof d, NULL, 1), EINVAL_AND_RESET);
    EXPECT_EQ(d[0], 0);
    memset(d, 'y', sizeof d);
    EXPECT_EQ(memcpy_s(d, sizeof d, big, 9), ERANGE_AND_RESET);
    EXPECT_EQ(d[7], 0);
    EXPECT_EQ(memcpy_s(big, 16, big + 4, 8), EOVERLAP_AND_RESET);
    EXPECT_EQ(big[15], 0);
    EXPECT_EQ(memcpy_s(big, 16, big, 8), EOK); /* dest == src */

    /* memmove_s: overlap is fine */
    memcpy(big, "0123456789", 11);
    EXPECT_EQ(memmove_s(big + 2, 16, big, 8), EOK);
    EXPECT_EQ(memcmp(big, "0101234567", 10), 0);
    EXPECT_EQ(memmove_s(big, 4, big, 5), ERANGE_AND_RESET);
    EXPECT_EQ(memmove_s(big, 4, NULL, 1), EINVAL_AND_RESET);

    /* strcpy_s, strncpy_s */
    EXPECT_EQ(strcpy_s(d, sizeof d, "abc"), EOK);
    EXPECT_EQ(strcmp(d, "abc"), 0);
    EXPECT_EQ(strcpy_s(d, sizeof d, "12345678"), ERANGE_AND_RESET); /* no room for the NUL */
    EXPECT_EQ(d[0], 0);
    EXPECT_EQ(strcpy_s(d, sizeof d, NULL), EINVAL_AND_RESET);
    EXPECT_EQ(strcpy_s(NULL, 8, "a"), EINVAL);
    EXPECT_EQ(strcpy_s(d, 0, "a"), ERANGE);
    strcpy(big, "abcdef");
    EXPECT_EQ(strcpy_s(big + 2, 16, big), EOVERLAP_AND_RESET);
    EXPECT_EQ(strncpy_s(d, sizeof d, "abcdefghij", 3), EOK);
    EXPECT_EQ(strcmp(d, "abc"), 0);
    EXPECT_EQ(strncpy_s(d, sizeof d, "abcdefghij", 8), ERANGE_AND_RESET);
    EXPECT_EQ(strncpy_s(d, sizeof d, "ab", 0), EOK);
    EXPECT_EQ(d[0], 0);

    /* strcat_s, strncat_s */
    EXPECT_EQ(strcpy_s(d, sizeof d, "ab"), EOK);
    EXPECT_EQ(strcat_s(d, sizeof d, "cd"), EOK);
    EXPECT_EQ(strcmp(d, "abcd"), 0);
    EXPECT_EQ(strcat_s(d, sizeof d, "efgh"), ERANGE_AND_RESET);
    EXPECT_EQ(d[0], 0);
    memset(d, 'z', sizeof d); /* no terminator */
    EXPECT_EQ(strcat_s(d, sizeof d, "a"), EINVAL_AND_RESET);
    EXPECT_EQ(strcpy_s(d, sizeof d, "ab"), EOK);
    EXPECT_EQ(strncat_s(d, sizeof d, "cdefghij", 2), EOK);
    EXPECT_EQ(strcmp(d, "abcd"), 0);

    /* sprintf_s, snprintf_s */
    EXPECT_EQ(sprintf_s(d, sizeof d, "%d", 1234), 4);
    EXPECT_EQ(strcmp(d, "1234"), 0);
    EXPECT_EQ(sprintf_s(d, sizeof d, "%s", "123456789"), -1);
    EXPECT_EQ(d[0], 0);
    EXPECT_EQ(snprintf_s(d, sizeof d, 3, "%s", "abcdef"), -1); /* truncated to count: kept */
    EXPECT_EQ(strcmp(d, "abc"), 0);
    EXPECT_EQ(snprintf_s(d, sizeof d, 7, "%s", "abc"), 3);
    EXPECT_EQ(snprintf_s(d, sizeof d, 8, "%s", "abcdefghij"), -1); /* count >= destMax: like sprintf_s */
    EXPECT_EQ(d[0], 0);
    EXPECT_EQ(snprintf_s(NULL, 8, 3, "x"), -1);
    return CHECK_DONE();
}
