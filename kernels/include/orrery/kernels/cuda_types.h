#pragma once
// The two CUDA handle types the kernels' API names, declared exactly as the CUDA headers declare
// them (driver_types.h, cublas_api.h), so that a caller's translation unit needs no CUDA include
// and one that has them sees the same types.
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;
struct cublasContext;
typedef struct cublasContext* cublasHandle_t;
