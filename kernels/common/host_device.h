#pragma once
// Element-wise maths shared by the CPU references and the CUDA kernels, so both round alike.
#if defined(__CUDACC__)
#define ORRERY_HD __host__ __device__
#else
#define ORRERY_HD
#endif
