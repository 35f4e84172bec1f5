// cannenv vector add (Ascend C): z = x + y for fp16 and fp32.
//
// * Multi-core: the length is split over GetBlockNum() cores; each core's share is rounded up to
//   whole 32-byte blocks so every core starts aligned, and the last core(s) get what is left.
// * Double buffering: two buffers per queue (kBufferNum = 2), so the copy-in of tile i+1 overlaps
//   the add of tile i and the copy-out of tile i-1.
// * Tail: the last tile of a core may be shorter than the tile and not a multiple of 32 bytes;
//   DataCopyPad moves exactly its bytes (Atlas A2/A3), the add runs on the padded length and the
//   padding never goes back to global memory.
//
// Written for Atlas A2/A3 (SOC_VERSION Ascend910B*, Ascend910_93xx; --npu-arch=dav-2201); needs a
// CANN toolkit to compile (see ../README.md).
#include "kernel_operator.h"

constexpr int32_t kBufferNum = 2;

template <typename T>
class VectorAdd {
public:
    __aicore__ inline VectorAdd() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
    {
        constexpr uint32_t align = 32 / sizeof(T);
        const uint32_t cores = AscendC::GetBlockNum();
        const uint32_t perCore = ((totalLength + cores - 1) / cores + align - 1) / align * align;
        const uint32_t start = perCore * AscendC::GetBlockIdx();
        count_ = start >= totalLength ? 0 : (totalLength - start < perCore ? totalLength - start : perCore);
        tile_ = tileLength;
        x_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(x) + start, count_);
        y_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(y) + start, count_);
        z_.SetGlobalBuffer(reinterpret_cast<__gm__ T*>(z) + start, count_);
        pipe_.InitBuffer(inX_, kBufferNum, tile_ * sizeof(T));
        pipe_.InitBuffer(inY_, kBufferNum, tile_ * sizeof(T));
        pipe_.InitBuffer(outZ_, kBufferNum, tile_ * sizeof(T));
    }

    __aicore__ inline void Process()
    {
        for (uint32_t done = 0; done < count_; done += tile_) {
            const uint32_t len = count_ - done < tile_ ? count_ - done : tile_;
            CopyIn(done, len);
            Compute(len);
            CopyOut(done, len);
        }
    }

private:
    __aicore__ inline AscendC::DataCopyExtParams Bytes(uint32_t len) const
    {
        // one block of `len` elements, no strides
        return AscendC::DataCopyExtParams{1, static_cast<uint32_t>(len * sizeof(T)), 0, 0, 0};
    }

    __aicore__ inline void CopyIn(uint32_t offset, uint32_t len)
    {
        AscendC::LocalTensor<T> x = inX_.AllocTensor<T>();
        AscendC::LocalTensor<T> y = inY_.AllocTensor<T>();
        const AscendC::DataCopyPadExtParams<T> noPad{false, 0, 0, 0};
        AscendC::DataCopyPad(x, x_[offset], Bytes(len), noPad);
        AscendC::DataCopyPad(y, y_[offset], Bytes(len), noPad);
        inX_.EnQue(x);
        inY_.EnQue(y);
    }

    __aicore__ inline void Compute(uint32_t len)
    {
        constexpr uint32_t align = 32 / sizeof(T);
        AscendC::LocalTensor<T> x = inX_.DeQue<T>();
        AscendC::LocalTensor<T> y = inY_.DeQue<T>();
        AscendC::LocalTensor<T> z = outZ_.AllocTensor<T>();
        AscendC::Add(z, x, y, (len + align - 1) / align * align);
        outZ_.EnQue<T>(z);
        inX_.FreeTensor(x);
        inY_.FreeTensor(y);
    }

    __aicore__ inline void CopyOut(uint32_t offset, uint32_t len)
    {
        AscendC::LocalTensor<T> z = outZ_.DeQue<T>();
        AscendC::DataCopyPad(z_[offset], z, Bytes(len));
        outZ_.FreeTensor(z);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::QuePosition::VECIN, kBufferNum> inX_;
    AscendC::TQue<AscendC::QuePosition::VECIN, kBufferNum> inY_;
    AscendC::TQue<AscendC::QuePosition::VECOUT, kBufferNum> outZ_;
    AscendC::GlobalTensor<T> x_;
    AscendC::GlobalTensor<T> y_;
    AscendC::GlobalTensor<T> z_;
    uint32_t count_ = 0;
    uint32_t tile_ = 0;
};

extern "C" __global__ __aicore__ void vector_add_fp16(
    GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
{
    VectorAdd<half> op;
    op.Init(x, y, z, totalLength, tileLength);
    op.Process();
}

extern "C" __global__ __aicore__ void vector_add_fp32(
    GM_ADDR x, GM_ADDR y, GM_ADDR z, uint32_t totalLength, uint32_t tileLength)
{
    VectorAdd<float> op;
    op.Init(x, y, z, totalLength, tileLength);
    op.Process();
}
