/* aclsimClaimPort (aclsim_port.h): `claim_port <n>` claims n ports, then forks a child that
 * claims n more while the parent still holds its own, and prints every port as "port <p>", then
 * "ready". It holds its claims until a line arrives on stdin or stdin closes (at most 20 s).
 * Exit 1 when a claim fails. */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aclsim_port.h"

static int claim_and_print(int n) {
    for (int i = 0; i < n; i++) {
        int port = aclsimClaimPort();
        if (port < 0) return 1;
        printf("port %d\n", port);
    }
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 2;
    if (claim_and_print(n) != 0) return 1;
    pid_t child = fork();
    if (child < 0) return 1;
    if (child == 0) _exit(claim_and_print(n));
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
    printf("ready\n");
    fflush(stdout);
    struct pollfd in = {0, POLLIN, 0};
    poll(&in, 1, 20000);
    return 0;
}
