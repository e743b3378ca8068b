/* A small shared object with one import slot of each kind, so tests know exactly what the tool and
 * the engine must find: sendto through the PLT (JUMP_SLOT), recvfrom's address taken in code
 * (GLOB_DAT) and close's address stored in data (an absolute relocation). Built twice: plainly and
 * with lld's Android packed relocations (APS2), where the GLOB_DAT and absolute slots move into the
 * packed table. */
#include <sys/socket.h>
#include <unistd.h>

typedef ssize_t (*jp_recv_fn)(int, void *, size_t, int, struct sockaddr *, socklen_t *);

int (*jp_fixture_close_ptr)(int) = close;

jp_recv_fn jp_fixture_recv_address(void) { return recvfrom; }

long jp_fixture_send(int fd, const void *buf, size_t n) { return sendto(fd, buf, n, 0, 0, 0); }
