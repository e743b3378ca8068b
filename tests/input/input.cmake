# The touch and key latency monitor (input/): decoding per release, and end to end against the host
# libinput.so fixture (tests/fixtures/libinput.cmake).
jp_add_gtest(input_message_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_message_test.cc LIBS jp_input)
jp_add_gtest(input_monitor_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_monitor_test.cc
             LIBS jp_input jp_hook jp_plt jp_libinput TIMEOUT 120)
# Against the variant that imports only recvfrom + __sendto_chk.
jp_add_gtest(input_imports_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_imports_test.cc
             LIBS jp_input jp_hook jp_plt jp_libinput_bionic TIMEOUT 60)
# The hot path's building blocks on their own.
jp_add_gtest(pending_events_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/pending_events_test.cc LIBS jp_input TIMEOUT 60)
# The finished ring (the main thread's records, appended by the watchdog's drain): alone, and end to end.
jp_add_gtest(finished_ring_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/finished_ring_test.cc LIBS jp_input TIMEOUT 60)
jp_add_gtest(input_drain_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_drain_test.cc
             LIBS jp_input jp_hook jp_plt jp_libinput TIMEOUT 60)
jp_add_gtest(channel_table_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/channel_table_test.cc LIBS jp_input TIMEOUT 60)
# Which way the main thread's reads and FINISHED go (fast path or general) for each order of finishing.
jp_add_gtest(input_finish_order_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_finish_order_test.cc
             LIBS jp_input jp_hook jp_plt jp_libinput TIMEOUT 60)
# Where the tracker lives (the proxies' link-time address): its own process, nothing constructed before.
jp_add_gtest(input_tracker_storage_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_tracker_storage_test.cc
             LIBS jp_input jp_hook jp_plt TIMEOUT 60)
# The proxies' clock: the owner's copy of the event clock's anchor (stamps within the bound, refilled after
# its span, another thread's events leave it alone). Its own process: the copy is process-wide state.
jp_add_gtest(input_clock_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/input_clock_test.cc
             LIBS jp_input jp_hook jp_plt jp_libinput TIMEOUT 60)
