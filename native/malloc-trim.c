/*
 * qrvend-trim.node: malloc_trim(0) for the daemon (a Node-API addon; Node has no call for it).
 * glibc keeps the chunks a program frees and hands back to the system only the top of each heap;
 * freed memory in the middle stays resident. After a burst (a session, a Settlement drain, the
 * short-lived configuration worker at start) that is several MB of RSS (BENCHMARKS.md, memory):
 * malloc_trim(0) gives the whole free pages of every arena back (madvise DONTNEED).
 *
 * Called by src/daemon/malloc-trim.ts after a thread's quiet collection, when no vend or Start is
 * being served: it locks each arena in turn while it walks it.
 *
 *   trim() -> true when memory was given back
 *
 * Context-aware (NAPI_MODULE_INIT), so the payment worker can load it as well as the main thread.
 */
#include <malloc.h>
#include <node_api.h>

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value result;
  if (napi_get_boolean(env, malloc_trim(0) != 0, &result) != napi_ok) return NULL;
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, trim, NULL, &fn) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", fn) != napi_ok) return NULL;
  return exports;
}
