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
