// A shared library that is not a weir library: no entry points.
extern "C" int not_weir_answer() {
  return 42;
}
