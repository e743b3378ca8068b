package com.example.demo;

import android.os.Handler;
import android.os.Looper;
import android.os.Message;
import android.os.SystemClock;
import android.view.Choreographer;
import com.jankprobe.JankProbe;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;

/**
 * The demo "app". Its main thread does what an Application does at start on a phone: prepare the main
 * Looper, System.loadLibrary("jankprobe") (JNI_OnLoad runs with this app's class loader), hand
 * JankProbe.start the remote flag (a JSON file from tools/demo/config), then loop: touches from the
 * InputChannel, a feed ticker, idle handlers. With faults on, a script plays four faults and one remote
 * flag update; see README "What ./run demo shows".
 */
public final class DemoApp {
  /** Script times, ms after the main loop started. */
  static final long ARM_SLOW_CLICK_AT = 1500;
  static final long ARM_SLOW_IDLE_AT = 3000;
  static final long LEAK_BARRIER_AT = 4500;
  static final long IDLE_OFF_AT = 7000;
  static final long IDLE_ON_AT = 8000;
  static final long ARM_STUCK_AT = 8500;
  static final long COOL_DOWN_MS = 1500;     // after the stuck message, before the end
  static final long SAFETY_END_AT = 30000;   // ends the run even if a fault never got its touch

  private static String configDir;
  private static String outDir;
  private static boolean withJankprobe;
  private static boolean withFaults;
  private static long durationMs;
  private static long warmupMs;
  private static String startConfig = "demo.json";
  private static boolean noopPrinter;

  // The in-process A/B benchmark (benchAB); abSlices == 0 outside it.
  private static long abSettleMs;  // after each flag switch, before a slice is measured
  private static final int[] AB_ORDER = {1, 0, 0, 1};  // on, off, off, on: a linear drift cancels per group
  private static final int AB_FIELDS = 8;
  private static String abOnConfig;
  private static String abOffConfig;
  private static int abSlices;
  private static long abSliceMs;
  private static long[] abResult;
  private static final long[] abBefore = new long[5];
  private static final long[] abNow = new long[5];
  private static long abWallBefore;
  private static long abTouchesBefore;

  private static Handler handler;       // ordinary (synchronous) messages
  private static Handler scriptHandler; // the script's steps are asynchronous: the leaked barrier must not hold them
  private static long t0;
  private static long cpuAtStart;
  private static long measureFromMs;  // uptime of the measured window's start
  private static final long[] result = new long[6];
  private static boolean ended;
  private static int startRc;
  private static FeedTicker ticker;
  private static HousekeepingIdleHandler housekeeping;
  private static TouchView view;

  private DemoApp() {}

  /**
   * Runs the app on a new "main" thread and returns when its loop ended:
   * {JankProbe.start rc (0 when off), main-thread CPU ns, wall ns, clicks, ticker runs, input errors}.
   */
  public static long[] run(String configDirectory, String outDirectory, boolean jankprobe, boolean faults,
                           long runMs) throws InterruptedException {
    configDir = configDirectory;
    outDir = outDirectory;
    withJankprobe = jankprobe;
    withFaults = faults;
    durationMs = runMs;
    final Thread main = new Thread(new Runnable() {
      @Override
      public void run() { mainThread(); }
    }, "main");
    main.start();
    main.join();
    return result;
  }

  /**
   * The benchmark's run: no faults, the remote flag {@code config} from the config directory (jankprobe
   * on) or none (off), optionally the app's own do-nothing Printer on the main Looper (the reference line:
   * what Looper's two dispatch strings per message cost any Printer-based monitor). The figures cover
   * {@code runMs} after a warm-up of {@code warmMs} (class loading, the interpreter's first passes).
   */
  public static long[] bench(String configDirectory, String config, boolean jankprobe, boolean appPrinter,
                             long warmMs, long runMs) throws InterruptedException {
    startConfig = config;
    noopPrinter = appPrinter;
    warmupMs = warmMs;
    return run(configDirectory, "", jankprobe, false, runMs);
  }

  /**
   * The in-process A/B benchmark: one JVM, jankprobe loaded and started with {@code onConfig}; after a
   * warm-up of {@code warmMs} (in which the flag is switched off and on once, so that both paths are loaded
   * and compiled), {@code slices} slices alternate between {@code onConfig} and {@code offConfig} (every
   * monitor off) through JankProbe.configure, the remote-flag path, in groups of four: on, off, off, on.
   * Each slice applies its flag, lets it settle {@code settleMs} (hooks going in or out, the looper
   * monitor's frame ticker running until it parks), then measures
   * {@code sliceMs} of the unchanged app. Returns AB_FIELDS longs per slice: {on ? 1 : 0, main-thread CPU
   * ns, wall ns, instructions, cycles, touches finished, user-mode instructions, user-mode cycles}
   * (instructions and cycles -1 when not counted; the first pair counts kernel mode too where allowed).
   * Unlike separate processes, both sides share the JVM, its JIT state, heap and the host's slow drift.
   */
  public static long[] benchAB(String configDirectory, String onConfig, String offConfig, long warmMs,
                               long settleMs, long sliceMs, int slices) throws InterruptedException {
    startConfig = onConfig;
    abSettleMs = settleMs;
    abOnConfig = onConfig;
    abOffConfig = offConfig;
    abSliceMs = sliceMs;
    abSlices = slices - slices % AB_ORDER.length;
    if (abSlices <= 0) throw new IllegalArgumentException("benchAB needs at least " + AB_ORDER.length + " slices");
    abResult = new long[abSlices * AB_FIELDS];
    warmupMs = warmMs;
    run(configDirectory, "", true, false, 0);
    return abResult;
  }

  private static void scheduleAB() {
    final String counted = DemoHost.openCounters();
    DemoHost.log("ab: hardware counters: " + counted);
    final String on = readConfig(abOnConfig);
    final String off = readConfig(abOffConfig);
    // Warm-up: off and on once, then the rest of the warm-up with the flag on.
    at(warmupMs / 3, new Runnable() {
      @Override
      public void run() { configureOrDie(off); }
    });
    at(2 * warmupMs / 3, new Runnable() {
      @Override
      public void run() { configureOrDie(on); }
    });
    final long step = abSettleMs + abSliceMs;
    for (int i = 0; i < abSlices; i++) {
      final int slice = i;
      final boolean isOn = AB_ORDER[i % AB_ORDER.length] == 1;
      final long sliceStart = warmupMs + i * step;
      at(sliceStart, new Runnable() {
        @Override
        public void run() {
          if (slice > 0) endSlice(slice - 1);
          configureOrDie(isOn ? on : off);
        }
      });
      at(sliceStart + abSettleMs, new Runnable() {
        @Override
        public void run() { startSlice(slice, isOn); }
      });
    }
    at(warmupMs + abSlices * step, new Runnable() {
      @Override
      public void run() {
        endSlice(abSlices - 1);
        end();
      }
    });
  }

  private static void configureOrDie(String config) {
    final int rc = JankProbe.configure(config);
    if (rc != 0) throw new IllegalStateException("configure() = " + rc + ": " + JankProbe.lastError());
  }

  private static void startSlice(int slice, boolean isOn) {
    abResult[slice * AB_FIELDS] = isOn ? 1 : 0;
    abTouchesBefore = InputReceiver.finished();
    abWallBefore = System.nanoTime();
    DemoHost.counters(abBefore);
  }

  private static void endSlice(int slice) {
    DemoHost.counters(abNow);
    final long wall = System.nanoTime() - abWallBefore;
    final int at = slice * AB_FIELDS;
    abResult[at + 1] = abNow[0] - abBefore[0];
    abResult[at + 2] = wall;
    abResult[at + 3] = abNow[1] < 0 ? -1 : abNow[1] - abBefore[1];
    abResult[at + 4] = abNow[2] < 0 ? -1 : abNow[2] - abBefore[2];
    abResult[at + 5] = InputReceiver.finished() - abTouchesBefore;
    abResult[at + 6] = abNow[3] < 0 ? -1 : abNow[3] - abBefore[3];
    abResult[at + 7] = abNow[4] < 0 ? -1 : abNow[4] - abBefore[4];
  }

  static String readConfig(String name) {
    try {
      return new String(Files.readAllBytes(Paths.get(configDir, name)), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read remote flag " + name + ": " + e);
    }
  }

  private static void mainThread() {
    Looper.prepareMainLooper();
    final Looper looper = Looper.myLooper();
    // A UI app draws its first frame through Choreographer (ViewRootImpl) before anything else, so the
    // framework's Choreographer and its vsync source run in every variant, with or without jankprobe;
    // the looper monitor's frame ticker then adds only its own callbacks, as it would on a phone.
    Choreographer.getInstance().postFrameCallback(new Choreographer.FrameCallback() {
      @Override
      public void doFrame(long frameTimeNanos) {}
    });
    handler = new Handler(looper);
    if (noopPrinter) looper.setMessageLogging(new NoopPrinter());
    scriptHandler = Handler.createAsync(looper);
    // The app reads its remote flag whether jankprobe ends up on or not (so a benchmark's "off" run does
    // the same work, and the flag's file reading is not charged to jankprobe).
    final String startFlag = readConfig(startConfig);
    if (withJankprobe) {
      System.loadLibrary("jankprobe");
      JankProbe.setListener(new JankProbe.ReportListener() {
        @Override
        public void onReport(String json) { DemoHost.onReport(json); }
      });
      startRc = JankProbe.start(startFlag);
      if (startRc != 0) DemoHost.log("JankProbe.start failed (" + startRc + "): " + JankProbe.lastError());
      DemoHost.status("start", JankProbe.status());
    }
    housekeeping = new HousekeepingIdleHandler();
    Looper.myQueue().addIdleHandler(housekeeping);
    view = new TouchView(handler);
    InputReceiver.attach(looper, view);
    ticker = new FeedTicker(handler);
    ticker.start();
    t0 = SystemClock.uptimeMillis();
    cpuAtStart = DemoHost.threadCpuNs();
    if (abSlices > 0) {
      scheduleAB();
    } else if (withFaults) {
      scheduleScript();
      at(SAFETY_END_AT, new Runnable() {
        @Override
        public void run() {
          DemoHost.log("script: safety end reached (a fault never got its touch)");
          end();
        }
      });
    } else {
      measureFromMs = t0;
      if (warmupMs > 0) {
        at(warmupMs, new Runnable() {
          @Override
          public void run() {
            measureFromMs = SystemClock.uptimeMillis();
            cpuAtStart = DemoHost.threadCpuNs();
          }
        });
      }
      at(warmupMs + durationMs, new Runnable() {
        @Override
        public void run() { end(); }
      });
    }
    Looper.loop();
    if (withJankprobe) JankProbe.stop();  // queued reports are delivered before this returns
  }

  private static void at(long ms, Runnable step) {
    scriptHandler.sendMessageAtTime(Message.obtain(scriptHandler, step), t0 + ms);
  }

  private static void scheduleScript() {
    at(ARM_SLOW_CLICK_AT, new Runnable() {
      @Override
      public void run() {
        DemoHost.log("script: fault 1 armed: the next click handler is slow");
        Faults.armSlowClick();
      }
    });
    at(ARM_SLOW_IDLE_AT, new Runnable() {
      @Override
      public void run() {
        DemoHost.log("script: fault 2 armed: a slow IdleHandler will delay the next DOWN");
        Faults.armSlowIdle();
      }
    });
    at(LEAK_BARRIER_AT, new Runnable() {
      @Override
      public void run() {
        final int token = Looper.myQueue().postSyncBarrier();
        DemoHost.log("script: fault 3: sync barrier " + token + " posted and leaked (ordinary messages stop)");
      }
    });
    at(IDLE_OFF_AT, new Runnable() {
      @Override
      public void run() { applyFlag("idle_off.json", "idle off"); }
    });
    at(IDLE_ON_AT, new Runnable() {
      @Override
      public void run() { applyFlag("demo.json", "idle on again"); }
    });
    at(ARM_STUCK_AT, new Runnable() {
      @Override
      public void run() {
        DemoHost.log("script: fault 4 armed: a message will be stuck " + Faults.STUCK_MS + " ms after the next DOWN");
        Faults.armStuckMessage();
      }
    });
  }

  /** Called by ReportUploader's message once it is done. */
  static void stuckMessageDone() {
    DemoHost.log("script: stuck message finished; ending in " + COOL_DOWN_MS + " ms");
    at(SystemClock.uptimeMillis() - t0 + COOL_DOWN_MS, new Runnable() {
      @Override
      public void run() { end(); }
    });
  }

  private static void applyFlag(String file, String phase) {
    if (!withJankprobe) return;
    final int rc = JankProbe.configure(readConfig(file));
    DemoHost.log("script: remote flag update " + file + " -> configure() = " + rc
        + (rc != 0 ? " (" + JankProbe.lastError() + ")" : ""));
    DemoHost.status(phase, JankProbe.status());
  }

  private static void end() {
    if (ended) return;
    ended = true;
    // The memory a running app pays for: taken before anything is stopped, exported or asked for status
    // (JankProbe.stop() after the loop would release what the monitors hold and show less).
    DemoHost.snapshot("running");
    result[0] = startRc;
    result[1] = DemoHost.threadCpuNs() - cpuAtStart;
    result[2] = (SystemClock.uptimeMillis() - (withFaults ? t0 : measureFromMs)) * 1000000L;
    result[3] = view.clicks();
    result[4] = ticker.ticks();
    result[5] = InputReceiver.consumeErrors();
    if (withJankprobe) {
      DemoHost.status("end", JankProbe.status());
      if (outDir != null && !outDir.isEmpty()) {  // benchmark runs export nothing (no string building either)
        export(outDir + "/trace.json", JankProbe.EXPORT_CHROME_TRACE);
        export(outDir + "/reports.jsonl", JankProbe.EXPORT_JSONL);
      }
    }
    Looper.myLooper().quit();
  }

  private static void export(String path, int format) {
    if (outDir == null || outDir.isEmpty()) return;
    final int rc = JankProbe.export(path, format);
    if (rc != 0) DemoHost.log("export " + path + " failed (" + rc + "): " + JankProbe.lastError());
  }
}
