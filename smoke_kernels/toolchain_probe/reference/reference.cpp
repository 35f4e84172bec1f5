// C++ reference of the toolchain probe: copies x to y (same parameters and files as the kernel).
#include <cstdint>
#include <vector>

#include "cannenv_io.h"

int main(int argc, char** argv) {
    const cannenv::Args args = cannenv::ParseArgs(argc, argv);
    if (args.caseId != "copy") cannenv::Fail("unknown case " + args.caseId);
    const size_t length = static_cast<size_t>(args.GetPositive("length"));
    const size_t bytes = length * sizeof(uint16_t);
    const std::vector<unsigned char> x = cannenv::ReadFile(args.Path("x"), bytes);
    std::vector<unsigned char> y(bytes);
    cannenv::FillSentinel(y.data(), bytes);
    cannenv::Clock clock;
    clock.Start();
    for (size_t i = 0; i < bytes; ++i) y[i] = x[i];
    cannenv::ReportTime(clock.ElapsedUs());
    cannenv::WriteFile(args.Path("y"), y.data(), bytes);
    return 0;
}
