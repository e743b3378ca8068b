package com.jankprobe;

/**
 * The app-side facade of libjankprobe.so. Load the library at startup and start it with the remote flag:
 *
 * <pre>
 *   System.loadLibrary("jankprobe");             // JNI_OnLoad registers the natives below
 *   JankProbe.setListener(json -> upload(json));  // optional: reports arrive on a background thread
 *   int rc = JankProbe.start(remoteFlagJson);     // on the main thread: it becomes "the main thread"
 *   if (rc != 0) Log.w("jankprobe", JankProbe.lastError());
 * </pre>
 *
 * All logic lives in C++; this class only forwards. Every method is safe to call from any thread.
 */
public final class JankProbe {
  public static final int EXPORT_CHROME_TRACE = 1;
  public static final int EXPORT_JSONL = 2;

  /** Receives one report (a JSON object) per lag verdict, never on the main thread. */
  public interface ReportListener {
    void onReport(String reportJson);
  }

  private JankProbe() {}

  /** Starts (or re-configures) the monitor. 0 on success, else a negative code; see lastError(). */
  public static int start(String configJson) { return nativeStart(configJson); }

  /** Applies a new remote flag at runtime. A rejected flag changes nothing. */
  public static int configure(String configJson) { return nativeConfigure(configJson); }

  /** Removes every hook and stops every thread. */
  public static void stop() { nativeStop(); }

  /** Writes the timeline (EXPORT_CHROME_TRACE) or the reports (EXPORT_JSONL) to a file. */
  public static int export(String path, int format) { return nativeExport(path, format); }

  /** Why the last call on this thread failed. */
  public static String lastError() { return nativeLastError(); }

  /** What runs, what does not and why, as JSON. */
  public static String status() { return nativeStatus(); }

  /** null removes the listener. */
  public static void setListener(ReportListener listener) { nativeSetListener(listener); }

  private static native int nativeStart(String configJson);
  private static native int nativeConfigure(String configJson);
  private static native void nativeStop();
  private static native int nativeExport(String path, int format);
  private static native String nativeLastError();
  private static native String nativeStatus();
  private static native void nativeSetListener(ReportListener listener);
}
