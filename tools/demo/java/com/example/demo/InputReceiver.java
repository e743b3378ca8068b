package com.example.demo;

import android.os.Handler;
import android.os.Looper;
import android.os.Message;
import android.os.SystemClock;
import java.util.ArrayList;

/**
 * The app side of the InputChannel, shaped like Android's InputEventReceiver + Choreographer:
 * - the launcher's fd watcher calls onFdReadable() when the channel has data (on a phone the Looper's
 *   epoll does this inside nativePollOnce); that posts an asynchronous "consume" message to the front of
 *   the main queue, so reading happens on the main thread between messages;
 * - consume() reads events (recvfrom in libinput.so) and, like InputConsumer, hands out a DOWN or UP on
 *   its own: a batch ends after one;
 * - the batch waits for the next frame (an asynchronous message at the next 16 ms vsync), where the view
 *   gets them and each is finished (sendto in libinput.so) after it was handled; only then is the channel
 *   read again. Between the read and the frame the queue is idle, which is where IdleHandlers run and can
 *   delay a touch.
 */
final class InputReceiver {
  static final long FRAME_MS = 16;

  private static Handler asyncHandler;
  private static TouchView view;
  private static final ArrayList<TouchEvent> pending = new ArrayList<TouchEvent>();
  private static boolean frameScheduled;
  private static final long[] out = new long[3];
  private static volatile int consumeErrors;
  private static long finished;  // main thread only

  /** Called on the main thread during app start-up. */
  static void attach(Looper looper, TouchView v) {
    asyncHandler = Handler.createAsync(looper);
    view = v;
    // The watcher may have seen the channel readable before there was a handler to tell: look once now
    // (an extra consume finds nothing and only re-arms the watcher).
    asyncHandler.sendMessageAtFrontOfQueue(Message.obtain(asyncHandler, CONSUME));
  }

  static int consumeErrors() { return consumeErrors; }

  /** Touches finished so far (main thread). */
  static long finished() { return finished; }

  /** The fd watcher's thread: the channel became readable. */
  static void onFdReadable() {
    final Handler h = asyncHandler;
    if (h != null) h.sendMessageAtFrontOfQueue(Message.obtain(h, CONSUME));
  }

  private static final Runnable CONSUME = new Runnable() {
    @Override
    public void run() { consumeBatch(); }
  };

  private static final Runnable FRAME = new Runnable() {
    @Override
    public void run() { doFrame(); }
  };

  private static void consumeBatch() {
    for (;;) {
      final int rc = DemoHost.consume(out);
      if (rc <= 0) {
        if (rc < 0 && consumeErrors++ == 0) DemoHost.log("input: consume failed (" + rc + ")");
        break;
      }
      final TouchEvent e = new TouchEvent((int) out[0], (int) out[1], out[2]);
      pending.add(e);
      view.onRead(e);
      if (e.action != TouchEvent.ACTION_MOVE) break;  // DOWN and UP are not batched with what follows
    }
    if (pending.isEmpty()) {
      DemoHost.inputDrained();
      return;
    }
    if (!frameScheduled) {
      frameScheduled = true;
      if (view.takeIdleWorkBeforeFrame()) {
        // The read registered an IdleHandler that must run before this batch's frame. On a busy (or
        // loaded) main thread the next vsync may already be due when the queue is next looked at, so the
        // queue would never go idle in between; IdleHandlers run in registration order, so asking for the
        // frame from one registered after it orders the two whatever the load.
        Looper.myQueue().addIdleHandler(() -> {
          scheduleFrame();
          return false;
        });
      } else {
        scheduleFrame();
      }
    }
  }

  private static void scheduleFrame() {
    final long now = SystemClock.uptimeMillis();
    final long vsync = (now / FRAME_MS + 1) * FRAME_MS;
    asyncHandler.sendMessageAtTime(Message.obtain(asyncHandler, FRAME), vsync);
  }

  private static void doFrame() {
    frameScheduled = false;
    for (int i = 0; i < pending.size(); i++) {
      final TouchEvent e = pending.get(i);
      view.onTouchEvent(e);
      DemoHost.finish(e.seq, e.consumeTime);
      finished++;
    }
    pending.clear();
    // Read again only now: what arrived while this batch waited for its frame is the next batch, so a
    // stall between a read and its frame delays exactly the events of that batch.
    DemoHost.inputDrained();
  }

  private InputReceiver() {}
}
