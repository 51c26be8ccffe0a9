#include "check.cuh"
#include "fdcuda.h"

extern "C" int fd_cuda_device_count(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError(); /* no driver: clear the sticky error, report none */
        return 0;
    }
    return n;
}

extern "C" fd_status fd_cuda_open(int device)
{
    fd_status st = FD_OK;
    CUDA_CHECK_GOTO(cudaSetDevice(device), st, done);
    CUDA_CHECK_GOTO(cudaFree(0), st, done);
done:
    return st;
}
