# The process event clock (hook/event_clock.h): its bound against clock_gettime, its fallbacks, one
# calibration shared by the monitors, and what the input monitor's status says of it (host libinput.so).
jp_add_gtest(event_clock_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/event_clock_test.cc
             LIBS jp_input jp_hook jp_plt jp_libinput TIMEOUT 60)
