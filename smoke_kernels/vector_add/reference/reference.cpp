// C++ reference of vector_add: same block split and tiling as the Ascend C kernel, computed on the
// CPU. fp16 is added through fp32 and rounded once to fp16 (fp32 has >= 2*11+2 bits, so this is
// the correctly rounded fp16 sum, bit-equal to the hardware's).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "cannenv_io.h"

namespace {

template <typename T, typename Add>
void RunBlocks(const cannenv::Args& args, Add add) {
    const long long total = args.GetPositive("total_length");
    const long long tile = args.GetPositive("tile_length");
    const long long blockDim = args.GetPositive("block_dim");
    const long long align = 32 / static_cast<long long>(sizeof(T));  // elements per 32-byte block
    const size_t bytes = static_cast<size_t>(total) * sizeof(T);
    const std::vector<unsigned char> xb = cannenv::ReadFile(args.Path("x"), bytes);
    const std::vector<unsigned char> yb = cannenv::ReadFile(args.Path("y"), bytes);
    std::vector<T> x(static_cast<size_t>(total)), y(static_cast<size_t>(total)), z(static_cast<size_t>(total));
    std::memcpy(x.data(), xb.data(), bytes);
    std::memcpy(y.data(), yb.data(), bytes);
    cannenv::FillSentinel(z.data(), bytes);
    // Per-core share, rounded up to whole 32-byte blocks so every core starts aligned.
    const long long perCore = ((total + blockDim - 1) / blockDim + align - 1) / align * align;
    cannenv::Clock clock;
    clock.Start();
    for (long long block = 0; block < blockDim; ++block) {
        const long long start = block * perCore;
        const long long count = std::max(0LL, std::min(perCore, total - start));
        for (long long done = 0; done < count; done += tile) {
            const long long len = std::min(tile, count - done);
            for (long long i = 0; i < len; ++i) {
                const size_t at = static_cast<size_t>(start + done + i);
                z[at] = add(x[at], y[at]);
            }
        }
    }
    cannenv::ReportTime(clock.ElapsedUs());
    cannenv::WriteFile(args.Path("z"), z.data(), bytes);
}

}  // namespace

int main(int argc, char** argv) {
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId == "fp16") {
        RunBlocks<uint16_t>(args, [](uint16_t a, uint16_t b) {
            return cannenv::FloatToHalf(cannenv::HalfToFloat(a) + cannenv::HalfToFloat(b));
        });
    } else if (args.caseId == "fp32") {
        RunBlocks<float>(args, [](float a, float b) { return a + b; });
    } else {
        cannenv::Fail("unknown case " + args.caseId);
    }
    return 0;
}
