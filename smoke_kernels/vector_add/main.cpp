// Host launcher of vector_add:
//   smoke_vector_add fp16|fp32 <data dir> block_dim=8 total_length=N tile_length=T
#include <cstdint>
#include <vector>

#include "cannenv_launch.h"

#if defined(ASCENDC_CPU_DEBUG)
extern "C" __global__ __aicore__ void vector_add_fp16(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength,
                                                      uint32_t tileLength);
extern "C" __global__ __aicore__ void vector_add_fp32(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength,
                                                      uint32_t tileLength);
#else
#include "aclrtlaunch_vector_add_fp16.h"
#include "aclrtlaunch_vector_add_fp32.h"
#endif

int main(int argc, char** argv)
{
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    const bool fp16 = args.caseId == "fp16";
    if (!fp16 && args.caseId != "fp32") cannenv::Fail("unknown case " + args.caseId);
    const uint32_t total = args.GetPositive("total_length");
    const uint32_t tile = args.GetPositive("tile_length");
    const uint32_t blockDim = args.GetPositive("block_dim");
    const size_t elem = fp16 ? 2 : 4;
    if ((tile * elem) % 32 != 0) cannenv::Fail("tile_length must fill whole 32-byte blocks");
    const size_t bytes = total * elem;
    std::vector<cannenv::Tensor> tensors{
        cannenv::Input(args, "x", bytes), cannenv::Input(args, "y", bytes), cannenv::Output("z", bytes)};
    cannenv::RunKernel(args, tensors, [&](void* stream, const std::vector<uint8_t*>& gm) -> uint32_t {
#if defined(ASCENDC_CPU_DEBUG)
        (void)stream;
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        if (fp16) {
            ICPU_RUN_KF(vector_add_fp16, blockDim, gm[0], gm[1], gm[2], total, tile);
        } else {
            ICPU_RUN_KF(vector_add_fp32, blockDim, gm[0], gm[1], gm[2], total, tile);
        }
        return 0;
#else
        return fp16 ? aclrtlaunch_vector_add_fp16(blockDim, stream, gm[0], gm[1], gm[2], total, tile)
                    : aclrtlaunch_vector_add_fp32(blockDim, stream, gm[0], gm[1], gm[2], total, tile);
#endif
    });
    return 0;
}
