/* A local TCP port nobody listens on now, for test programs whose HIXL engines listen
 * (engine names are "127.0.0.1:<port>"). */
#ifndef REGCHECK_TESTS_FREE_PORT_H
#define REGCHECK_TESTS_FREE_PORT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Never the same port twice in one program: the system may hand a port it just released out
 * again at the next bind to port 0, and two engines of one program must not share it. */
static inline int free_port(void) {
    static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
    static int given[256];
    static int n_given;
    pthread_mutex_lock(&mu);
    for (;;) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in addr;
        socklen_t len = sizeof addr;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
            getsockname(fd, (struct sockaddr *)&addr, &len) != 0)
            abort();
        close(fd);
        int port = ntohs(addr.sin_port), seen = 0;
        for (int i = 0; i < n_given; i++) seen |= given[i] == port;
        if (seen) continue;
        if (n_given < (int)(sizeof given / sizeof given[0])) given[n_given++] = port;
        pthread_mutex_unlock(&mu);
        return port;
    }
}

#endif
