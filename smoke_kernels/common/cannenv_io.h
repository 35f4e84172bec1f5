// cannenv smoke kernels: host-side helpers shared by the ACL launchers and the C++ references.
// Plain C++17, no CANN headers: file I/O of raw tensors, key=value parameters, the output sentinel,
// a host clock, and IEEE fp16 <-> fp32 conversion for the references.
//
// Protocol (the harness writes inputs, the program writes outputs, the harness compares):
//   <program> <case> <data dir> key=value ...
//   reads  <data dir>/<input>.bin   (raw little-endian, shape and dtype from the manifest)
//   writes <data dir>/<output>.bin
//   prints "cannenv: kernel_time_us=<t>" (launch to synchronize) and exits 0 on success;
//   any failure prints "cannenv: error: ..." to stderr and exits non-zero.
#ifndef CANNENV_IO_H
#define CANNENV_IO_H

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace cannenv {

// Every output byte is set to this before the kernel runs: NaN for fp16/fp32, so a block (or a
// tail) that never ran stays visible to the comparison.
constexpr unsigned char kSentinelByte = 0xFF;

[[noreturn]] inline void Fail(const std::string& what) {
    std::fprintf(stderr, "cannenv: error: %s\n", what.c_str());
    std::exit(2);
}

struct Args {
    std::string caseId;
    std::string dataDir;
    std::map<std::string, long long> params;

    long long Get(const std::string& key) const {
        auto it = params.find(key);
        if (it == params.end()) Fail("missing parameter " + key + "=<value>");
        return it->second;
    }
    // A launch parameter (block_dim, a length, a shape): a whole number 1..4294967295. A 0 would
    // never advance a kernel's tile loop (a device hang) or divide by zero on the host; cannenv
    // checks the same before launching (cannenv/certify/launch.py), this is the second line.
    uint32_t GetPositive(const std::string& key) const {
        const long long v = Get(key);
        if (v < 1 || v > 0xFFFFFFFFLL) Fail(key + " must be between 1 and 4294967295, got " + std::to_string(v));
        return static_cast<uint32_t>(v);
    }
    std::string Path(const std::string& tensor) const { return dataDir + "/" + tensor + ".bin"; }
};

inline Args ParseArgs(int argc, char** argv) {
    if (argc < 3) Fail("usage: <program> <case> <data dir> key=value ...");
    Args args;
    args.caseId = argv[1];
    args.dataDir = argv[2];
    for (int i = 3; i < argc; ++i) {
        const std::string kv = argv[i];
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) Fail("bad parameter '" + kv + "' (expected key=value)");
        char* end = nullptr;
        const long long value = std::strtoll(kv.c_str() + eq + 1, &end, 10);
        if (end == nullptr || *end != '\0') Fail("parameter '" + kv + "' is not an integer");
        args.params[kv.substr(0, eq)] = value;
    }
    return args;
}

inline std::vector<unsigned char> ReadFile(const std::string& path, size_t expectedBytes) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) Fail("cannot open input " + path);
    const std::streamsize size = in.tellg();
    if (size < 0 || static_cast<size_t>(size) != expectedBytes) {
        Fail(path + ": " + std::to_string(size) + " bytes, expected " + std::to_string(expectedBytes));
    }
    std::vector<unsigned char> data(expectedBytes);
    in.seekg(0);
    if (!in.read(reinterpret_cast<char*>(data.data()), size)) Fail("cannot read " + path);
    return data;
}

inline void WriteFile(const std::string& path, const void* data, size_t bytes) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) Fail("cannot create output " + path);
    if (!out.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes))) {
        Fail("cannot write " + path);
    }
}

inline void FillSentinel(void* data, size_t bytes) { std::memset(data, kSentinelByte, bytes); }

class Clock {
public:
    void Start() { start_ = std::chrono::steady_clock::now(); }
    double ElapsedUs() const {
        return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
    }

private:
    std::chrono::steady_clock::time_point start_{};
};

inline void ReportTime(double us) { std::printf("cannenv: kernel_time_us=%.3f\n", us); }

// IEEE 754 binary16 <-> binary32, round to nearest even (for the references only; the device
// kernels use the hardware conversions).
inline float HalfToFloat(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0) {
        if (mant == 0) {
            bits = sign;
        } else {  // subnormal: normalise
            int e = -1;
            do {
                ++e;
                mant <<= 1;
            } while ((mant & 0x400u) == 0);
            bits = sign | static_cast<uint32_t>(127 - 15 - e) << 23 | (mant & 0x3FFu) << 13;
        }
    } else if (exp == 0x1F) {
        bits = sign | 0x7F800000u | mant << 13;
    } else {
        bits = sign | (exp + 127 - 15) << 23 | mant << 13;
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline uint16_t FloatToHalf(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof x);
    const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    const uint32_t absx = x & 0x7FFFFFFFu;
    if (absx >= 0x7F800000u) {  // Inf or NaN
        return static_cast<uint16_t>(sign | 0x7C00u | (absx > 0x7F800000u ? 0x200u : 0u));
    }
    if (absx >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds to >= 65520: Inf
    if (absx < 0x38800000u) {  // below the smallest normal half: subnormal or zero
        if (absx < 0x33000000u) return sign;  // < 2^-25 rounds to zero
        const uint32_t e = absx >> 23;
        const uint32_t m = (absx & 0x7FFFFFu) | 0x800000u;
        const uint32_t shift = 126 - e;  // 14 + (113 - e) ... yields the 10-bit subnormal mantissa
        uint32_t half = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) ++half;
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t half = ((absx >> 13) - (112u << 10));
    const uint32_t rem = absx & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
}

}  // namespace cannenv

#endif  // CANNENV_IO_H
