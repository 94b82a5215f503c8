/*
 * tsbench: a bind() that turns a wildcard address into the loopback address, preloaded into the local
 * GridDB node (LD_PRELOAD; server.py). GridDB CE 5.9.0 binds every service to the wildcard address
 * whatever gs_node.json's serviceAddress says (server/event_engine.cpp: resolveListenAddress binds a
 * NULL host on the service's port; no service ever sets a listen address), so a local node would
 * accept connections from the network. With this library every listening socket the node opens is
 * on 127.0.0.1 (IPv4) or ::1 (IPv6); the local runtime verifies that from the sockets it holds.
 * Binds to a specific address pass through unchanged. GridDB itself is not modified.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

typedef int (*bind_function)(int, const struct sockaddr *, socklen_t);

int bind(int fd, const struct sockaddr *address, socklen_t length) {
    static bind_function real_bind;
    if (real_bind == NULL) {
        real_bind = (bind_function)dlsym(RTLD_NEXT, "bind");
    }
    if (address != NULL && address->sa_family == AF_INET && length >= sizeof(struct sockaddr_in)) {
        struct sockaddr_in loopback;
        memcpy(&loopback, address, sizeof loopback);
        if (loopback.sin_addr.s_addr == htonl(INADDR_ANY)) {
            loopback.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            return real_bind(fd, (const struct sockaddr *)&loopback, sizeof loopback);
        }
    } else if (address != NULL && address->sa_family == AF_INET6 && length >= sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 loopback;
        memcpy(&loopback, address, sizeof loopback);
        if (IN6_IS_ADDR_UNSPECIFIED(&loopback.sin6_addr)) {
            loopback.sin6_addr = in6addr_loopback;
            return real_bind(fd, (const struct sockaddr *)&loopback, sizeof loopback);
        }
    }
    return real_bind(fd, address, length);
}
