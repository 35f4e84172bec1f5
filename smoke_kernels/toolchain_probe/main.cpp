// Host launcher of the toolchain probe: `smoke_toolchain_probe copy <data dir> block_dim=1 length=N`.
#include <cstdint>
#include <vector>

#include "cannenv_launch.h"

#if defined(ASCENDC_CPU_DEBUG)
extern "C" __global__ __aicore__ void copy_probe(GM_ADDR x, GM_ADDR y, uint32_t length);
#else
#include "aclrtlaunch_copy_probe.h"
#endif

int main(int argc, char** argv)
{
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId != "copy") cannenv::Fail("unknown case " + args.caseId);
    const uint32_t length = args.GetPositive("length");
    const uint32_t blockDim = args.GetPositive("block_dim");
    if (length % 16 != 0) cannenv::Fail("length must be a multiple of 16 (32-byte blocks)");
    const size_t bytes = length * sizeof(uint16_t);
    std::vector<cannenv::Tensor> tensors{cannenv::Input(args, "x", bytes), cannenv::Output("y", bytes)};
    cannenv::RunKernel(args, tensors, [&](void* stream, const std::vector<uint8_t*>& gm) -> uint32_t {
#if defined(ASCENDC_CPU_DEBUG)
        (void)stream;
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(copy_probe, blockDim, gm[0], gm[1], length);
        return 0;
#else
        return aclrtlaunch_copy_probe(blockDim, stream, gm[0], gm[1], length);
#endif
    });
    return 0;
}
