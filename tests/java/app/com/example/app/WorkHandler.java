package com.example.app;

import android.os.Handler;
import android.os.Looper;
import android.os.Message;
import java.util.concurrent.atomic.AtomicInteger;

/** An app Handler subclass: its class name is what a report shows as the target of its messages. */
public final class WorkHandler extends Handler {
  public final AtomicInteger handled = new AtomicInteger();

  public WorkHandler(Looper looper) { super(looper); }

  @Override
  public void handleMessage(Message msg) { handled.incrementAndGet(); }
}
