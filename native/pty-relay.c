/*
 * qrvend-pty: two pseudo-terminals joined back to back, so two programs that each expect a serial
 * port can talk (the agent on one end, a simulated VMC or a trace on the other). It replaces
 * `socat pty,raw,echo=0,link=A pty,raw,echo=0,link=B` for the simulators and the tests, so they
 * need nothing beyond a C compiler (already needed by better-sqlite3).
 *
 *   qrvend-pty LINK_A LINK_B
 *
 * Opens two pty masters, sets both lines raw (no echo, no CR/LF translation, no signals), makes
 * LINK_A and LINK_B symlinks to the two slave devices, prints "ready\n" on stdout, then copies
 * bytes between the masters until SIGTERM/SIGINT/SIGHUP, its stdin reaching EOF or its parent
 * dying (so a test runner that is killed leaves no relay behind). On the way out it removes both
 * links and closes the masters: to the programs on the slaves that is an adapter pulled out.
 *
 * Exit codes: 0 stopped, 64 usage, 71 a pty or link could not be made.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#define BUF_SIZE 65536

struct end {
  int master;
  const char *link;
  char slave[128];
};

/* Bytes read from one master waiting to be written to the other (kept when the reader is slow). */
struct lane {
  char buf[BUF_SIZE];
  size_t len;
};

static volatile sig_atomic_t stop_requested = 0;
static struct end ends[2];

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

static void remove_links(void) {
  for (int i = 0; i < 2; i++)
    if (ends[i].link) unlink(ends[i].link);
}

static int fail(const char *what, const char *detail) {
  fprintf(stderr, "qrvend-pty: %s %s: %s\n", what, detail, strerror(errno));
  remove_links();
  return 71;
}

static int open_end(struct end *e) {
  e->master = posix_openpt(O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
  if (e->master < 0) return -1;
  if (grantpt(e->master) < 0 || unlockpt(e->master) < 0) return -1;
  if (ptsname_r(e->master, e->slave, sizeof e->slave) != 0) return -1;
  /* On Linux the termios calls on a master act on its slave: raw, 8 bits, no echo. */
  struct termios t;
  if (tcgetattr(e->master, &t) < 0) return -1;
  cfmakeraw(&t);
  t.c_cflag |= CLOCAL | CREAD;
  if (tcsetattr(e->master, TCSANOW, &t) < 0) return -1;
  return 0;
}

/* The link appears atomically (made under a temporary name, then renamed over any stale one). */
static int make_link(const struct end *e) {
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.%ld.tmp", e->link, (long)getpid()) >= (int)sizeof tmp) {
    errno = ENAMETOOLONG;
    return -1;
  }
  unlink(tmp);
  if (symlink(e->slave, tmp) < 0) return -1;
  if (rename(tmp, e->link) < 0) {
    unlink(tmp);
    return -1;
  }
  return 0;
}

/*
 * Moves what it can from `from` into the lane and from the lane into `to`; returns the bytes moved,
 * or -1 on a real error. A master whose slave no program holds open (POLLHUP, reads fail with EIO)
 * is a cable to nothing: what is sent towards it is dropped, as a board's bytes are on an
 * unplugged line.
 */
static ssize_t pump(int from, int to, struct lane *lane, short revents_from, short revents_to) {
  ssize_t moved = 0;
  if ((revents_from & POLLIN) && lane->len < BUF_SIZE) {
    ssize_t n = read(from, lane->buf + lane->len, BUF_SIZE - lane->len);
    if (n > 0) {
      lane->len += (size_t)n;
      moved += n;
    } else if (n < 0 && errno != EAGAIN && errno != EINTR && errno != EIO) {
      return -1;
    }
  }
  if (lane->len > 0 && (revents_to & POLLHUP) && !(revents_to & POLLOUT)) {
    lane->len = 0;
  } else if (lane->len > 0 && (revents_to & POLLOUT)) {
    ssize_t n = write(to, lane->buf, lane->len);
    if (n > 0) {
      memmove(lane->buf, lane->buf + n, lane->len - (size_t)n);
      lane->len -= (size_t)n;
      moved += n;
    } else if (n < 0 && errno == EIO) {
      lane->len = 0;
    } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return -1;
    }
  }
  return moved;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: qrvend-pty LINK_A LINK_B\n");
    return 64;
  }
  /*
   * Die with the parent: a killed test runner or simulator must not leave a relay behind. (A
   * parent gone before this call is seen too: its end of our stdin is closed, read() gives 0.)
   */
  prctl(PR_SET_PDEATHSIG, SIGTERM);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  ends[0].link = NULL;
  ends[1].link = NULL;
  for (int i = 0; i < 2; i++)
    if (open_end(&ends[i]) < 0) return fail("cannot open a pseudo-terminal", "");
  for (int i = 0; i < 2; i++) {
    ends[i].link = argv[1 + i];
    if (make_link(&ends[i]) < 0) return fail("cannot create the link", argv[1 + i]);
  }
  if (write(STDOUT_FILENO, "ready\n", 6) != 6) {
    remove_links();
    return 71;
  }

  static struct lane a_to_b, b_to_a;
  int stdin_open = 1;
  while (!stop_requested) {
    struct pollfd p[3];
    /* Read only while there is room, write only while there is something to write. */
    p[0].fd = ends[0].master;
    p[0].events = (a_to_b.len < BUF_SIZE ? POLLIN : 0) | (b_to_a.len > 0 ? POLLOUT : 0);
    p[1].fd = ends[1].master;
    p[1].events = (b_to_a.len < BUF_SIZE ? POLLIN : 0) | (a_to_b.len > 0 ? POLLOUT : 0);
    p[2].fd = stdin_open ? STDIN_FILENO : -1;
    p[2].events = POLLIN;
    int r = poll(p, 3, 1000);
    if (r < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (stdin_open && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
      char scratch[64];
      ssize_t n = read(STDIN_FILENO, scratch, sizeof scratch);
      if (n <= 0) break; /* the parent closed our stdin or went away: stop */
    }
    ssize_t ab = pump(ends[0].master, ends[1].master, &a_to_b, p[0].revents, p[1].revents);
    ssize_t ba = pump(ends[1].master, ends[0].master, &b_to_a, p[1].revents, p[0].revents);
    if (ab < 0 || ba < 0) break;
    /*
     * POLLHUP on a master means no program holds that slave open, and poll() then returns at once
     * every time: pause a little before looking again (a port opened meanwhile is seen 5 ms later).
     */
    if (ab == 0 && ba == 0 && ((p[0].revents | p[1].revents) & (POLLHUP | POLLERR))) {
      struct timespec ts = {0, 5 * 1000 * 1000};
      nanosleep(&ts, NULL);
    }
  }
  remove_links();
  close(ends[0].master);
  close(ends[1].master);
  return 0;
}
