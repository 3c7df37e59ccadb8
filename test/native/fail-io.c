/*
 * LD_PRELOAD shim for the write-failure tests: makes write, pwrite, pwrite64, fsync and fdatasync
 * fail with EIO, at random or on command, for files under one directory only (the test's scratch
 * directory: the child's stdout and everything else are left alone). Real failures of real calls,
 * as a dying SD card gives them, with nothing to install (libfiu is not needed).
 *
 * Environment of the process it is loaded into:
 *   QRVEND_FAILIO_DIR    only files whose path starts with this directory are affected (required)
 *   QRVEND_FAILIO_CTL    a small text file read at every call: "write=P sync=P", each P a
 *                        probability 0..1 (1 = every call fails, 0 = none); a missing file or key
 *                        means 0. The test rewrites it to turn failures on and off. "stall=MS"
 *                        makes every write and sync in scope wait MS milliseconds before it runs
 *                        (a worn SD card that stalls for seconds), counted like a failure.
 *   QRVEND_FAILIO_SEED   seed of the random draws (default 1), so a run can be repeated.
 *   QRVEND_FAILIO_COUNT  if set, a file that gets one byte appended per injected failure, so the
 *                        test can check that failures did happen.
 *   QRVEND_FAILIO_TALLY  if set, a file that gets one line per call on a file in scope that went
 *                        through (failed or not): "W <bytes> <path>" for write/pwrite, "S 0 <path>"
 *                        for fsync/fdatasync. The SD-card wear benchmark counts syncs and bytes per
 *                        file with it (no CTL file needed: nothing fails without one).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef ssize_t (*pwrite_fn)(int, const void *, size_t, off_t);
typedef ssize_t (*pwrite64_fn)(int, const void *, size_t, off64_t);
typedef int (*sync_fn)(int);

static write_fn real_write;
static pwrite_fn real_pwrite;
static pwrite64_fn real_pwrite64;
static sync_fn real_fsync;
static sync_fn real_fdatasync;
static unsigned int seed = 1;

__attribute__((constructor)) static void init(void) {
  real_write = (write_fn)dlsym(RTLD_NEXT, "write");
  real_pwrite = (pwrite_fn)dlsym(RTLD_NEXT, "pwrite");
  real_pwrite64 = (pwrite64_fn)dlsym(RTLD_NEXT, "pwrite64");
  real_fsync = (sync_fn)dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (sync_fn)dlsym(RTLD_NEXT, "fdatasync");
  const char *s = getenv("QRVEND_FAILIO_SEED");
  if (s) seed = (unsigned int)strtoul(s, NULL, 10);
}

/* Does fd name a file under QRVEND_FAILIO_DIR? */
static int in_scope(int fd) {
  const char *dir = getenv("QRVEND_FAILIO_DIR");
  if (!dir || !*dir) return 0;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return 0;
  path[n] = '\0';
  size_t len = strlen(dir);
  return strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == '\0');
}

/* The probability for `key` in the control file, read afresh (the test changes it at any time). */
static double probability(const char *key) {
  const char *ctl = getenv("QRVEND_FAILIO_CTL");
  if (!ctl) return 0;
  int fd = open(ctl, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char text[256];
  ssize_t n = pread(fd, text, sizeof text - 1, 0);
  close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  char needle[32];
  snprintf(needle, sizeof needle, "%s=", key);
  const char *at = strstr(text, needle);
  return at ? strtod(at + strlen(needle), NULL) : 0;
}

/* Appends one line to the tally file (QRVEND_FAILIO_TALLY) for a call on a file in scope. */
static void tally(int fd, char op, size_t n) {
  const char *file = getenv("QRVEND_FAILIO_TALLY");
  if (!file || !*file || !in_scope(fd)) return;
  char link[64], path[4096], line[4200];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t len = readlink(link, path, sizeof path - 1);
  if (len <= 0) return;
  path[len] = '\0';
  int c = open(file, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (c < 0) return;
  int m = snprintf(line, sizeof line, "%c %zu %s\n", op, n, path);
  if (m > 0) real_write(c, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
  close(c);
}

static void count_fault(void) {
  const char *count = getenv("QRVEND_FAILIO_COUNT");
  if (!count) return;
  int c = open(count, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (c >= 0) {
    real_write(c, "x", 1);
    close(c);
  }
}

/* "stall=MS": the call waits before it runs; counted first, so a test sees the stall begin. */
static void stall(int fd) {
  if (!in_scope(fd)) return;
  double ms = probability("stall");
  if (ms <= 0) return;
  count_fault();
  struct timespec t = {(time_t)(ms / 1000), (long)((ms - 1000 * (double)(time_t)(ms / 1000)) * 1e6)};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

static int should_fail(int fd, const char *key) {
  stall(fd);
  if (!in_scope(fd)) return 0;
  double p = probability(key);
  if (p <= 0) return 0;
  if (p < 1 && (double)rand_r(&seed) / RAND_MAX >= p) return 0;
  count_fault();
  errno = EIO;
  return 1;
}

ssize_t write(int fd, const void *buf, size_t n) {
  if (should_fail(fd, "write")) return -1;
  tally(fd, 'W', n);
  return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
  if (should_fail(fd, "write")) return -1;
  tally(fd, 'W', n);
  return real_pwrite(fd, buf, n, off);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
  if (should_fail(fd, "write")) return -1;
  tally(fd, 'W', n);
  return real_pwrite64(fd, buf, n, off);
}

int fsync(int fd) {
  if (should_fail(fd, "sync")) return -1;
  tally(fd, 'S', 0);
  return real_fsync(fd);
}

int fdatasync(int fd) {
  if (should_fail(fd, "sync")) return -1;
  tally(fd, 'S', 0);
  return real_fdatasync(fd);
}
