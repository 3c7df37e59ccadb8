/*
 * notify-sink (tests only): what systemd's end of NOTIFY_SOCKET does, enough to test the agent.
 *
 *   notify-sink SOCKET_PATH
 *
 * Binds a unix datagram socket at SOCKET_PATH, prints "ready" on stdout, then prints every
 * datagram received as one line (the message's newlines become spaces), flushed at once, and
 * closes any descriptor that came with it, as systemd does with a BARRIER=1 pipe. Stops at EOF on
 * stdin or SIGTERM, removing the socket. Exit codes: 0 stopped, 64 usage, 71 the socket failed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop_requested = 0;
static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

int main(int argc, char **argv) {
  if (argc != 2 || strlen(argv[1]) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
    fprintf(stderr, "usage: notify-sink SOCKET_PATH\n");
    return 64;
  }
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  strcpy(addr.sun_path, argv[1]);
  int s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  unlink(argv[1]);
  if (s < 0 || bind(s, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
    fprintf(stderr, "notify-sink: %s: %s\n", argv[1], strerror(errno));
    return 71;
  }
  signal(SIGTERM, on_signal);
  signal(SIGINT, on_signal);
  printf("ready\n");
  fflush(stdout);
  struct pollfd fds[2] = {{.fd = s, .events = POLLIN}, {.fd = STDIN_FILENO, .events = POLLIN}};
  while (!stop_requested) {
    if (poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[1].revents) {
      char b[256];
      if (read(STDIN_FILENO, b, sizeof(b)) <= 0) break;
    }
    if (!(fds[0].revents & POLLIN)) continue;
    char text[4097];
    union {
      char buf[CMSG_SPACE(sizeof(int) * 8)];
      struct cmsghdr align;
    } control;
    struct iovec iov = {.iov_base = text, .iov_len = sizeof(text) - 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf, .msg_controllen = sizeof(control.buf)};
    ssize_t n = recvmsg(s, &msg, MSG_CMSG_CLOEXEC);
    if (n < 0) continue;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
      int count = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
      for (int i = 0; i < count; i++) {
        int fd;
        memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        close(fd);
      }
    }
    for (ssize_t i = 0; i < n; i++)
      if (text[i] == '\n') text[i] = ' ';
    text[n] = '\0';
    printf("%s\n", text);
    fflush(stdout);
  }
  unlink(argv[1]);
  return 0;
}
