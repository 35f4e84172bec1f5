// C++ reference of the cube matmul: fp16 A[M,K] x B[K,N] -> fp32 C[M,N], rows split across
// "cores" as in the kernel, products of fp16 values summed in fp32 (as the cube does in L0C).
#include <cstdint>
#include <cstring>
#include <vector>

#include "cannenv_io.h"

int main(int argc, char** argv) {
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId != "fp16_fp32") cannenv::Fail("unknown case " + args.caseId);
    const long long m = args.GetPositive("m"), k = args.GetPositive("k"), n = args.GetPositive("n");
    const long long blockDim = args.GetPositive("block_dim");
    if (m % blockDim != 0) cannenv::Fail("m must be a multiple of block_dim");
    const std::vector<unsigned char> ab = cannenv::ReadFile(args.Path("a"), static_cast<size_t>(m * k) * 2);
    const std::vector<unsigned char> bb = cannenv::ReadFile(args.Path("b"), static_cast<size_t>(k * n) * 2);
    std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (size_t i = 0; i < a.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, ab.data() + 2 * i, 2);
        a[i] = cannenv::HalfToFloat(h);
    }
    for (size_t i = 0; i < b.size(); ++i) {
        uint16_t h;
        std::memcpy(&h, bb.data() + 2 * i, 2);
        b[i] = cannenv::HalfToFloat(h);
    }
    std::vector<float> c(static_cast<size_t>(m * n));
    cannenv::FillSentinel(c.data(), c.size() * sizeof(float));
    const long long rowsPerCore = m / blockDim;
    cannenv::Clock clock;
    clock.Start();
    for (long long block = 0; block < blockDim; ++block) {
        for (long long i = block * rowsPerCore; i < (block + 1) * rowsPerCore; ++i) {
            for (long long j = 0; j < n; ++j) {
                float acc = 0.0f;
                for (long long p = 0; p < k; ++p) acc += a[static_cast<size_t>(i * k + p)] * b[static_cast<size_t>(p * n + j)];
                c[static_cast<size_t>(i * n + j)] = acc;
            }
        }
    }
    cannenv::ReportTime(clock.ElapsedUs());
    cannenv::WriteFile(args.Path("c"), c.data(), c.size() * sizeof(float));
    return 0;
}
