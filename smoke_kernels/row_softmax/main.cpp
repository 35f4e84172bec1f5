// Host launcher of the row softmax:
//   smoke_row_softmax fp16 <data dir> block_dim=8 rows=64 cols=256
#include <cstdint>
#include <vector>

#include "cannenv_launch.h"

#if defined(ASCENDC_CPU_DEBUG)
extern "C" __global__ __aicore__ void row_softmax_fp16(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols);
#else
#include "aclrtlaunch_row_softmax_fp16.h"
#endif

int main(int argc, char** argv)
{
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId != "fp16") cannenv::Fail("unknown case " + args.caseId);
    const uint32_t rows = args.GetPositive("rows");
    const uint32_t cols = args.GetPositive("cols");
    const uint32_t blockDim = args.GetPositive("block_dim");
    if (cols % 16 != 0) cannenv::Fail("cols must be a multiple of 16 (32-byte blocks of fp16)");
    const size_t bytes = size_t{rows} * cols * 2;
    std::vector<cannenv::Tensor> tensors{cannenv::Input(args, "x", bytes), cannenv::Output("y", bytes)};
    cannenv::RunKernel(args, tensors, [&](void* stream, const std::vector<uint8_t*>& gm) -> uint32_t {
#if defined(ASCENDC_CPU_DEBUG)
        (void)stream;
        AscendC::SetKernelMode(KernelMode::AIV_MODE);
        ICPU_RUN_KF(row_softmax_fp16, blockDim, gm[0], gm[1], rows, cols);
        return 0;
#else
        return aclrtlaunch_row_softmax_fp16(blockDim, stream, gm[0], gm[1], rows, cols);
#endif
    });
    return 0;
}
