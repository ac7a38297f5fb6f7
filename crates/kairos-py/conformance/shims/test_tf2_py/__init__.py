"""geometry2's tf2_py tests import the extension as ``test_tf2_py._tf2_py`` (a copy CMake
builds for them); here it is kairos's ``tf2_py``."""
