/* Tiny assertion helpers for the simulator's own test programs (C and C++). */
#ifndef ACLSIM_TESTS_CHECK_H_
#define ACLSIM_TESTS_CHECK_H_

#include <stdio.h>

static int g_failures = 0;
static int g_checks = 0;

#define EXPECT_EQ(expr, want)                                                                    \
    do {                                                                                         \
        long long got_ = (long long)(expr);                                                      \
        long long want_ = (long long)(want);                                                     \
        g_checks++;                                                                              \
        if (got_ != want_) {                                                                     \
            fprintf(stderr, "FAIL %s:%d: %s = %lld, want %lld\n", __FILE__, __LINE__, #expr, got_, \
                    want_);                                                                      \
            g_failures++;                                                                        \
        }                                                                                        \
    } while (0)

#define EXPECT_TRUE(cond)                                                          \
    do {                                                                           \
        g_checks++;                                                                \
        if (!(cond)) {                                                             \
            fprintf(stderr, "FAIL %s:%d: %s is false\n", __FILE__, __LINE__, #cond); \
            g_failures++;                                                          \
        }                                                                          \
    } while (0)

/* Prints the summary line tests look for and returns the exit code. */
#define CHECK_DONE()                                                               \
    (printf("checks=%d failures=%d\n", g_checks, g_failures), fflush(stdout),      \
     g_failures == 0 ? 0 : 1)

#endif /* ACLSIM_TESTS_CHECK_H_ */
