// cannenv cube matmul (Ascend C): C[M,N] (fp32) = A[M,K] (fp16) x B[K,N] (fp16) on the cube unit.
//
// Each AI core takes M / GetBlockNum() rows of A and C and all of B:
//   GM (ND) --DataCopy+Nd2NzParams--> L1 (NZ)        queues A1 / B1
//   L1      --LoadData2D-----------> L0A (ZZ), L0B (ZN; each 16x16 fractal transposed)
//   Mmad: L0A x L0B -> L0C (fp32 accumulation)
//   L0C     --Fixpipe (NZ -> ND, row major)--> GM
// Shapes: M / cores, K and N multiples of 16; everything fits in L1/L0 at once (no K loop), which
// is all a smoke test needs. Fixpipe from L0C straight to GM (FixpipeParamsV220) exists on
// Atlas A2/A3 only: SOC_VERSION Ascend910B*, Ascend910_93xx, --npu-arch=dav-2201.
// Needs a CANN toolkit to compile (see ../README.md).
#include "kernel_operator.h"

namespace {
constexpr uint32_t kFractal = 16;              // a fp16 fractal is 16 x 16 (16 x 32 bytes)
constexpr uint32_t kFractalSize = kFractal * kFractal;

__aicore__ inline uint32_t CeilDiv(uint32_t a, uint32_t b) { return (a + b - 1) / b; }
__aicore__ inline uint32_t CeilAlign(uint32_t a, uint32_t b) { return CeilDiv(a, b) * b; }
}  // namespace

class CubeMatmul {
public:
    __aicore__ inline CubeMatmul() {}

    __aicore__ inline void Init(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t k, uint32_t n)
    {
        m_ = m / AscendC::GetBlockNum();  // rows of this core
        k_ = k;
        n_ = n;
        const uint32_t row0 = m_ * AscendC::GetBlockIdx();
        a_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(a) + row0 * k_, m_ * k_);
        b_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(b), k_ * n_);
        c_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(c) + row0 * n_, m_ * n_);
        pipe_.InitBuffer(a1_, 1, m_ * k_ * sizeof(half));
        pipe_.InitBuffer(a2_, 1, m_ * k_ * sizeof(half));
        pipe_.InitBuffer(b1_, 1, k_ * n_ * sizeof(half));
        pipe_.InitBuffer(b2_, 1, k_ * n_ * sizeof(half));
        pipe_.InitBuffer(c1_, 1, m_ * n_ * sizeof(float));
    }

    __aicore__ inline void Process()
    {
        CopyToL1();
        SplitA();
        SplitB();
        Compute();
        CopyOut();
    }

private:
    __aicore__ inline void CopyToL1()
    {
        AscendC::LocalTensor<half> a1 = a1_.AllocTensor<half>();
        AscendC::Nd2NzParams pa;
        pa.ndNum = 1;
        pa.nValue = m_;
        pa.dValue = k_;
        pa.srcNdMatrixStride = 0;
        pa.srcDValue = k_;
        pa.dstNzC0Stride = CeilAlign(m_, kFractal);  // rows of the NZ matrix in L1
        pa.dstNzNStride = 1;
        pa.dstNzMatrixStride = 0;
        AscendC::DataCopy(a1, a_, pa);
        a1_.EnQue(a1);

        AscendC::LocalTensor<half> b1 = b1_.AllocTensor<half>();
        AscendC::Nd2NzParams pb;
        pb.ndNum = 1;
        pb.nValue = k_;
        pb.dValue = n_;
        pb.srcNdMatrixStride = 0;
        pb.srcDValue = n_;
        pb.dstNzC0Stride = CeilAlign(k_, kFractal);
        pb.dstNzNStride = 1;
        pb.dstNzMatrixStride = 0;
        AscendC::DataCopy(b1, b_, pb);
        b1_.EnQue(b1);
    }

    __aicore__ inline void SplitA()
    {
        // NZ (L1) -> ZZ (L0A): one row of fractals per iteration, no transpose.
        AscendC::LocalTensor<half> a1 = a1_.DeQue<half>();
        AscendC::LocalTensor<half> a2 = a2_.AllocTensor<half>();
        AscendC::LoadData2DParams p;
        p.repeatTimes = CeilDiv(k_, kFractal);
        p.srcStride = CeilDiv(m_, kFractal);
        p.dstGap = 0;
        p.ifTranspose = false;
        for (uint32_t i = 0; i < CeilDiv(m_, kFractal); ++i) {
            AscendC::LoadData(a2[i * CeilDiv(k_, kFractal) * kFractalSize], a1[i * kFractalSize], p);
        }
        a2_.EnQue(a2);
        a1_.FreeTensor(a1);
    }

    __aicore__ inline void SplitB()
    {
        // NZ (L1) -> ZN (L0B): each 16x16 fractal transposed on the way.
        AscendC::LocalTensor<half> b1 = b1_.DeQue<half>();
        AscendC::LocalTensor<half> b2 = b2_.AllocTensor<half>();
        AscendC::LoadData2DParams p;
        p.repeatTimes = CeilDiv(n_, kFractal);
        p.srcStride = CeilDiv(k_, kFractal);
        p.dstGap = 0;
        p.ifTranspose = true;
        for (uint32_t i = 0; i < CeilDiv(k_, kFractal); ++i) {
            AscendC::LoadData(b2[i * CeilDiv(n_, kFractal) * kFractalSize], b1[i * kFractalSize], p);
        }
        b2_.EnQue(b2);
        b1_.FreeTensor(b1);
    }

    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<half> a2 = a2_.DeQue<half>();
        AscendC::LocalTensor<half> b2 = b2_.DeQue<half>();
        AscendC::LocalTensor<float> c1 = c1_.AllocTensor<float>();
        AscendC::MmadParams p;
        p.m = m_;
        p.n = n_;
        p.k = k_;
        AscendC::Mmad(c1, a2, b2, p);
        c1_.EnQue(c1);
        a2_.FreeTensor(a2);
        b2_.FreeTensor(b2);
    }

    __aicore__ inline void CopyOut()
    {
        AscendC::LocalTensor<float> c1 = c1_.DeQue<float>();
        AscendC::FixpipeParamsV220 p;
        p.nSize = n_;
        p.mSize = m_;
        p.srcStride = CeilAlign(m_, kFractal);  // L0C rows, aligned to 16
        p.dstStride = n_;                       // ND row length in GM
        p.ndNum = 1;
        p.srcNdStride = 0;
        p.dstNdStride = 0;
        AscendC::Fixpipe<float, float, AscendC::CFG_ROW_MAJOR>(c_, c1, p);
        c1_.FreeTensor(c1);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::QuePosition::A1, 1> a1_;
    AscendC::TQue<AscendC::QuePosition::A2, 1> a2_;
    AscendC::TQue<AscendC::QuePosition::B1, 1> b1_;
    AscendC::TQue<AscendC::QuePosition::B2, 1> b2_;
    AscendC::TQue<AscendC::QuePosition::CO1, 1> c1_;
    AscendC::GlobalTensor<half> a_;
    AscendC::GlobalTensor<half> b_;
    AscendC::GlobalTensor<float> c_;
    uint32_t m_ = 0;
    uint32_t k_ = 0;
    uint32_t n_ = 0;
};

extern "C" __global__ __aicore__ void matmul_fp16_fp32(GM_ADDR a, GM_ADDR b, GM_ADDR c, uint32_t m, uint32_t k,
                                                       uint32_t n)
{
#if defined(KERNEL_TASK_TYPE_DEFAULT)
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIC_ONLY);  // cube-only kernel on split cube/vector chips
#endif
    CubeMatmul op;
    op.Init(a, b, c, m, k, n);
    op.Process();
}
