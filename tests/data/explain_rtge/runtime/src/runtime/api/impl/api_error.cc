
    constexpr uint32_t maxFlags =
        (RT_STREAM_DEFAULT | RT_STREAM_PERSISTENT | RT_STREAM_FORCE_COPY | RT_STREAM_HUGE | RT_STREAM_AICPU |
         RT_STREAM_FORBIDDEN_DEFAULT | RT_STREAM_HEAD | RT_STREAM_OVERFLOW | RT_STREAM_FAST_LAUNCH |
         RT_STREAM_FAST_SYNC | RT_STREAM_CP_PROCESS_USE | RT_STREAM_VECTOR_CORE_USE | RT_STREAM_ACSQ_LOCK |
         RT_STREAM_DQS_CTRL | RT_STREAM_DQS_INTER_CHIP);
    COND_RETURN_AND_MSG_OUTER_WITH_PARAM_AND_FUNC_DESC(
        flags > maxFlags, RT_ERROR_INVALID_VALUE, "Checking stream flags", flags,
        "[0, " + std::to_string(maxFlags) + "]");

    COND_RETURN_AND_MSG_OUTER(
        ((flags & static_cast<uint32_t>(RT_STREAM_CP_PROCESS_USE)) != 0U) &&
            (((flags | static_cast<uint32_t>(RT_STREAM_ACSQ_LOCK)) !=
              (RT_STREAM_ACSQ_LOCK | RT_STREAM_CP_PROCESS_USE))),
        RT_ERROR_INVALID_VALUE, ErrorCode::EE1006, "Checking stream flags",
        "Parameter flags value " + std::to_string(flags),
        "The flag RT_STREAM_CP_PROCESS_USE(0x800U) must be used together with RT_STREAM_ACSQ_LOCK(0x2000U)");

    return RT_ERROR_NONE;
}

rtError_t ApiErrorDecorator::StreamDestroy(Stream* const stm, bool flag)
{
    NULL_PTR_RETURN_MSG_OUTER_WITH_FUNC_DESC(stm, RT_ERROR_INVALID_VALUE, "Stream destruction");

    COND_RETURN_AND_MSG_OUTER(
        stm->IsCapturing(), RT_ERROR_STREAM_CAPTURED, ErrorCode::EE1016, "Stream destruction",
        RtFmtMsg("Stream (stream_id=%d) during the capture stage is not supported", stm->Id_()));

    return impl_->StreamDestroy(stm, flag);
}

rtError_t ApiErrorDecorator::StreamWaitEvent(
    Stream* const stm, Event* const evt, const uint32_t timeout, const uint32_t flag)
{
    NULL_PTR_RETURN_MSG_OUTER_WITH_FUNC_DESC(evt, RT_ERROR_INVALID_VALUE, "Triggering event waiting");
    COND_RETURN_AND_MSG_OUTER_WITH_PARAM_AND_FUNC_DESC(
        ((flag != RT_EVENT_WAIT_DEFAULT) && (flag != RT_EVENT_WAIT_EXTERNAL)), RT_ERROR_INVALID_VALUE,
        "Triggering event waiting", flag, "ACL_EVENT_WAIT_DEFAULT(0) or ACL_EVENT_WAIT_EXTERNAL(1)");
    COND_RETURN_AND_MSG_OUTER(
        ((evt->GetEventFlag() == static_cast<uint32_t>(RT_EVENT_MC2)) ||
         (((evt->GetEventFlag() & static_cast<uint32_t>(RT_EVENT_MC2)) != 0U) &&
