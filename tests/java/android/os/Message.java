package android.os;

/**
 * Stand-in for android.os.Message with the fields the monitors read by JNI (target, when, next, flags,
 * arg1 as the barrier token). A message whose target is null is a sync barrier. No recycling pool: the
 * monitors only read fields under the queue's lock, which a pool would not change.
 */
public final class Message {
  static final int FLAG_IN_USE = 1 << 0;
  static final int FLAG_ASYNCHRONOUS = 1 << 1;

  public int what;
  public int arg1;
  public int arg2;
  public Object obj;

  int flags;
  long when;
  Handler target;
  Runnable callback;
  Message next;

  public Message() {}

  public static Message obtain() { return new Message(); }

  public static Message obtain(Handler h) {
    Message m = obtain();
    m.target = h;
    return m;
  }

  public static Message obtain(Handler h, int what) {
    Message m = obtain(h);
    m.what = what;
    return m;
  }

  public static Message obtain(Handler h, Runnable callback) {
    Message m = obtain(h);
    m.callback = callback;
    return m;
  }

  public long getWhen() { return when; }
  public Handler getTarget() { return target; }
  public Runnable getCallback() { return callback; }
  public void setTarget(Handler target) { this.target = target; }

  public boolean isAsynchronous() { return (flags & FLAG_ASYNCHRONOUS) != 0; }

  public void setAsynchronous(boolean async) {
    if (async) {
      flags |= FLAG_ASYNCHRONOUS;
    } else {
      flags &= ~FLAG_ASYNCHRONOUS;
    }
  }

  boolean isInUse() { return (flags & FLAG_IN_USE) != 0; }
  void markInUse() { flags |= FLAG_IN_USE; }

  public void sendToTarget() { target.sendMessage(this); }

  /** Clears the message after dispatch (Android returns it to the pool here). */
  void recycleUnchecked() {
    flags = FLAG_IN_USE;
    what = 0;
    arg1 = 0;
    arg2 = 0;
    obj = null;
    when = 0;
    target = null;
    callback = null;
  }

  @Override
  public String toString() {
    return "{ when=" + when + " what=" + what + " arg1=" + arg1 + (target == null ? " barrier" : " target=" + target)
        + (isAsynchronous() ? " async" : "") + " }";
  }
}
