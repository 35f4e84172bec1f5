    PARAM_NULL_RETURN_ERROR_WITH_EXT_ERRCODE(primaryCtx, RT_ERROR_INVALID_VALUE);
    Runtime* const rtInstance = Runtime::Instance();
    NULL_RETURN_ERROR_WITH_EXT_ERRCODE(rtInstance);
    uint32_t realDeviceId;
    const rtError_t error = rtInstance->ChgUserDevIdToDeviceId(static_cast<uint32_t>(devId), &realDeviceId);
    ERROR_RETURN_WITH_EXT_ERRCODE(error);
    if (static_cast<uint32_t>(devId) >= RT_MAX_DEV_NUM) {
        RT_LOG_INNER_MSG(RT_LOG_ERROR, "Invalid device_id=%d, valid range is [0,%u).", devId, RT_MAX_DEV_NUM);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    *primaryCtx = rtInstance->GetPriCtxByDeviceId(realDeviceId, MAX_UINT32_NUM);
    return ACL_RT_SUCCESS;
