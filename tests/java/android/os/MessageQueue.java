package android.os;

import java.util.ArrayList;

/**
 * Stand-in for the legacy android.os.MessageQueue (every release up to 16): a singly linked list of
 * messages ordered by `when`, guarded by the queue's own monitor, with sync barriers (messages without a
 * target, token in arg1) that hold back synchronous messages while asynchronous ones pass, and IdleHandlers
 * that run when the queue is empty or its head lies in the future.
 *
 * next() follows AOSP's structure: wait outside the lock in nativePollOnce (the host libutils.so fixture,
 * tests/fixtures/libutils: epoll_wait on an epoll fd with a wake eventfd, called from libutils.so as on a
 * phone; nativeWake writes the eventfd), then under the lock pick the first message (skipping to the first asynchronous one behind a
 * barrier), else snapshot the idle handlers into mPendingIdleHandlers and run them outside the lock,
 * removing those whose queueIdle() returned false.
 *
 * The build derives variants of this file (tests/jvm/jvm.cmake): one with mMessages / mIdleHandlers
 * renamed (a device where the monitors' fields do not exist) and one where mMessages is always null (the
 * Android 17 lock-free queue). The comment marker below is where a variant adds fields.
 *
 * Without the fixture (a JVM started with neither java.library.path nor the build tree holding it) the
 * queue waits on a private Java lock instead and NATIVE_POLL_ERROR says why.
 */
public final class MessageQueue {
  /** Runs when the queue has nothing due; return false to be removed. */
  public interface IdleHandler {
    boolean queueIdle();
  }

  private final boolean mQuitAllowed;
  Message mMessages;
  private final ArrayList<IdleHandler> mIdleHandlers = new ArrayList<IdleHandler>();
  private IdleHandler[] mPendingIdleHandlers;
  private boolean mQuitting;
  private boolean mBlocked;
  private int mNextBarrierToken;
  /*@VARIANT_FIELDS@*/

  /** null when the queues wait in libutils.so's epoll_wait, else why they wait on a Java lock. */
  public static final String NATIVE_POLL_ERROR = loadUtils();

  private long mPtr;  // the native looper (libutils), 0 after dispose or without the library

  // The Java fallback for nativePollOnce / nativeWake: a sticky wake flag and a timed wait.
  private final Object mPollLock = new Object();
  private boolean mWakePending;

  MessageQueue(boolean quitAllowed) {
    mQuitAllowed = quitAllowed;
    if (NATIVE_POLL_ERROR == null) mPtr = nativeInit();
  }

  private static native long nativeInit();
  private static native void nativeDestroy(long ptr);
  private native void nativePollOnce(long ptr, int timeoutMillis);
  private static native void nativeWake(long ptr);

  // System.loadLibrary("utils") as the framework has it loaded; else the fixture in the build tree, found
  // from the stand-ins jar upwards (build/java/x.jar or build/tests/jvm/x.jar -> build/tests/fixtures/...).
  private static String loadUtils() {
    String first;
    try {
      System.loadLibrary("utils");
      return null;
    } catch (Throwable t) {
      first = String.valueOf(t.getMessage());
    }
    try {
      java.io.File dir = new java.io.File(MessageQueue.class.getProtectionDomain().getCodeSource().getLocation().toURI())
          .getParentFile();
      for (int up = 0; dir != null && up < 4; up++, dir = dir.getParentFile()) {
        java.io.File lib = new java.io.File(dir, "tests/fixtures/libutils/libutils.so");
        if (lib.isFile()) {
          System.load(lib.getAbsolutePath());
          return null;
        }
      }
    } catch (Throwable t) {
      return "libutils.so: " + first + "; from the build tree: " + t;
    }
    return "libutils.so: " + first + "; not in the build tree either";
  }

  public boolean isIdle() {
    synchronized (this) {
      final long now = SystemClock.uptimeMillis();
      return mMessages == null || now < mMessages.when;
    }
  }

  public void addIdleHandler(IdleHandler handler) {
    if (handler == null) throw new NullPointerException("Can't add a null IdleHandler");
    synchronized (this) {
      mIdleHandlers.add(handler);
    }
  }

  public void removeIdleHandler(IdleHandler handler) {
    synchronized (this) {
      mIdleHandlers.remove(handler);
    }
  }

  private void pollOnce(int timeoutMillis) {
    final long ptr = mPtr;  // only next() (this thread) clears it
    if (ptr != 0) {
      nativePollOnce(ptr, timeoutMillis);
      return;
    }
    synchronized (mPollLock) {
      try {
        if (!mWakePending) {
          if (timeoutMillis < 0) {
            mPollLock.wait();
          } else if (timeoutMillis > 0) {
            mPollLock.wait(timeoutMillis);
          }
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      mWakePending = false;
    }
  }

  // Callers hold the queue's lock, so dispose() (also under it) cannot free the looper meanwhile.
  private void wake() {
    if (mPtr != 0) {
      nativeWake(mPtr);
      return;
    }
    synchronized (mPollLock) {
      mWakePending = true;
      mPollLock.notifyAll();
    }
  }

  private void dispose() {
    if (mPtr != 0) {
      nativeDestroy(mPtr);
      mPtr = 0;
    }
  }

  Message next() {
    int pendingIdleHandlerCount = -1;  // -1 only during the first iteration
    int nextPollTimeoutMillis = 0;
    for (;;) {
      pollOnce(nextPollTimeoutMillis);
      synchronized (this) {
        final long now = SystemClock.uptimeMillis();
        Message prevMsg = null;
        Message msg = mMessages;
        if (msg != null && msg.target == null) {
          // A barrier: find the next asynchronous message.
          do {
            prevMsg = msg;
            msg = msg.next;
          } while (msg != null && !msg.isAsynchronous());
        }
        if (msg != null) {
          if (now < msg.when) {
            nextPollTimeoutMillis = (int) Math.min(msg.when - now, Integer.MAX_VALUE);
          } else {
            mBlocked = false;
            if (prevMsg != null) {
              prevMsg.next = msg.next;
            } else {
              mMessages = msg.next;
            }
            msg.next = null;
            msg.markInUse();
            return msg;
          }
        } else {
          nextPollTimeoutMillis = -1;
        }
        if (mQuitting) {
          dispose();
          return null;
        }

        // Idle handlers run only on the first pass of an empty (or not yet due) queue.
        if (pendingIdleHandlerCount < 0 && (mMessages == null || now < mMessages.when)) {
          pendingIdleHandlerCount = mIdleHandlers.size();
        }
        if (pendingIdleHandlerCount <= 0) {
          mBlocked = true;
          continue;
        }
        if (mPendingIdleHandlers == null) {
          mPendingIdleHandlers = new IdleHandler[Math.max(pendingIdleHandlerCount, 4)];
        }
        mPendingIdleHandlers = mIdleHandlers.toArray(mPendingIdleHandlers);
      }

      for (int i = 0; i < pendingIdleHandlerCount; i++) {
        final IdleHandler idler = mPendingIdleHandlers[i];
        mPendingIdleHandlers[i] = null;  // release the reference to the handler
        boolean keep = false;
        try {
          keep = idler.queueIdle();
        } catch (Throwable t) {
          System.err.println("MessageQueue: IdleHandler threw: " + t);
        }
        if (!keep) {
          synchronized (this) {
            mIdleHandlers.remove(idler);
          }
        }
      }
      pendingIdleHandlerCount = 0;
      // An idle handler may have posted a message: look again without waiting.
      nextPollTimeoutMillis = 0;
    }
  }

  void quit(boolean safe) {
    if (!mQuitAllowed) throw new IllegalStateException("Main thread not allowed to quit.");
    synchronized (this) {
      if (mQuitting) return;
      mQuitting = true;
      if (safe) {
        removeAllFutureMessagesLocked();
      } else {
        mMessages = null;
      }
      wake();
    }
  }

  /** @hide: posts a barrier now; returns its token (what removeSyncBarrier takes). */
  public int postSyncBarrier() { return postSyncBarrier(SystemClock.uptimeMillis()); }

  private int postSyncBarrier(long when) {
    synchronized (this) {
      final int token = mNextBarrierToken++;
      final Message msg = Message.obtain();
      msg.markInUse();
      msg.when = when;
      msg.arg1 = token;
      Message prev = null;
      Message p = mMessages;
      if (when != 0) {
        while (p != null && p.when <= when) {
          prev = p;
          p = p.next;
        }
      }
      if (prev != null) {
        msg.next = p;
        prev.next = msg;
      } else {
        msg.next = p;
        mMessages = msg;
      }
      return token;
    }
  }

  /** @hide: throws IllegalStateException if no barrier has this token. */
  public void removeSyncBarrier(int token) {
    synchronized (this) {
      Message prev = null;
      Message p = mMessages;
      while (p != null && (p.target != null || p.arg1 != token)) {
        prev = p;
        p = p.next;
      }
      if (p == null) {
        throw new IllegalStateException("The specified message queue synchronization barrier token has not been posted or has already been removed.");
      }
      final boolean needWake;
      if (prev != null) {
        prev.next = p.next;
        needWake = false;
      } else {
        mMessages = p.next;
        needWake = mMessages == null || mMessages.target != null;
      }
      p.recycleUnchecked();
      if (needWake && !mQuitting) wake();
    }
  }

  boolean enqueueMessage(Message msg, long when) {
    if (msg.target == null) throw new IllegalArgumentException("Message must have a target.");
    synchronized (this) {
      if (msg.isInUse()) throw new IllegalStateException(msg + " This message is already in use.");
      if (mQuitting) return false;
      msg.markInUse();
      msg.when = when;
      Message p = mMessages;
      boolean needWake;
      if (p == null || when == 0 || when < p.when) {
        msg.next = p;
        mMessages = msg;
        needWake = mBlocked;
      } else {
        // Wake only if a barrier at the head holds back everything and this is the earliest async message.
        needWake = mBlocked && p.target == null && msg.isAsynchronous();
        Message prev;
        for (;;) {
          prev = p;
          p = p.next;
          if (p == null || when < p.when) break;
          if (needWake && p.isAsynchronous()) needWake = false;
        }
        msg.next = p;
        prev.next = msg;
      }
      if (needWake) wake();
    }
    return true;
  }

  boolean hasMessages(Handler h, int what, Object object) {
    if (h == null) return false;
    synchronized (this) {
      for (Message p = mMessages; p != null; p = p.next) {
        if (p.target == h && p.what == what && (object == null || p.obj == object)) return true;
      }
      return false;
    }
  }

  boolean hasMessages(Handler h, Runnable r, Object object) {
    if (h == null) return false;
    synchronized (this) {
      for (Message p = mMessages; p != null; p = p.next) {
        if (p.target == h && p.callback == r && (object == null || p.obj == object)) return true;
      }
      return false;
    }
  }

  void removeMessages(Handler h, int what, Object object) {
    if (h == null) return;
    synchronized (this) {
      removeMatchingLocked(h, what, null, object, true, false);
    }
  }

  void removeMessages(Handler h, Runnable r, Object object) {
    if (h == null || r == null) return;
    synchronized (this) {
      removeMatchingLocked(h, 0, r, object, false, true);
    }
  }

  void removeCallbacksAndMessages(Handler h, Object object) {
    if (h == null) return;
    synchronized (this) {
      removeMatchingLocked(h, 0, null, object, false, false);
    }
  }

  private void removeMatchingLocked(Handler h, int what, Runnable r, Object object, boolean byWhat, boolean byCallback) {
    Message prev = null;
    Message p = mMessages;
    while (p != null) {
      final Message n = p.next;
      final boolean match = p.target == h && (!byWhat || p.what == what) && (!byCallback || p.callback == r)
          && (object == null || p.obj == object);
      if (match) {
        if (prev == null) {
          mMessages = n;
        } else {
          prev.next = n;
        }
        p.recycleUnchecked();
      } else {
        prev = p;
      }
      p = n;
    }
  }

  private void removeAllFutureMessagesLocked() {
    final long now = SystemClock.uptimeMillis();
    Message prev = null;
    Message p = mMessages;
    while (p != null && p.when <= now) {
      prev = p;
      p = p.next;
    }
    if (prev == null) {
      mMessages = null;
    } else {
      prev.next = null;
    }
  }
}
