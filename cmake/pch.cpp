// Compiles core/include/orrery/pch.h once; every other target reuses the result.
