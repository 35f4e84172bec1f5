// C++ reference of the row softmax: fp16 in/out, fp32 math (max, subtract, exp, sum, scale),
// rows split across "cores" as in the kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cannenv_io.h"

int main(int argc, char** argv) {
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId != "fp16") cannenv::Fail("unknown case " + args.caseId);
    const long long rows = args.GetPositive("rows"), cols = args.GetPositive("cols");
    const long long blockDim = args.GetPositive("block_dim");
    const size_t bytes = static_cast<size_t>(rows * cols) * 2;
    const std::vector<unsigned char> xb = cannenv::ReadFile(args.Path("x"), bytes);
    std::vector<uint16_t> x(static_cast<size_t>(rows * cols)), y(static_cast<size_t>(rows * cols));
    std::memcpy(x.data(), xb.data(), bytes);
    cannenv::FillSentinel(y.data(), bytes);
    const long long rowsPerCore = (rows + blockDim - 1) / blockDim;
    std::vector<float> work(static_cast<size_t>(cols));
    cannenv::Clock clock;
    clock.Start();
    for (long long block = 0; block < blockDim; ++block) {
        const long long first = block * rowsPerCore;
        const long long last = std::min(rows, first + rowsPerCore);
        for (long long r = first; r < last; ++r) {
            const uint16_t* in = x.data() + r * cols;
            float maxv = -INFINITY;
            for (long long c = 0; c < cols; ++c) {
                work[static_cast<size_t>(c)] = cannenv::HalfToFloat(in[c]);
                maxv = std::max(maxv, work[static_cast<size_t>(c)]);
            }
            float sum = 0.0f;
            for (long long c = 0; c < cols; ++c) {
                work[static_cast<size_t>(c)] = std::exp(work[static_cast<size_t>(c)] - maxv);
                sum += work[static_cast<size_t>(c)];
            }
            const float inv = 1.0f / sum;
            for (long long c = 0; c < cols; ++c) {
                y[static_cast<size_t>(r * cols + c)] = cannenv::FloatToHalf(work[static_cast<size_t>(c)] * inv);
            }
        }
    }
    cannenv::ReportTime(clock.ElapsedUs());
    cannenv::WriteFile(args.Path("y"), y.data(), bytes);
    return 0;
}
