/* A program linked with -lregcheck (against an installed wheel in tests/wheel.rs): prints
 * regcheck's version and how many regcheck libraries the process holds. */
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "regcheck.h"

static int count_regcheck(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    const char *slash = strrchr(info->dlpi_name, '/');
    const char *base = slash != NULL ? slash + 1 : info->dlpi_name;
    if (strncmp(base, "libregcheck.so", strlen("libregcheck.so")) == 0) (*(int *)data)++;
    return 0;
}

int main(void) {
    int n = 0;
    dl_iterate_phdr(count_regcheck, &n);
    printf("version %s objects %d\n", regcheck_version(), n);
    return 0;
}
