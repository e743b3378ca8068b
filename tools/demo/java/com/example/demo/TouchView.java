package com.example.demo;

import android.os.Handler;
import android.os.Looper;

/**
 * The app's one view: tracks the gesture and, on UP, "clicks" its button. It is also where the scripted
 * faults that ride on a touch are triggered, at the moment the touch has been read (see Faults).
 */
final class TouchView {
  private final CheckoutButton button = new CheckoutButton();
  private final Handler handler;
  private int moves;
  private int clicks;
  private boolean idleWorkBeforeFrame;

  TouchView(Handler handler) { this.handler = handler; }

  int clicks() { return clicks; }

  /** True once after a read that registered idle work which must run before this batch's frame. */
  boolean takeIdleWorkBeforeFrame() {
    final boolean was = idleWorkBeforeFrame;
    idleWorkBeforeFrame = false;
    return was;
  }

  /** The touch was just consumed, before the frame that handles it. */
  void onRead(TouchEvent e) {
    if (e.action != TouchEvent.ACTION_DOWN) return;
    if (Faults.takeSlowIdle()) {
      // An IdleHandler registered now runs before the frame that finishes this DOWN.
      Looper.myQueue().addIdleHandler(new PrefetchIdleHandler(Faults.SLOW_IDLE_MS));
      idleWorkBeforeFrame = true;
      DemoHost.log("fault 2: DOWN seq " + e.seq + " read; PrefetchIdleHandler registered ("
          + Faults.SLOW_IDLE_MS + " ms) runs before its frame");
    }
    if (Faults.takeStuckMessage()) {
      // A message posted now, due now, runs before the frame (which waits for the next vsync).
      handler.post(new ReportUploader(Faults.STUCK_MS));
      DemoHost.log("fault 4: DOWN seq " + e.seq + " read; ReportUploader posted (" + Faults.STUCK_MS
          + " ms on the main thread)");
    }
  }

  void onTouchEvent(TouchEvent e) {
    switch (e.action) {
      case TouchEvent.ACTION_DOWN:
        moves = 0;
        break;
      case TouchEvent.ACTION_MOVE:
        moves++;
        break;
      case TouchEvent.ACTION_UP:
        clicks++;
        button.onClick(moves);
        break;
      default:
        break;
    }
  }
}
