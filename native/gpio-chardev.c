/*
 * qrvend-gpio.node: the kernel's GPIO character device (uAPI v2, linux/gpio.h) for
 * src/device/gpio/chardev.ts. A Node-API addon of our own rather than a libgpiod binding: it needs
 * only the kernel's uAPI header and Node's headers at build time, no library at run time, and the
 * release cross-builds it like qrvend-trim.node (docs/devices.md, "Why our own addon").
 *
 *   chipInfo(path)                          -> { name, label, lines }
 *   lineInfos(path)                         -> [{ offset, name, consumer, used, output, openDrain, activeLow }]
 *   request(path, offset, consumer, mode, value) -> fd   mode: 0 as-is, 1 input, 2 output, 3 open-drain output
 *   getValue(fd) -> 0 | 1;  setValue(fd, 0 | 1);  release(fd)
 *
 * Errors are thrown with the errno's name as code (EBUSY: held by another consumer), so the
 * caller can tell a technician which line and why.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/gpio.h>
#include <node_api.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define PATH_MAX_LEN 256
#define MAX_LINES 1024

static napi_value throw_errno(napi_env env, const char *what, int err) {
  char msg[320];
  const char *code = err == EBUSY ? "EBUSY" : err == ENOENT ? "ENOENT" : err == EACCES ? "EACCES"
                   : err == EINVAL ? "EINVAL" : err == ENOTTY ? "ENOTTY" : err == EPERM ? "EPERM" : "EIO";
  snprintf(msg, sizeof msg, "%s: %s", what, strerror(err));
  napi_throw_error(env, code, msg);
  return NULL;
}

static int get_args(napi_env env, napi_callback_info info, size_t want, napi_value *argv) {
  size_t argc = want;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < want) {
    napi_throw_type_error(env, "EINVAL", "qrvend-gpio: missing arguments");
    return -1;
  }
  return 0;
}

static int get_path(napi_env env, napi_value v, char *path) {
  size_t len = 0;
  if (napi_get_value_string_utf8(env, v, path, PATH_MAX_LEN, &len) != napi_ok || len == 0 || len >= PATH_MAX_LEN - 1) {
    napi_throw_type_error(env, "EINVAL", "qrvend-gpio: chip path must be a string of 1 to 254 bytes");
    return -1;
  }
  return 0;
}

static int get_u32(napi_env env, napi_value v, uint32_t *out) {
  if (napi_get_value_uint32(env, v, out) != napi_ok) {
    napi_throw_type_error(env, "EINVAL", "qrvend-gpio: a number was expected");
    return -1;
  }
  return 0;
}

static void set_str(napi_env env, napi_value obj, const char *key, const char *s, size_t max) {
  napi_value v;
  napi_create_string_utf8(env, s, strnlen(s, max), &v);
  napi_set_named_property(env, obj, key, v);
}

static void set_u32(napi_env env, napi_value obj, const char *key, uint32_t n) {
  napi_value v;
  napi_create_uint32(env, n, &v);
  napi_set_named_property(env, obj, key, v);
}

static void set_bool(napi_env env, napi_value obj, const char *key, int b) {
  napi_value v;
  napi_get_boolean(env, b != 0, &v);
  napi_set_named_property(env, obj, key, v);
}

static int open_chip(napi_env env, napi_value arg, char *path) {
  if (get_path(env, arg, path) < 0) return -1;
  int fd = open(path, O_RDWR | O_CLOEXEC);
  if (fd < 0) throw_errno(env, path, errno);
  return fd;
}

/*
 * The one argument (the chip's path), the chip opened and its info read: the fd, or -1 with the
 * JavaScript exception set (nothing left open). Shared by chipInfo and lineInfos.
 */
static int open_chip_info(napi_env env, napi_callback_info info, char *path, struct gpiochip_info *ci) {
  napi_value argv[1];
  if (get_args(env, info, 1, argv) < 0) return -1;
  int fd = open_chip(env, argv[0], path);
  if (fd < 0) return -1;
  memset(ci, 0, sizeof *ci);
  if (ioctl(fd, GPIO_GET_CHIPINFO_IOCTL, ci) < 0) {
    int err = errno;
    close(fd);
    throw_errno(env, path, err);
    return -1;
  }
  return fd;
}

static napi_value chip_info(napi_env env, napi_callback_info info) {
  char path[PATH_MAX_LEN];
  struct gpiochip_info ci;
  int fd = open_chip_info(env, info, path, &ci);
  if (fd < 0) return NULL;
  close(fd);
  napi_value obj;
  napi_create_object(env, &obj);
  set_str(env, obj, "name", ci.name, sizeof ci.name);
  set_str(env, obj, "label", ci.label, sizeof ci.label);
  set_u32(env, obj, "lines", ci.lines);
  return obj;
}

static napi_value line_infos(napi_env env, napi_callback_info info) {
  char path[PATH_MAX_LEN];
  struct gpiochip_info ci;
  int fd = open_chip_info(env, info, path, &ci);
  if (fd < 0) return NULL;
  uint32_t n = ci.lines > MAX_LINES ? MAX_LINES : ci.lines;
  napi_value arr;
  napi_create_array_with_length(env, n, &arr);
  for (uint32_t i = 0; i < n; i++) {
    struct gpio_v2_line_info li;
    memset(&li, 0, sizeof li);
    li.offset = i;
    if (ioctl(fd, GPIO_V2_GET_LINEINFO_IOCTL, &li) < 0) {
      int err = errno;
      close(fd);
      return throw_errno(env, path, err);
    }
    napi_value obj;
    napi_create_object(env, &obj);
    set_u32(env, obj, "offset", li.offset);
    set_str(env, obj, "name", li.name, sizeof li.name);
    set_str(env, obj, "consumer", li.consumer, sizeof li.consumer);
    set_bool(env, obj, "used", li.flags & GPIO_V2_LINE_FLAG_USED);
    set_bool(env, obj, "output", li.flags & GPIO_V2_LINE_FLAG_OUTPUT);
    set_bool(env, obj, "openDrain", li.flags & GPIO_V2_LINE_FLAG_OPEN_DRAIN);
    set_bool(env, obj, "activeLow", li.flags & GPIO_V2_LINE_FLAG_ACTIVE_LOW);
    napi_set_element(env, arr, i, obj);
  }
  close(fd);
  return arr;
}

static napi_value request(napi_env env, napi_callback_info info) {
  napi_value argv[5];
  char path[PATH_MAX_LEN];
  uint32_t offset, mode, value;
  if (get_args(env, info, 5, argv) < 0) return NULL;
  if (get_u32(env, argv[1], &offset) < 0 || get_u32(env, argv[3], &mode) < 0) return NULL;
  if (get_u32(env, argv[4], &value) < 0) return NULL;
  struct gpio_v2_line_request req;
  memset(&req, 0, sizeof req);
  size_t len = 0;
  if (napi_get_value_string_utf8(env, argv[2], req.consumer, sizeof req.consumer, &len) != napi_ok) {
    napi_throw_type_error(env, "EINVAL", "qrvend-gpio: consumer must be a string");
    return NULL;
  }
  if (mode > 3) {
    napi_throw_range_error(env, "EINVAL", "qrvend-gpio: mode is 0 to 3");
    return NULL;
  }
  int fd = open_chip(env, argv[0], path);
  if (fd < 0) return NULL;
  req.offsets[0] = offset;
  req.num_lines = 1;
  if (mode == 1) req.config.flags = GPIO_V2_LINE_FLAG_INPUT;
  if (mode >= 2) {
    // Open drain with the pull-up: released is high, as the board's own reset circuit wants
    // (gpiolib treats the bias as optional where the chip has none).
    req.config.flags = GPIO_V2_LINE_FLAG_OUTPUT;
    if (mode == 3) req.config.flags |= GPIO_V2_LINE_FLAG_OPEN_DRAIN | GPIO_V2_LINE_FLAG_BIAS_PULL_UP;
    req.config.num_attrs = 1;
    req.config.attrs[0].attr.id = GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES;
    req.config.attrs[0].attr.values = value ? 1 : 0;
    req.config.attrs[0].mask = 1;
  }
  int rc = ioctl(fd, GPIO_V2_GET_LINE_IOCTL, &req);
  int err = errno;
  close(fd);
  if (rc < 0) return throw_errno(env, path, err);
  napi_value out;
  napi_create_int32(env, req.fd, &out);
  return out;
}

static int get_fd(napi_env env, napi_value v, int32_t *fd) {
  if (napi_get_value_int32(env, v, fd) != napi_ok || *fd < 0) {
    napi_throw_type_error(env, "EINVAL", "qrvend-gpio: a line handle was expected");
    return -1;
  }
  return 0;
}

static napi_value get_value(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t fd;
  if (get_args(env, info, 1, argv) < 0 || get_fd(env, argv[0], &fd) < 0) return NULL;
  struct gpio_v2_line_values vals = { .bits = 0, .mask = 1 };
  if (ioctl(fd, GPIO_V2_LINE_GET_VALUES_IOCTL, &vals) < 0) return throw_errno(env, "get value", errno);
  napi_value out;
  napi_create_uint32(env, (uint32_t)(vals.bits & 1), &out);
  return out;
}

static napi_value set_value(napi_env env, napi_callback_info info) {
  napi_value argv[2];
  int32_t fd;
  uint32_t value;
  if (get_args(env, info, 2, argv) < 0 || get_fd(env, argv[0], &fd) < 0) return NULL;
  if (get_u32(env, argv[1], &value) < 0) return NULL;
  struct gpio_v2_line_values vals = { .bits = value ? 1 : 0, .mask = 1 };
  if (ioctl(fd, GPIO_V2_LINE_SET_VALUES_IOCTL, &vals) < 0) return throw_errno(env, "set value", errno);
  return NULL;
}

static napi_value release_line(napi_env env, napi_callback_info info) {
  napi_value argv[1];
  int32_t fd;
  if (get_args(env, info, 1, argv) < 0 || get_fd(env, argv[0], &fd) < 0) return NULL;
  close(fd);
  return NULL;
}

NAPI_MODULE_INIT() {
  static const struct { const char *name; napi_callback fn; } fns[] = {
    { "chipInfo", chip_info }, { "lineInfos", line_infos }, { "request", request },
    { "getValue", get_value }, { "setValue", set_value }, { "release", release_line },
  };
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    napi_value fn;
    if (napi_create_function(env, fns[i].name, NAPI_AUTO_LENGTH, fns[i].fn, NULL, &fn) != napi_ok) return NULL;
    if (napi_set_named_property(env, exports, fns[i].name, fn) != napi_ok) return NULL;
  }
  return exports;
}
