package com.example.demo;

/** One touch as the app's InputEventReceiver consumed it. Actions are MotionEvent's. */
final class TouchEvent {
  static final int ACTION_DOWN = 0;
  static final int ACTION_UP = 1;
  static final int ACTION_MOVE = 2;

  final int seq;
  final int action;
  final long consumeTime;

  TouchEvent(int seq, int action, long consumeTime) {
    this.seq = seq;
    this.action = action;
    this.consumeTime = consumeTime;
  }
}
