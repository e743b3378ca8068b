package com.example.app;

import android.os.MessageQueue;
import java.util.ArrayList;
import java.util.Collection;

/**
 * Another tool's list in MessageQueue.mIdleHandlers, modelled on Tencent Matrix's idle tracer: it keeps each
 * handler in a wrapper of its own and finds the wrapper again in remove(handler). A third party that wrapped
 * the wrappers would make remove(handler) miss.
 */
public final class ForeignIdleHandlerList extends ArrayList<MessageQueue.IdleHandler> {
  /** The tool's wrapper: runs the handler, and says which one it holds. */
  static final class Wrapped implements MessageQueue.IdleHandler {
    final MessageQueue.IdleHandler inner;

    Wrapped(MessageQueue.IdleHandler inner) { this.inner = inner; }

    @Override
    public boolean queueIdle() { return inner.queueIdle(); }
  }

  ForeignIdleHandlerList(Collection<MessageQueue.IdleHandler> existing) {
    for (MessageQueue.IdleHandler h : existing) add(h);
  }

  @Override
  public boolean add(MessageQueue.IdleHandler h) {
    return super.add(h instanceof Wrapped ? h : new Wrapped(h));
  }

  @Override
  public boolean remove(Object h) {
    for (int i = 0; i < size(); i++) {
      final MessageQueue.IdleHandler e = get(i);
      if (e == h || (e instanceof Wrapped && ((Wrapped) e).inner == h)) {
        super.remove(i);
        return true;
      }
    }
    return false;
  }

  /** The handlers themselves, for a plain list again. */
  ArrayList<MessageQueue.IdleHandler> unwrapped() {
    final ArrayList<MessageQueue.IdleHandler> out = new ArrayList<>();
    for (MessageQueue.IdleHandler e : this) out.add(e instanceof Wrapped ? ((Wrapped) e).inner : e);
    return out;
  }
}
