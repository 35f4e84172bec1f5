// cannenv smoke kernels: the host side of one kernel launch, for every run mode.
//
// npu / sim (and the new flow's cpu mode, where the ACL calls go to a stub): the ACL runtime,
//   aclInit -> aclrtSetDevice -> aclrtCreateStream -> aclrtMalloc -> aclrtMemcpy (inputs, and the
//   sentinel into every output) -> launch through the generated aclrtlaunch_<kernel>() ->
//   aclrtSynchronizeStream -> aclrtMemcpy back -> aclrtFree -> aclrtDestroyStream ->
//   aclrtResetDevice -> aclFinalize; every return code is checked.
// legacy cpu mode (ASCENDC_CPU_DEBUG, CANN's CPU debug libraries): AscendC::GmAlloc buffers and
//   ICPU_RUN_KF, each kernel block runs in a forked child process.
#ifndef CANNENV_LAUNCH_H
#define CANNENV_LAUNCH_H

#include <functional>
#include <string>
#include <vector>

#include "cannenv_io.h"

#if defined(ASCENDC_CPU_DEBUG)
#include "tikicpulib.h"
#else
#include "acl/acl.h"
#endif

namespace cannenv {

struct Tensor {
    std::string name;
    size_t bytes;
    bool output;
    std::vector<unsigned char> host;  // inputs: read from <data>/<name>.bin; outputs: the result
};

inline Tensor Input(const Args& args, const std::string& name, size_t bytes) {
    return Tensor{name, bytes, false, ReadFile(args.Path(name), bytes)};
}

inline Tensor Output(const std::string& name, size_t bytes) {
    return Tensor{name, bytes, true, std::vector<unsigned char>(bytes, kSentinelByte)};
}

// `launch(stream, pointers)` issues the kernel; the pointers follow the order of `tensors`.
using LaunchFn = std::function<uint32_t(void* stream, const std::vector<uint8_t*>& gm)>;

#if defined(ASCENDC_CPU_DEBUG)

inline void RunKernel(const Args& args, std::vector<Tensor>& tensors, const LaunchFn& launch) {
    std::vector<uint8_t*> gm;
    for (Tensor& t : tensors) {
        auto* p = static_cast<uint8_t*>(AscendC::GmAlloc(t.bytes));
        if (p == nullptr) Fail("GmAlloc(" + std::to_string(t.bytes) + ") failed for " + t.name);
        std::memcpy(p, t.host.data(), t.bytes);  // outputs get the sentinel
        gm.push_back(p);
    }
    Clock clock;
    clock.Start();
    if (launch(nullptr, gm) != 0) Fail("CPU debug launch failed");
    ReportTime(clock.ElapsedUs());
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].output) {
            std::memcpy(tensors[i].host.data(), gm[i], tensors[i].bytes);
            WriteFile(args.Path(tensors[i].name), tensors[i].host.data(), tensors[i].bytes);
        }
        AscendC::GmFree(gm[i]);
    }
}

#else

inline void AclCheck(aclError ret, const char* call) {
    if (ret != ACL_SUCCESS) {
        const char* msg = aclGetRecentErrMsg();
        Fail(std::string(call) + " returned " + std::to_string(static_cast<int>(ret)) +
             (msg != nullptr ? std::string(": ") + msg : std::string()));
    }
}

#define CANNENV_ACL(call) ::cannenv::AclCheck((call), #call)

inline void RunKernel(const Args& args, std::vector<Tensor>& tensors, const LaunchFn& launch) {
    const int32_t deviceId = static_cast<int32_t>(args.params.count("device") ? args.Get("device") : 0);
    CANNENV_ACL(aclInit(nullptr));
    CANNENV_ACL(aclrtSetDevice(deviceId));
    aclrtStream stream = nullptr;
    CANNENV_ACL(aclrtCreateStream(&stream));
    std::vector<uint8_t*> gm;
    for (Tensor& t : tensors) {
        void* p = nullptr;
        CANNENV_ACL(aclrtMalloc(&p, t.bytes, ACL_MEM_MALLOC_HUGE_FIRST));
        // Inputs get their data, outputs the sentinel: a block that never runs leaves it behind.
        CANNENV_ACL(aclrtMemcpy(p, t.bytes, t.host.data(), t.bytes, ACL_MEMCPY_HOST_TO_DEVICE));
        gm.push_back(static_cast<uint8_t*>(p));
    }
    Clock clock;
    clock.Start();
    const uint32_t launched = launch(stream, gm);
    if (launched != 0) Fail("aclrtlaunch_* returned " + std::to_string(launched));
    CANNENV_ACL(aclrtSynchronizeStream(stream));
    ReportTime(clock.ElapsedUs());
    for (size_t i = 0; i < tensors.size(); ++i) {
        if (tensors[i].output) {
            CANNENV_ACL(aclrtMemcpy(tensors[i].host.data(), tensors[i].bytes, gm[i], tensors[i].bytes,
                                    ACL_MEMCPY_DEVICE_TO_HOST));
            WriteFile(args.Path(tensors[i].name), tensors[i].host.data(), tensors[i].bytes);
        }
        CANNENV_ACL(aclrtFree(gm[i]));
    }
    CANNENV_ACL(aclrtDestroyStream(stream));
    CANNENV_ACL(aclrtResetDevice(deviceId));
    CANNENV_ACL(aclFinalize());
}

#endif

}  // namespace cannenv

#endif  // CANNENV_LAUNCH_H
