package com.example.demo;

/**
 * The scripted faults that ride on a touch, armed by the script (main thread) and taken once by the code
 * that plays them (also the main thread). Durations are chosen well above the demo config's thresholds
 * (input.lag_ms 150, idle.lag_ms 200) and the stuck message above input.anr_ms 5000.
 */
final class Faults {
  static final long SLOW_CLICK_MS = 400;
  static final long SLOW_IDLE_MS = 350;
  static final long STUCK_MS = 6000;

  private static boolean slowClick;
  private static boolean slowIdle;
  private static boolean stuckMessage;

  static void armSlowClick() { slowClick = true; }
  static void armSlowIdle() { slowIdle = true; }
  static void armStuckMessage() { stuckMessage = true; }

  static boolean takeSlowClick() {
    final boolean armed = slowClick;
    slowClick = false;
    return armed;
  }

  static boolean takeSlowIdle() {
    final boolean armed = slowIdle;
    slowIdle = false;
    return armed;
  }

  static boolean takeStuckMessage() {
    final boolean armed = stuckMessage;
    stuckMessage = false;
    return armed;
  }

  private Faults() {}
}
