// libtessera.so is made of the core static libraries, linked whole; CMake wants one source file.
