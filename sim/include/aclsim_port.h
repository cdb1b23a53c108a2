/*
 * aclsim_port.h - a local TCP port for a simulated HIXL engine ("127.0.0.1:<port>"), for test
 * programs that run in parallel. Header-only; exists only in the regcheck simulator. Needs
 * POSIX (compile C in a gnu or _POSIX_C_SOURCE=200809L mode); C and C++.
 *
 * A port that is merely free now (bind to port 0, then release it) can be taken by another
 * process before the engine binds it: by another test program that was handed the same port,
 * or by any outgoing connection, whose local port comes from the same ephemeral range. A port
 * from aclsimClaimPort() cannot be: it lies below the ephemeral range
 * (/proc/sys/net/ipv4/ip_local_port_range), so no connection is given it, and it is claimed
 * with a lock on its byte of one lock file ($TMPDIR or /tmp, "aclsim-ports-<uid>.lock"), held
 * until the process ends, so no other process calling aclsimClaimPort() (nor this one again)
 * gets it meanwhile. A claimed port that something else holds (it cannot be bound) is skipped.
 */
#ifndef ACLSIM_ACLSIM_PORT_H_
#define ACLSIM_ACLSIM_PORT_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef F_OFD_SETLK
#define F_OFD_SETLK 37 /* Linux: a lock owned by the open file description */
#endif

/* 1 when 127.0.0.1:port can be bound now (with SO_REUSEADDR, as the simulated engines bind). */
static inline int aclsimPortBindable(int port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1, ok;
    struct sockaddr_in a;
    if (s < 0) return 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons((unsigned short)port);
    ok = setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
         bind(s, (struct sockaddr *)&a, sizeof a) == 0;
    close(s);
    return ok;
}

/* A port of 127.0.0.1 that no other caller of aclsimClaimPort() gets while this process (or a
 * child it forked) lives, and that no outgoing connection is given; -1 (with a message on
 * stderr) when none can be claimed. Tries each port of the range at most once: no waiting. */
static inline int aclsimClaimPort(void) {
    char path[512];
    const char *tmp = getenv("TMPDIR");
    unsigned lo = 32768, hi = 60999, first, last, span, start, i;
    FILE *range = fopen("/proc/sys/net/ipv4/ip_local_port_range", "r");
    if (range != NULL) {
        if (fscanf(range, "%u %u", &lo, &hi) != 2) lo = 32768;
        fclose(range);
    }
    /* the 16384 ports below the ephemeral range (or above it, when it starts low) */
    first = lo >= 1024 + 16384 ? lo - 16384 : hi + 1;
    last = first + 16383 > 65535 ? 65535 : first + 16383;
    if (first > last) {
        fprintf(stderr, "aclsimClaimPort: no port outside the ephemeral range %u-%u\n", lo, hi);
        return -1;
    }
    snprintf(path, sizeof path, "%s/aclsim-ports-%u.lock", tmp != NULL && *tmp != '\0' ? tmp : "/tmp",
             (unsigned)getuid());
    span = last - first + 1;
    start = ((unsigned)getpid() * 7919u) % span; /* processes start apart; the locks decide */
    for (i = 0; i < span; i++) {
        unsigned port = first + (start + i) % span;
        struct flock lk;
        /* a description of its own per claim, so that two claims of one process conflict too */
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            perror("aclsimClaimPort: open the lock file");
            return -1;
        }
        memset(&lk, 0, sizeof lk);
        lk.l_type = F_WRLCK;
        lk.l_whence = SEEK_SET;
        lk.l_start = (off_t)port;
        lk.l_len = 1;
        if (fcntl(fd, F_OFD_SETLK, &lk) == 0 && aclsimPortBindable((int)port))
            return (int)port; /* fd stays open: the claim lasts as long as the process */
        close(fd);
    }
    fprintf(stderr, "aclsimClaimPort: every port of %u-%u is claimed or in use\n", first, last);
    return -1;
}

#endif /* ACLSIM_ACLSIM_PORT_H_ */
