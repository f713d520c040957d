#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#define CAF_TEST_NO_MAIN
#include <doctest/doctest.h>

#include <caf/test/unit_test_impl.hpp>
