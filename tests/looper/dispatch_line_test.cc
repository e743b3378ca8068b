// Looper's dispatch line as AOSP prints it, with the toString()s real handlers and callbacks produce.
#include "looper/dispatch_line.h"

#include <gtest/gtest.h>

namespace jp::looper {
namespace {

TEST(DispatchLineTest, HandlerWithRunnable) {
  DispatchNames n;
  ASSERT_TRUE(ParseDispatchLine(
      ">>>>> Dispatching to Handler (android.view.ViewRootImpl$ViewRootHandler) {3b4f2a1} "
      "com.example.app.SlowTask@1b6d3586: 0",
      &n));
  EXPECT_EQ(n.target, "android.view.ViewRootImpl$ViewRootHandler");
  EXPECT_EQ(n.callback, "com.example.app.SlowTask");
  EXPECT_TRUE(n.has_what);
  EXPECT_EQ(n.what, 0);
}

TEST(DispatchLineTest, NullCallbackAndNegativeWhat) {
  DispatchNames n;
  ASSERT_TRUE(ParseDispatchLine(">>>>> Dispatching to Handler (com.example.app.WorkHandler) {a} null: -42", &n));
  EXPECT_EQ(n.target, "com.example.app.WorkHandler");
  EXPECT_TRUE(n.callback.empty());
  EXPECT_EQ(n.what, -42);
}

TEST(DispatchLineTest, LambdaNamesLoseTheirPerRunParts) {
  DispatchNames n;
  ASSERT_TRUE(ParseDispatchLine(
      ">>>>> Dispatching to Handler (android.os.Handler) {5e2de80c} "
      "com.example.app.TestApp$$Lambda$14/0x0000000800c0b448@4e50df2e: 0",
      &n));
  EXPECT_EQ(n.callback, "com.example.app.TestApp$$Lambda$14");
  ASSERT_TRUE(ParseDispatchLine(
      ">>>>> Dispatching to Handler (android.os.Handler) {1} com.example.-$$Lambda$Foo$XyZ12@ab: 3", &n));
  EXPECT_EQ(n.callback, "com.example.-$$Lambda$Foo$XyZ12");
  EXPECT_EQ(n.what, 3);
}

TEST(DispatchLineTest, HandlerWithItsOwnToString) {
  DispatchNames n;
  ASSERT_TRUE(ParseDispatchLine(">>>>> Dispatching to MyHandler@77aa null: 5", &n));
  EXPECT_EQ(n.target, "MyHandler");
  EXPECT_EQ(n.what, 5);
}

TEST(DispatchLineTest, CutLineKeepsTargetAndCallback) {
  DispatchNames n;
  // A head + tail copy of a long line loses the middle and, when cut before it, the what.
  ASSERT_TRUE(ParseDispatchLine(">>>>> Dispatching to Handler (a.B) {1} c.D@ff", &n));
  EXPECT_EQ(n.target, "a.B");
  EXPECT_EQ(n.callback, "c.D");
  EXPECT_FALSE(n.has_what);
}

TEST(DispatchLineTest, OtherLinesAreRejected) {
  DispatchNames n;
  EXPECT_FALSE(ParseDispatchLine("<<<<< Finished to Handler (a.B) {1} null", &n));
  EXPECT_FALSE(ParseDispatchLine("", &n));
  EXPECT_FALSE(ParseDispatchLine(">>>>> Dispatch", &n));
}

TEST(DispatchLineTest, WhatOverflowIsNotAWhat) {
  DispatchNames n;
  ASSERT_TRUE(ParseDispatchLine(">>>>> Dispatching to Handler (a.B) {1} null: 99999999999999", &n));
  EXPECT_FALSE(n.has_what);
  EXPECT_EQ(n.target, "a.B");
}

}  // namespace
}  // namespace jp::looper
