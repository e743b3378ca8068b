/* jankprobe PLT/GOT hook engine: redirect a module's imported function to a proxy by rewriting the
 * module's GOT slots. C ABI; safe to call from any thread.
 *
 * Proxy contract
 *   A proxy has the hooked function's exact prototype. It calls the previous target through the
 *   pointer the engine stored in *prev (read it atomically: __atomic_load_n(prev, __ATOMIC_ACQUIRE)).
 *   When a hook patched several modules whose slots held *different* previous targets (another tool
 *   hooked one of them first), *prev holds the first module's target and the per-module one is found
 *   with jp_plt_hook_prev_for(hook, __builtin_return_address(0)); JP_PLT_PREV does exactly that and
 *   costs one load and one branch when all previous targets agree (the usual case).
 *
 * Lifetime
 *   A handle stays valid for the life of the process: once a proxy is in a slot another thread may be
 *   inside it at any time, so nothing a proxy reads is ever freed. jp_plt_hook_remove() puts back every
 *   slot that still holds our proxy; a slot another tool patched after us keeps our proxy in its chain
 *   and the engine marks the hook inactive (jp_plt_hook_is_active() == 0) so the proxy can pass
 *   straight through. Re-installing the same (caller, symbol, proxy, prev) reuses the handle.
 */
#ifndef JANKPROBE_PLT_H_
#define JANKPROBE_PLT_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define JP_EXPORT __attribute__((visibility("default")))
#else
#define JP_EXPORT
#endif

typedef struct jp_plt_hook jp_plt_hook;

/* Status codes (negative) returned by jp_plt_hook_remove and reported through jp_plt_last_error. */
#define JP_PLT_OK 0
#define JP_PLT_ERR_INVALID_ARG (-1)
#define JP_PLT_ERR_NOT_FOUND (-2)      /* no module matched, or no matching module imports the symbol */
#define JP_PLT_ERR_MALFORMED_ELF (-3)  /* a module's dynamic section or relocations are inconsistent */
#define JP_PLT_ERR_MPROTECT (-4)       /* the slot's page could not be made writable */
#define JP_PLT_ERR_UNKNOWN_HOOK (-5)   /* remove of a handle that is not installed */
#define JP_PLT_ERR_NO_MEMORY (-6)
/* Positive result of jp_plt_hook_remove: done, but some slot was patched by another tool after us and
 * still reaches our proxy; the hook is inactive and must pass calls straight through. */
#define JP_PLT_REMOVED_STILL_CHAINED 1

/* Patch every GOT slot that `caller` modules have for imported function `symbol`.
 *   caller: a file name ("libinput.so": every loaded module with that base name), an absolute path,
 *           or NULL for every module except the one that contains jankprobe.
 *   symbol: "sendto", or "sendto@GLIBC_2.2.5" to match only that symbol version.
 * A file-name or path caller that is not loaded yet makes a pending hook: it is installed into the
 * module when it is dlopen'ed, before dlopen returns. jp_plt_hook_slot_count() says how many slots are
 * patched now. Returns NULL with jp_plt_last_error() set on failure. */
JP_EXPORT jp_plt_hook *jp_plt_hook_install(const char *caller, const char *symbol, void *proxy, void **prev);

/* Undo a hook. 0, JP_PLT_REMOVED_STILL_CHAINED, or a negative JP_PLT_ERR_* code. */
JP_EXPORT int jp_plt_hook_remove(jp_plt_hook *hook);

/* Number of GOT slots currently holding this hook's proxy (0 for a pending or removed hook). */
JP_EXPORT size_t jp_plt_hook_slot_count(const jp_plt_hook *hook);

/* 1 while the hook is installed (including pending), 0 after jp_plt_hook_remove. */
JP_EXPORT int jp_plt_hook_is_active(const jp_plt_hook *hook);

/* The previous target for a call whose return address is `return_address` (a proxy passes
 * __builtin_return_address(0)): the target the slot of the calling module held before us. */
JP_EXPORT void *jp_plt_hook_prev_for(const jp_plt_hook *hook, const void *return_address);

/* A readable reason for the last failure on this thread ("" if none). */
JP_EXPORT const char *jp_plt_last_error(void);

#ifdef __cplusplus
}
#endif

/* Use inside a proxy: JP_PLT_PREV(hook, prev_var) yields the target to call for this caller. A proxy
 * can run before jp_plt_hook_install has returned its handle (another thread calls through the slot
 * the moment it is written); while `hook` is still NULL the macro reads prev_var, which the engine sets
 * before writing any slot. */
#define JP_PLT_PREV(hook, prev_var)                                          \
  ((hook) != NULL ? jp_plt_hook_prev_for((hook), __builtin_return_address(0)) \
                  : __atomic_load_n(&(prev_var), __ATOMIC_ACQUIRE))

#endif /* JANKPROBE_PLT_H_ */
