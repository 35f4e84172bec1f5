}

rtError_t Runtime::BinaryGetFunction(
    const Program* const prog, const uint64_t tilingKey, Kernel** const funcHandle) const
{
    Program* const progTmp = const_cast<Program*>(prog);
    const Kernel* kernel = progTmp->GetKernelByTillingKey(tilingKey);
    COND_RETURN_ERROR_MSG_INNER(
        kernel == nullptr, RT_ERROR_KERNEL_NULL, "Cannot find kernel by tilingKey[%" PRIu64 "].", tilingKey);
    *funcHandle = const_cast<Kernel*>(kernel);
    return RT_ERROR_NONE;
