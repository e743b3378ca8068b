package com.example.app;

import android.os.MessageQueue.IdleHandler;
import com.jankprobe.TimingIdleHandlerList;
import java.util.Collections;

/**
 * For bench/idle_bench.cc: queueIdle() of a trivial handler called in a loop, either directly or through
 * the wrapper jankprobe's TimingIdleHandlerList puts around it (what MessageQueue.next() calls once the list
 * is swapped in). The difference per call is the idle monitor's cost on the main thread per handler call.
 */
public final class IdleBench {
  private static final CountingIdleHandler handler = new CountingIdleHandler();
  private static final IdleHandler timed =
      new TimingIdleHandlerList(Collections.<IdleHandler>singletonList(handler)).get(0);

  private IdleBench() {}

  /** Calls the handler n times (through the wrapper when {@code wrapped}); returns how many kept it. */
  public static int calls(int n, boolean wrapped) {
    final IdleHandler h = wrapped ? timed : handler;
    int kept = 0;
    for (int i = 0; i < n; i++) {
      if (h.queueIdle()) kept++;
    }
    return kept;
  }
}
