/* Linked with `-L target/release -lregcheck` and nothing else: starts only if the loader finds
 * the library by its SONAME in the build tree. */
#include <stdio.h>

#include "regcheck.h"

int main(void) {
    printf("regcheck %s\n", regcheck_version());
    return 0;
}
