rtError_t NpuDriver::DevMemAlloc1GHugePage(
    void** const dptr, const uint64_t size, const rtMemType_t type, const uint32_t memPolicy, const uint32_t deviceId,
    const uint16_t moduleId, const bool isLogError)
{
    const rtError_t ret = CheckIfSupport1GHugePage();
    if (ret != RT_ERROR_NONE) {
        RT_LOG(
            RT_LOG_ERROR,
            "this feature is not supported on current version, "
            "size=%lu, type=%u, memory policy=%u, deviceId=%u, moduleId=%u.",
            size, type, memPolicy, deviceId, moduleId);
        return ret;
    }

    rtMemType_t tempType = type;
    tempType = tempType & MEM_ALLOC_TYPE_BIT;
