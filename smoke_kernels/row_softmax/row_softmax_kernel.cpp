// cannenv row softmax (Ascend C): y = softmax(x) along each row, fp16 in/out, fp32 math inside.
//
// Per row: Cast fp16 -> fp32, ReduceMax, subtract the max (Adds), Exp, ReduceSum, scale by the
// reciprocal (Muls), Cast back with round-to-nearest-even. Rows are split over the cores; the row
// queues are double-buffered so the next row loads while this one is computed.
// The max and the sum are read by the scalar unit (GetValue), so the vector and scalar pipes are
// synchronised explicitly around those reads.
//
// Written for Atlas A2/A3 (dav-2201) and 310P (dav-2002; SOC_VERSION Ascend310P*); cols a multiple
// of 16 that fits the Unified Buffer. Needs a CANN toolkit to compile (see ../README.md).
#include "kernel_operator.h"

constexpr int32_t kBufferNum = 2;

class RowSoftmax {
public:
    __aicore__ inline RowSoftmax() {}

    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
    {
        const uint32_t cores = AscendC::GetBlockNum();
        const uint32_t perCore = (rows + cores - 1) / cores;
        const uint32_t first = perCore * AscendC::GetBlockIdx();
        rows_ = first >= rows ? 0 : (rows - first < perCore ? rows - first : perCore);
        cols_ = cols;
        x_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(x) + first * cols, rows_ * cols);
        y_.SetGlobalBuffer(reinterpret_cast<__gm__ half*>(y) + first * cols, rows_ * cols);
        pipe_.InitBuffer(in_, kBufferNum, cols * sizeof(half));
        pipe_.InitBuffer(out_, kBufferNum, cols * sizeof(half));
        pipe_.InitBuffer(values_, cols * sizeof(float));
        pipe_.InitBuffer(work_, cols * sizeof(float));
        pipe_.InitBuffer(reduced_, 32);
    }

    __aicore__ inline void Process()
    {
        for (uint32_t r = 0; r < rows_; ++r) {
            AscendC::LocalTensor<half> row = in_.AllocTensor<half>();
            AscendC::DataCopy(row, x_[r * cols_], cols_);
            in_.EnQue(row);
            Compute();
            AscendC::LocalTensor<half> done = out_.DeQue<half>();
            AscendC::DataCopy(y_[r * cols_], done, cols_);
            out_.FreeTensor(done);
        }
    }

private:
    __aicore__ inline void VectorToScalar()
    {
        const event_t ev = static_cast<event_t>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::V_S));
        AscendC::SetFlag<AscendC::HardEvent::V_S>(ev);
        AscendC::WaitFlag<AscendC::HardEvent::V_S>(ev);
    }

    __aicore__ inline void ScalarToVector()
    {
        const event_t ev = static_cast<event_t>(GetTPipePtr()->FetchEventID(AscendC::HardEvent::S_V));
        AscendC::SetFlag<AscendC::HardEvent::S_V>(ev);
        AscendC::WaitFlag<AscendC::HardEvent::S_V>(ev);
    }

    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<half> row = in_.DeQue<half>();
        AscendC::LocalTensor<half> result = out_.AllocTensor<half>();
        AscendC::LocalTensor<float> v = values_.Get<float>();
        AscendC::LocalTensor<float> work = work_.Get<float>();
        AscendC::LocalTensor<float> red = reduced_.Get<float>();

        AscendC::Cast(v, row, AscendC::RoundMode::CAST_NONE, cols_);
        in_.FreeTensor(row);
        AscendC::ReduceMax(red, v, work, cols_);
        VectorToScalar();
        const float maxValue = red.GetValue(0);
        ScalarToVector();
        AscendC::Adds(v, v, -maxValue, cols_);
        AscendC::Exp(v, v, cols_);
        AscendC::ReduceSum(red, v, work, cols_);
        VectorToScalar();
        const float inv = 1.0f / red.GetValue(0);
        ScalarToVector();
        AscendC::Muls(v, v, inv, cols_);
        AscendC::Cast(result, v, AscendC::RoundMode::CAST_RINT, cols_);
        out_.EnQue(result);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::QuePosition::VECIN, kBufferNum> in_;
    AscendC::TQue<AscendC::QuePosition::VECOUT, kBufferNum> out_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> values_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> work_;
    AscendC::TBuf<AscendC::TPosition::VECCALC> reduced_;
    AscendC::GlobalTensor<half> x_;
    AscendC::GlobalTensor<half> y_;
    uint32_t rows_ = 0;
    uint32_t cols_ = 0;
};

extern "C" __global__ __aicore__ void row_softmax_fp16(GM_ADDR x, GM_ADDR y, uint32_t rows, uint32_t cols)
{
    RowSoftmax op;
    op.Init(x, y, rows, cols);
    op.Process();
}
