/* jankprobe: main-thread lag monitor. The plugin's C API (the Java facade calls these through JNI).
 *
 * All functions are thread-safe. 0 means success; a negative JANKPROBE_ERR_* code plus
 * jankprobe_last_error() says what was wrong. A rejected call leaves the running state exactly as it was.
 */
#ifndef JANKPROBE_JANKPROBE_H_
#define JANKPROBE_JANKPROBE_H_

#include "jankprobe/plt.h"

#ifdef __cplusplus
extern "C" {
#endif

#define JANKPROBE_OK 0
#define JANKPROBE_ERR_CONFIG (-1)        /* the config JSON was rejected; nothing changed */
#define JANKPROBE_ERR_STATE (-2)         /* e.g. configure() or export() before start() */
#define JANKPROBE_ERR_IO (-3)            /* a file could not be written or mapped */
#define JANKPROBE_ERR_INVALID_ARG (-4)
#define JANKPROBE_ERR_MONITOR (-5)       /* a monitor could not be switched on; the others run */

#define JANKPROBE_EXPORT_CHROME_TRACE 1  /* Chrome Trace Event JSON: opens in Perfetto UI, chrome://tracing */
#define JANKPROBE_EXPORT_JSONL 2         /* one report per line */

/* Start with a config (remote flag + device facts, see docs/config.md). Starting an already started plugin
 * applies the config like jankprobe_configure. A config that samples this device out or disables the plugin
 * is still a success: the plugin stays idle and its status says why. */
JP_EXPORT int jankprobe_start(const char *config_json);

/* Apply a new remote flag at runtime: monitors switched off lose their hooks and threads, monitors switched on
 * install them, thresholds change in place. */
JP_EXPORT int jankprobe_configure(const char *config_json);

/* Remove every hook, stop every thread and timer. Reports and the timeline stay readable for export. */
JP_EXPORT void jankprobe_stop(void);

/* Write the timeline (Chrome trace) or the reports (JSON Lines) to `path`. */
JP_EXPORT int jankprobe_export(const char *path, int format);

/* A readable reason for the last failure on this thread ("" if none). */
JP_EXPORT const char *jankprobe_last_error(void);

/* Reports (JSON objects, see README "Report format") are delivered to fn on a thread that is never the
 * main thread and never a hooked path. NULL removes the listener. */
JP_EXPORT void jankprobe_set_report_listener(void (*fn)(const char *report_json, void *arg), void *arg);

/* A JSON object describing what runs and what does not and why (per monitor: "on", "off",
 * "disabled: <reason>"), the timeline's counters and the config's warnings. Valid until the next call on
 * this thread. */
JP_EXPORT const char *jankprobe_status(void);

#ifdef __cplusplus
}
#endif

#endif /* JANKPROBE_JANKPROBE_H_ */
