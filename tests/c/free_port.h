/* A local TCP port nobody listens on now, for test programs whose HIXL engines listen
 * (engine names are "127.0.0.1:<port>"). */
#ifndef REGCHECK_TESTS_FREE_PORT_H
#define REGCHECK_TESTS_FREE_PORT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static inline int free_port(void) {
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
    return ntohs(addr.sin_port);
}

#endif
