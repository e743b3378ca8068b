package com.example.demo;

import android.os.SystemClock;

/** The click handler. Normally cheap; once per run (fault 1) it does slow work on the main thread. */
final class CheckoutButton {
  private long total;

  void onClick(int moves) {
    total += moves;
    if (Faults.takeSlowClick()) {
      DemoHost.log("fault 1: CheckoutButton.onClick runs " + Faults.SLOW_CLICK_MS + " ms before the UP is finished");
      recomputeCart(Faults.SLOW_CLICK_MS);
    }
  }

  /** Stands for work that does not belong on the main thread (disk, a big layout, a lock). */
  private static void recomputeCart(long ms) { SystemClock.sleep(ms); }
}
