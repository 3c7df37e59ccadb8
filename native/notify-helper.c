/*
 * qrvend-notify: sd_notify for the agent's main thread. Node has no AF_UNIX datagram socket, and
 * starting a process per message (`systemd-notify`) stalls the calling thread for the fork of a
 * large process: too long for the machine loop. So the daemon starts this helper once, before the
 * machine loop runs, and writes messages to its stdin, a pipe: a write to a pipe is non-blocking
 * in Node (libuv queues what the pipe cannot take), so the main thread never waits for systemd.
 *
 *   qrvend-notify            (NOTIFY_SOCKET from the environment, as systemd sets it)
 *
 * Reads records from stdin, each ended by a NUL byte: one notification message (assignments
 * separated by newlines, e.g. "READY=1\nMAINPID=42"), sent as one datagram to $NOTIFY_SOCKET (a
 * path, or "@name" for the abstract namespace), exactly as sd_notify(3) does. After a message that
 * carries READY=1 or STOPPING=1, and at EOF, it waits for systemd to have read everything sent so
 * far (BARRIER=1, as sd_notify_barrier(3)): systemd attributes a message to the unit by its
 * sender, and a sender that exited before that is lost. It exits 0 at EOF on stdin (the agent
 * exited), and ignores SIGINT/SIGTERM so that STOPPING=1 still goes out during the agent's stop.
 *
 * A failed send is reported on stderr, one line, and the helper carries on with the next record.
 * Exit codes: 0 stdin closed, 64 NOTIFY_SOCKET missing or unusable, 71 the socket failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* systemd reads at most this much of one message (NOTIFY_BUFFER_MAX is 4096 in its sources). */
#define MAX_MESSAGE 4096
#define BARRIER_TIMEOUT_MS 5000

static struct sockaddr_un addr;
static socklen_t addr_len;
static int sock = -1;

static int set_address(const char *path) {
  size_t n = strlen(path);
  if (n < 2 || n >= sizeof(addr.sun_path) || (path[0] != '/' && path[0] != '@')) return -1;
  memset(&addr, 0, sizeof(addr));
  addr.sun_family = AF_UNIX;
  memcpy(addr.sun_path, path, n);
  /* Abstract namespace: a leading NUL and no terminator counted. */
  if (path[0] == '@') addr.sun_path[0] = '\0';
  addr_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + (path[0] == '/' ? 1 : 0));
  return 0;
}

/* One datagram; with fd >= 0 the descriptor travels along (SCM_RIGHTS), as BARRIER=1 needs. */
static int send_message(const char *text, size_t len, int fd) {
  struct iovec iov = {.iov_base = (void *)text, .iov_len = len};
  union {
    char buf[CMSG_SPACE(sizeof(int))];
    struct cmsghdr align;
  } control;
  struct msghdr msg = {.msg_name = &addr, .msg_namelen = addr_len, .msg_iov = &iov, .msg_iovlen = 1};
  if (fd >= 0) {
    memset(&control, 0, sizeof(control));
    msg.msg_control = control.buf;
    msg.msg_controllen = sizeof(control.buf);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof(int));
  }
  for (;;) {
    if (sendmsg(sock, &msg, MSG_NOSIGNAL) >= 0) return 0;
    if (errno != EINTR) return -1;
  }
}

/* systemd closes the pipe's write end once it has read every message before it. */
static void barrier(void) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) < 0) return;
  int sent = send_message("BARRIER=1", 9, p[1]);
  close(p[1]);
  if (sent == 0) {
    struct pollfd pfd = {.fd = p[0], .events = 0};
    int r;
    do r = poll(&pfd, 1, BARRIER_TIMEOUT_MS);
    while (r < 0 && errno == EINTR);
    if (r == 0) fprintf(stderr, "qrvend-notify: systemd did not confirm within %d ms\n", BARRIER_TIMEOUT_MS);
  } else {
    fprintf(stderr, "qrvend-notify: cannot send to NOTIFY_SOCKET: %s\n", strerror(errno));
  }
  close(p[0]);
}

static void deliver(const char *text, size_t len) {
  if (len == 0) return;
  if (send_message(text, len, -1) < 0) {
    fprintf(stderr, "qrvend-notify: cannot send to NOTIFY_SOCKET: %s\n", strerror(errno));
    return;
  }
  /* Lines start the message or follow a newline: match whole assignments only. */
  const char *keys[] = {"READY=1", "STOPPING=1"};
  for (size_t k = 0; k < 2; k++) {
    size_t kl = strlen(keys[k]);
    for (size_t i = 0; i + kl <= len; i++) {
      if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, keys[k], kl) == 0 && (i + kl == len || text[i + kl] == '\n')) {
        barrier();
        return;
      }
    }
  }
}

int main(void) {
  const char *path = getenv("NOTIFY_SOCKET");
  if (path == NULL || set_address(path) < 0) {
    fprintf(stderr, "qrvend-notify: NOTIFY_SOCKET is not a socket path or @abstract name\n");
    return 64;
  }
  sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) {
    fprintf(stderr, "qrvend-notify: socket: %s\n", strerror(errno));
    return 71;
  }
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_IGN);

  static char message[MAX_MESSAGE];
  size_t len = 0;
  int overlong = 0;
  char buf[4096];
  for (;;) {
    ssize_t n = read(STDIN_FILENO, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; i++) {
      if (buf[i] == '\0') {
        if (overlong) fprintf(stderr, "qrvend-notify: a message over %d bytes was dropped\n", MAX_MESSAGE);
        else deliver(message, len);
        len = 0;
        overlong = 0;
      } else if (len < MAX_MESSAGE) {
        message[len++] = buf[i];
      } else {
        overlong = 1;
      }
    }
  }
  barrier();
  return 0;
}
