// Host launcher of the cube matmul:
//   smoke_matmul fp16_fp32 <data dir> block_dim=4 m=128 k=64 n=96
#include <cstdint>
#include <vector>

#include "cannenv_launch.h"

#if defined(ASCENDC_CPU_DEBUG)
extern "C" __global__ __aicore__ void matmul_fp16_fp32(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t k,
                                                       uint32_t n);
#else
#include "aclrtlaunch_matmul_fp16_fp32.h"
#endif

int main(int argc, char** argv)
{
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId != "fp16_fp32") cannenv::Fail("unknown case " + args.caseId);
    const uint32_t m = args.GetPositive("m");
    const uint32_t k = args.GetPositive("k");
    const uint32_t n = args.GetPositive("n");
    const uint32_t blockDim = args.GetPositive("block_dim");
    if (m % blockDim != 0 || (m / blockDim) % 16 != 0 || k % 16 != 0 || n % 16 != 0) {
        cannenv::Fail("need m/block_dim, k and n to be multiples of 16");
    }
    std::vector<cannenv::Tensor> tensors{cannenv::Input(args, "a", size_t{m} * k * 2),
                                         cannenv::Input(args, "b", size_t{k} * n * 2),
                                         cannenv::Output("c", size_t{m} * n * 4)};
    cannenv::RunKernel(args, tensors, [&](void* stream, const std::vector<uint8_t*>& gm) -> uint32_t {
#if defined(ASCENDC_CPU_DEBUG)
        (void)stream;
        AscendC::SetKernelMode(KernelMode::AIC_MODE);
        ICPU_RUN_KF(matmul_fp16_fp32, blockDim, gm[0], gm[1], gm[2], m, k, n);
        return 0;
#else
        return aclrtlaunch_matmul_fp16_fp32(blockDim, stream, gm[0], gm[1], gm[2], m, k, n);
#endif
    });
    return 0;
}
