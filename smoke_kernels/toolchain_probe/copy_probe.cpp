// cannenv toolchain probe (Ascend C): the smallest useful kernel. One core copies a buffer from
// global memory into the Unified Buffer, through the vector unit into a second UB buffer, and back
// to global memory. If this does not build, the compiler, the CMake modules or the environment are
// broken, whatever the smoke kernels do.
//
// Written for Atlas A2/A3 (dav-2201 / SOC_VERSION Ascend910B*, Ascend910_93xx) and 310P; needs a
// CANN toolkit to compile (see ../README.md). Length: a multiple of 16 halves (32-byte blocks).
#include "kernel_operator.h"

class CopyProbe {
public:
    __aicore__ inline CopyProbe() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t length)
    {
        length_ = length;
        src_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x), length);
        dst_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y), length);
        pipe_.InitBuffer(in_, 1, length * sizeof(half));
        pipe_.InitBuffer(out_, 1, length * sizeof(half));
    }

    __aicore__ inline void Process()
    {
        AscendC::LocalTensor<half> staged = in_.AllocTensor<half>();
        AscendC::DataCopy(staged, src_, length_);  // GM -> UB
        in_.EnQue(staged);

        AscendC::LocalTensor<half> loaded = in_.DeQue<half>();
        AscendC::LocalTensor<half> result = out_.AllocTensor<half>();
        AscendC::DataCopy(result, loaded, length_);  // UB -> UB
        out_.EnQue(result);
        in_.FreeTensor(loaded);

        AscendC::LocalTensor<half> ready = out_.DeQue<half>();
        AscendC::DataCopy(dst_, ready, length_);  // UB -> GM
        out_.FreeTensor(ready);
    }

private:
    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::QuePosition::VECIN, 1> in_;
    AscendC::TQue<AscendC::QuePosition::VECOUT, 1> out_;
    AscendC::GlobalTensor<half> src_;
    AscendC::GlobalTensor<half> dst_;
    uint32_t length_ = 0;
};

extern "C" __global__ __aicore__ void copy_probe(GM_ADDR x, GM_ADDR y, uint32_t length)
{
    CopyProbe probe;
    probe.Init(x, y, length);
    probe.Process();
}
