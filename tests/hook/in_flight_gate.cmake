# The owner-thread gate and the asymmetric fence under it (hook/): the hot paths of the input proxies, the
# looper's poll source and the idle timing enter through them without a locked instruction.
jp_add_gtest(in_flight_gate_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/in_flight_gate_test.cc LIBS jp_hook TIMEOUT 60)
