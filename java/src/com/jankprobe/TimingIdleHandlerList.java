package com.jankprobe;

import android.os.MessageQueue.IdleHandler;
import java.util.ArrayList;
import java.util.Collection;

/**
 * The list jankprobe puts in place of MessageQueue.mIdleHandlers. MessageQueue only ever calls add, remove,
 * size and toArray on it, under its own monitor; every handler in here is a {@link Timed} wrapper, so the
 * queue's next() times each queueIdle() call without knowing it.
 *
 * Unlike a plain swap (Matrix's), the constructor keeps the handlers the app had already registered.
 * remove() accepts either the app's handler (removeIdleHandler) or the wrapper (next() removing a handler
 * whose queueIdle() returned false), so the queue's semantics are unchanged. The native side swaps the list
 * in and out under the queue's monitor; {@link #unwrapped()} gives the plain list to put back.
 */
public final class TimingIdleHandlerList extends ArrayList<IdleHandler> {
  private static final long serialVersionUID = 1L;

  /**
   * Around queueIdle(): the native side marks the call running at begin (a watchdog deadline catches it if
   * it overruns) and records it at end. nativeEnd returns the key under which the native side keeps this
   * handler's interned class name; passing it back next time spares reading the string on every call
   * (0: not known yet; a stale key is detected natively and the name read again).
   */
  private static native long nativeBegin();
  private static native int nativeEnd(long token, int nameKey, String handlerClass, boolean keep);

  /** One app handler, timed. Equal to its handler, so a plain list still finds it after the swap back. */
  static final class Timed implements IdleHandler {
    final IdleHandler handler;
    final String handlerClass;  // computed once: queueIdle() must stay cheap
    private int nameKey;        // from nativeEnd; only the thread running the queue's idle handlers uses it

    Timed(IdleHandler handler) {
      this.handler = handler;
      this.handlerClass = handler.getClass().getName();
    }

    @Override
    public boolean queueIdle() {
      final long token = nativeBegin();
      boolean keep = false;
      try {
        keep = handler.queueIdle();
        return keep;
      } finally {
        nameKey = nativeEnd(token, nameKey, handlerClass, keep);
      }
    }

    @Override
    public boolean equals(Object o) {
      if (o instanceof Timed) return ((Timed) o).handler == handler;
      return o == handler;
    }

    @Override
    public int hashCode() { return System.identityHashCode(handler); }

    @Override
    public String toString() { return "Timed(" + handler + ")"; }
  }

  /** Takes over the handlers already registered (the caller holds the queue's monitor). */
  public TimingIdleHandlerList(Collection<? extends IdleHandler> existing) {
    super(Math.max(4, existing == null ? 0 : existing.size()));
    if (existing != null) {
      for (IdleHandler h : existing) add(h);
    }
  }

  private static IdleHandler wrap(IdleHandler h) {
    return (h == null || h instanceof Timed) ? h : new Timed(h);
  }

  private static IdleHandler unwrap(IdleHandler h) {
    return h instanceof Timed ? ((Timed) h).handler : h;
  }

  @Override
  public boolean add(IdleHandler h) { return super.add(wrap(h)); }

  @Override
  public void add(int index, IdleHandler h) { super.add(index, wrap(h)); }

  @Override
  public IdleHandler set(int index, IdleHandler h) { return super.set(index, wrap(h)); }

  @Override
  public boolean addAll(Collection<? extends IdleHandler> c) {
    boolean changed = false;
    for (IdleHandler h : c) changed |= add(h);
    return changed;
  }

  /** Removes the entry for this handler, given either as the app's object or as its wrapper. */
  @Override
  public boolean remove(Object o) {
    for (int i = 0; i < size(); i++) {
      IdleHandler entry = get(i);
      if (entry == o || unwrap(entry) == o || (o instanceof Timed && ((Timed) o).handler == unwrap(entry))) {
        super.remove(i);
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean contains(Object o) {
    for (int i = 0; i < size(); i++) {
      IdleHandler entry = get(i);
      if (entry == o || unwrap(entry) == o) return true;
    }
    return false;
  }

  /** The app's handlers, in order, in a plain list (what goes back into the queue when switching off). */
  public ArrayList<IdleHandler> unwrapped() {
    ArrayList<IdleHandler> plain = new ArrayList<IdleHandler>(Math.max(4, size()));
    for (int i = 0; i < size(); i++) plain.add(unwrap(get(i)));
    return plain;
  }
}
