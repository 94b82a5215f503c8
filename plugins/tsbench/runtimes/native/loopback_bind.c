/*
 * tsbench: a bind() that turns a wildcard address into the loopback address, preloaded (LD_PRELOAD)
 * into a local server that binds its listeners to every address whatever its configuration says
 * (the target folders that preload it say which server, and where in its source it drops the host).
 * With it every listening socket such a server opens is on 127.0.0.1 (IPv4) or ::1 (IPv6); binds to a
 * specific address pass through unchanged, and the local runtime verifies every listener from the
 * sockets the server holds (runtimes/listening.py). The servers themselves are not modified.
 * Built by scripts/compile_loopback_shim.sh; runtimes/loopback_shim.py names the library.
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
